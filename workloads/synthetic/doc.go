// Package synthetic generates seeded synthetic agent workloads as canonical
// traces (package sim/trace): coder, researcher, log-analyzer, chat, needle
// and burst (DESIGN.md §7).
//
// Each workload is parameterised by a TOML file; the defaults are embedded
// (defaults/<name>.toml, see Defaults) and a user's file overlays them, setting
// only the keys it changes. Decoding is strict: an unknown key, a wrong type or
// a value out of range is a *ParamsError with the file, line and key. Lists
// (stages, depths) are replaced as a whole. Sizes, think times, tool latencies
// and output lengths are log-normal (LogNormal: median, sigma, clamp). Scale
// multiplies the amount of work so one file serves windows from 8K to 2M.
//
// The content is realistic text built from fixed vocabularies: Go-like source
// files with line numbers, grep and test output, structured log lines and
// aggregations, web pages and search results, conversation. Facts are
// distinctive strings ("ERR-7731 in billing/ledger.go:412", "the deploy key
// rotates on Thursdays", "settlementRetryLimit = 4417") planted verbatim in the
// content and listed on the event that carries them; a fact met again (a file
// read twice) keeps its first event as its source. The task event comes first
// and carries the whole task as fact "task" plus the constraints it states;
// with system_bytes set, a system event (the tools' schemas and standing rules)
// follows it.
//
// Probes ask, at the next inference, whether an earlier fact is still in
// context: mid-run rounds pick facts at ages spread log-evenly from the newest
// to the oldest, and a final round asks for the task's facts and more. Each
// probe carries the tool call that would fetch its fact again (Refetch), or nil
// for what cannot be fetched (the task, a user's words, notes and fan-out
// findings). Probes are always followed by an assistant event.
//
// Stage workloads follow the blueprints in blueprints/leviath: coder
// (discover, plan, implement, review, summary), researcher (deep-researcher:
// gather, investigate, analyze, follow_citations, analyze, synthesize,
// summary) and log-analyzer (ingest, split_logs, analyze, script, analyze,
// report, summary). A stage event names the stage entered and the blueprint
// transition that enters it; the first stage event (the blueprint's entry
// stage) and the merge stage after a fan-out stage carry no transition. A
// fan-out stage makes no tool calls: its workers' findings arrive as
// context_append ops on its results region. Notes the agent takes at a stage's
// end are context ops (context_write, context_append) with args
// {"region", "content"}.
//
// A stage's turns usually make one tool call; parallel_share of them batch 2
// to 4 calls of one tool, whose results follow the turn in call order.
// error_share of calls fail: the result is a short error (IsError) without the
// content or its facts.
//
// Time is virtual: a tool result's Latency is the tool's execution time, a
// user turn's is the think time, and an assistant event advances the clock by
// a nominal 1 s + output tokens / 80 (the simulator models inference itself);
// the calls of one turn run in parallel, each result arriving its latency
// after the turn.
// Generation is deterministic: the same parameters and seed give the same
// events, byte for byte.
package synthetic

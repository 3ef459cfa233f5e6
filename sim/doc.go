// Package sim is ctxsim's discrete-event core: a virtual clock and event
// queue, the agent loop that replays a canonical trace through one context
// policy, model profiles, tokenizers, provider prompt-cache models and the
// meters whose definitions every report shares.
//
// # One run
//
// Run replays a Source (a *trace.Reader, SliceSource or BuiltinWorkload)
// through the policy of a Config on a model Profile at a window:
//
//	prof, _ := sim.LookupProfile("claude-sonnet-5.5")
//	res, err := sim.Run(ctx, trace.NewReader(f, name), sim.Config{
//		Policy: "flat-compact(threshold=150000)", Model: prof, Window: 200000, Seed: 1,
//	})
//	recall := res.Metrics.Get("fact_recall_pct")
//
// Each assistant event is preceded by an inference: the policy builds the
// request it would send, the meters measure it, and the clock advances by the
// modelled latency (base time to first token, uncached prefill tokens ÷
// prefill speed, output ÷ decode speed). Other events wait in a heap queue
// (ties in insertion order) until their virtual time: tool results after
// their tool latency from the inference that called them, user turns after
// their think time. Probes are asked at the next inference. Closed loop: a
// probe that misses a fact from a tool result makes the agent re-issue that
// call (an extra request; the result's tokens are refetch waste); a miss on a
// fact it cannot fetch again is a lost fact. Config.NoRefetch switches the
// loop off.
//
// # Policies
//
// ParsePolicy reads "name" or "name(key=value,...)"; Policies lists the names:
//
//   - flat: one list; the oldest messages drop when the request would not fit
//     the window minus the reply reserve (reserve = min(20K, max output,
//     window/4); Claude Code reserves up to 20K).
//   - flat-keep-system: flat with the system prompt and task kept (LangChain
//     trimMessages, strategy "last", includeSystem).
//   - flat-compact(threshold, keep, summary): summarised when the request
//     crosses threshold (default window − reserve − 13K, Claude Code's auto-compact;
//     Anthropic's server compaction is threshold=150000), keeping the last
//     keep=3 messages (MemGPT's keep-last) and a summary of at most
//     summary=2000 tokens (the reference runtime's max_summary_tokens). The
//     summary is the engine's extractive one (decision D9) of the same text
//     the region policy would give the engine (elided content as its
//     stand-in), so a fact survives it only when its line is kept. The
//     summariser's calls are charged to cost and time.
//   - flat-clear-tools(trigger, keep): past trigger input tokens (default
//     100K, Anthropic clear_tool_uses, capped at the usable window) old tool
//     results become a placeholder, keeping the last keep=3.
//   - regions:<blueprint>: the region engine running an embedded blueprint
//     (blueprints.Names) or an agent.leviath path: tool results routed by the
//     stage's routing, context_op events run as context tools, stage events
//     taken as transitions (or entered directly), the engine's evictions,
//     compactions and summariser calls counted (the calls as cost and time).
//     The engine counts tokens as the reference runtime does (bytes/4); the
//     simulator measures its requests with the profile's tokenizer. Elided
//     content reaches the engine as a stand-in of the same size with its
//     facts verbatim in the middle. The trace's system prompt (and tool
//     schemas) is sent ahead of the regions, and the engine gets the rest of
//     the window; a blueprint that takes no task gets the task as the first
//     user message (with a warning).
//   - as-recorded: the recorded agent's own requests (usage.request), or its
//     messages with its recorded compactions applied.
//   - unbounded: never evicts. clairvoyant: Bélády at the same window (evict
//     the content whose next probe is furthest; it reads the whole trace
//     first).
//
// # Measuring
//
// Fact presence: a fact is present when a block lists it (elided content
// carries its facts) or its text occurs verbatim within one block, summaries
// included (DESIGN.md's "in any block": a text split across two blocks is a
// miss); each block is searched for a fact once while it stays in the
// context. Dead waste is counted per block over the requests it was in since
// the last probe that used its content (the probe's source, the blocks
// listing its fact, and the block it was found in), so it needs no
// look-ahead; the task's tokens are never dead, in whatever block they
// travel. The re-prefill of content that turns out dead is counted as dead,
// so the three waste parts are disjoint and waste_pct is their sum.
// Re-prefill counts every sent-before token the cache did not read (writes
// included, as they are prefilled again), and the previous version of a
// region's grown chunk as sent before. Refetch waste counts the refetched
// results and re-issued calls in every request that carries them. Time to
// first token prefills everything not read from the cache. The p10 is the
// nearest-rank percentile; input growth compares quarters of ⌊n/4⌋ requests
// (at least one). Task retention judges the requests sent once the task has
// arrived (an earlier request cannot have lost it). With no requests (or no
// probes) a share is NaN, null in JSON. Lost facts are
// distinct facts missed and not fetched again. Result.RecallByDepth gives
// fact recall by depth (tokens that entered the context after the fact).
// Per-pair prefix stability and request sizes are kept (a few bytes per
// request) for the percentile and the growth ratio; everything else per
// request is streamed to Config.Series.
//
// Every request is a list of Blocks (content with tokens and a hash counted
// once) plus cache breakpoints. The common prefix with the previous request
// is found block by block by hash, looking at tokens only inside the first
// differing block. The cache models (CacheKind) follow the provider rules of
// spec/PEERS.md §A. MetricDefs lists every metric with its unit, direction
// and exact definition (DESIGN.md §6); Metrics marshals to {key: value} in
// that order. SeriesSink streams per-request samples for figures.
package sim

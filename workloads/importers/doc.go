// Package importers turns sessions recorded from real agents into the
// canonical trace of sim/trace (DESIGN.md §2, §7; spec/TRACES.md).
//
// Formats: Claude Code session JSONL, Codex CLI rollouts (current and
// legacy), OpenHands V1 events.json (+ state.json), SWE-agent trajectories
// (0.x, 1.0, 1.1), claude-trace Anthropic API logs, Aider chat histories, an
// OpenAI Chat Completions message list and an Anthropic Messages
// request/response pair. Detect tells them apart from a file's name and first
// bytes; Import streams JSON Lines formats line by line.
//
// Every importer emits the same shapes: a task event for the first real user
// message, system events for system prompts and tool schemas where recorded,
// a usage event before the assistant event it belongs to (prompt = uncached +
// cache read + cache write, whatever the provider's convention), tool results
// under canonical tool names (ToolMap, extensible in TOML) with the agent's
// own name kept in RawTool, compaction events where the agent compacted,
// times in seconds since the session start, and derived reference-recall
// probes (package probes). Secrets are masked by default (package redact)
// without changing any length.
//
// Lenient mode skips a bad line with a warning that names the file and line
// (a *trace.ParseError); Options.Strict stops there.
package importers

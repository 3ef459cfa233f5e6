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
// System prompt and tool schemas. They occupy the window before the first
// message, so every format carries them: as system events with their text
// where the recording has them (claude-trace request bodies: each system
// block and the tool list; an Anthropic Messages request; OpenAI system and
// developer messages; SWE-agent history; OpenHands SystemPromptEvent prompt
// and tools; Codex session_meta instructions). Claude Code session files and
// Aider histories do not record them; for these the importer estimates them
// from the first usage record of the main agent: its recorded prompt tokens
// (uncached + cache read + cache write) less the tokens of the content that
// request visibly carried (the task, injected notices, anything before it),
// counted at 4 bytes per token. The result is the trace's first event, a
// system event of elided content whose Size is that many tokens times 4
// bytes (the density the simulator's tokenizers charge elided content), with
// id "e0"; the header Meta records it (system_estimated_tokens, and
// system_estimate_basis with the figures used). The estimate also takes in
// whatever else the first request carried unrecorded (Claude Code's
// environment block, CLAUDE.md; a compaction side-conversation's history;
// Aider's repo map and added files). Without a main-agent usage record (a
// subagent's does not count) there is no estimate and no such event. Events
// before the first usage record are held back to put the estimate first:
// at most 4096 of them, after which the import goes on without it.
//
// Lenient mode skips a bad line with a warning that names the file and line
// (a *trace.ParseError); Options.Strict stops there.
package importers

// Package engine is the structured-context region engine: it loads and
// validates agent blueprints (agent.leviath TOML), resolves region budgets
// against a model window, accepts writes into regions of the nine kinds,
// routes tool results, runs the context tools, evicts and compacts by kind,
// and assembles the request an agent would send.
//
// Behaviour follows the seed documents, then the reference runtime as read in
// spec/ENGINE.md, with the decisions D1–D11 listed there. The engine knows
// nothing of the simulator.
//
// Loading and validation:
//
//	bp, err := engine.LoadBlueprint("agent.leviath")
//	rep := bp.Validate(200_000)          // Report{Errors, Lints}
//	regs, err := bp.Regions("", 200_000)  // resolved budgets, declared order
//
// A live context window for one agent run:
//
//	c, err := engine.New(bp, engine.Options{Window: 200_000, Task: "fix the bug"})
//	c.AddUser("…")
//	c.AddAssistant("", []engine.ToolCall{{ID: "t1", Name: "read_file", Args: args}})
//	routed, err := c.AddToolResult(engine.ToolResult{CallID: "t1", Tool: "read_file", Content: text})
//	req := c.Assemble() // System blocks and Messages, each with region, tokens, cache hint, hash
//	events := c.Drain() // evictions, compactions, summariser calls, warnings, drops
//
// The window-level eviction cascade runs inside Assemble whenever usage
// (plus the calibration gap recorded by ObserveUsage) reaches the trigger
// of Options.EvictAt, with or without a [compaction] table (decision D1).
// Summaries come from Options.Summarizer: the deterministic Extractive
// default, or HTTPSummarizer for an OpenAI-compatible endpoint.
//
// Custom regions run through a ScriptEngine (engine/rhai implements it):
// scripts are read at load, must stay inside the blueprint folder, and are
// compiled by New; the hooks exchange plain data (ScriptContext,
// ScriptEntry, ScriptRender).
//
// Assembly is incremental: each region keeps its rendered blocks, hashes and
// token counts, and only regions that changed since the last request are
// rendered again, from their first changed entry: an append extends a grows
// region's open last chunk (text and streaming hash) and rebuilds only a
// sliding window's last message and the new ones. When the oldest entries
// roll off, a one-block region copies the rest of its text in one piece and
// a grows region keeps its chunks from where the new cuts meet an old
// chunk start (the boundaries are those of a full render). A grows
// region's chunks share 64 KB slabs, and a sliding window keeps running
// sums of its messages, so that a request needing no stripping is finished
// without walking them. A request's System and Messages slices are
// reused from the next-but-one Assemble on (Request.Clone keeps one);
// consecutive requests may share block slices and text.
//
// Content may say "n bytes of filler" (FillerByte, which stands for elided
// content) in a few bytes: 0xFF, n in base 64 as continuation bytes, 0xFF
// (AppendFiller; n at least MinFillerRun, one encoding per n). Entries are
// made canonical (longer runs written out are encoded), so equal content
// hashes alike; lengths, cuts, previews, token counts (BytesPerFour) and
// summaries are those of the text written out, at a cost per run, not per
// byte. Requests carry the encoding; ExpandFiller writes it out, as
// summarisers other than Extractive, scripts, context_read and RegionText
// receive it.
//
// The Extractive summariser scores a line once per call; ASCII lines take
// one allocation-free pass, and its cost is linear in the content. Inside a
// Context it reads the entries directly (no joined copy), and a summary's
// entry keeps the scored lines pick made for it, so folding summaries into
// one scans none of them again.
package engine

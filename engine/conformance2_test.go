package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Assembly (11.45–11.50).
func TestAssembly(t *testing.T) {
	conv := "conversation = { kind = \"sliding_window\", max_items = 100, max_tokens = 10000 }\n"
	t.Run("11.45 breakpoint four from the end, Continue. after an assistant", func(t *testing.T) {
		c := newCtx(t, conv, Options{})
		for i := range 10 {
			if i%2 == 0 {
				c.AddUser(fmt.Sprintf("user %d", i))
			} else {
				c.AddAssistant(fmt.Sprintf("assistant %d", i), nil)
			}
		}
		req := c.Assemble()
		if len(req.Messages) != 11 || req.Messages[10].Blocks[0].Text != "Continue." {
			t.Fatalf("%d messages", len(req.Messages))
		}
		for i, m := range req.Messages {
			if m.Breakpoint != (i == 6) {
				t.Errorf("message %d breakpoint %v", i, m.Breakpoint)
			}
		}
	})
	t.Run("11.45 three messages: breakpoint on the first; one: none", func(t *testing.T) {
		c := newCtx(t, conv, Options{})
		c.AddUser("a")
		c.AddAssistant("b", nil)
		c.AddUser("c")
		if req := c.Assemble(); !req.Messages[0].Breakpoint {
			t.Fatal("no breakpoint on message 0")
		}
		c2 := newCtx(t, conv, Options{})
		c2.AddUser("only")
		if req := c2.Assemble(); req.Messages[0].Breakpoint {
			t.Fatal("breakpoint on a single message")
		}
	})
	t.Run("11.46 blank user entries are dropped; nothing left gives Begin.", func(t *testing.T) {
		c := newCtx(t, conv, Options{})
		c.AddUser("find the conflicts")
		c.AddUser("")
		c.AddUser("   \n  ")
		if req := c.Assemble(); len(req.Messages) != 1 || req.Messages[0].Blocks[0].Text != "find the conflicts" {
			t.Fatalf("%+v", req.Messages)
		}
		c2 := newCtx(t, conv, Options{})
		c2.AddUser(" ")
		if req := c2.Assemble(); len(req.Messages) != 1 || req.Messages[0].Blocks[0].Text != "Begin." {
			t.Fatalf("%+v", req.Messages)
		}
	})
	t.Run("11.47 unpaired tool blocks are stripped", func(t *testing.T) {
		c := newCtx(t, conv, Options{})
		c.AddUser("go")
		c.AddAssistant("", []ToolCall{{ID: "lost", Name: "x"}})
		c.AddUser("next")
		mustAdd := func(e *entry) { c.write(c.byName["conversation"], e) }
		orphan := c.newEntry(EntryToolResult, "who called me")
		orphan.callID = "nobody"
		mustAdd(orphan)
		req := c.Assemble()
		for _, m := range req.Messages {
			for _, b := range m.Blocks {
				if b.Type != BlockText {
					t.Fatalf("unpaired %v block %s survived", b.Type, b.ToolCallID)
				}
			}
		}
	})
	t.Run("11.48 hashmap renders one block with headings", func(t *testing.T) {
		c := newCtx(t, "files = { kind = \"hashmap\" }\nempty = {}\n", Options{})
		call(t, c, "context_write", map[string]string{"region": "files", "key": "src/main.rs", "content": "fn main() {}"})
		call(t, c, "context_write", map[string]string{"region": "files", "key": "src/lib.rs", "content": "pub mod a;"})
		req := c.Assemble()
		if len(req.System) != 1 {
			t.Fatalf("%d blocks", len(req.System))
		}
		b := req.System[0]
		if b.Text != "[files]:\n### [src/main.rs]\nfn main() {}\n\n### [src/lib.rs]\npub mod a;" || b.Cache != CacheUntilChanged {
			t.Fatalf("%q %v", b.Text, b.Cache)
		}
	})
	t.Run("11.49 rewritten temporary is one Never block; grows is chunked", func(t *testing.T) {
		for _, vol := range []string{"rewritten", "grows"} {
			c := newCtx(t, fmt.Sprintf("corpus = { kind = \"temporary\", max_tokens = 50000, volatility = %q }\n", vol), Options{})
			for i := range 8 {
				mustWrite(t, c, "corpus", text(fmt.Sprint("e", i), 1000))
			}
			req := c.Assemble()
			if vol == "rewritten" {
				if len(req.System) != 1 || !strings.HasPrefix(req.System[0].Text, "[corpus]:\n") || req.System[0].Cache != CacheNever {
					t.Fatalf("%d blocks", len(req.System))
				}
				continue
			}
			if len(req.System) < 2 || !strings.HasPrefix(req.System[1].Text, "[corpus continued]:\n") {
				t.Fatalf("%d blocks", len(req.System))
			}
			for _, b := range req.System {
				if b.Cache != CacheUntilChanged {
					t.Fatalf("hint %v", b.Cache)
				}
			}
		}
	})
	t.Run("system blocks sort by volatility tier then cache hint", func(t *testing.T) {
		c := newCtx(t, "scratch = { kind = \"clearable\" }\nnotes = { kind = \"compacting\", volatility = \"stable\" }\nrules = { kind = \"pinned\" }\nfacts = { kind = \"pinned\", volatility = \"stable\" }\n", Options{})
		for _, r := range []string{"scratch", "notes", "rules", "facts"} {
			mustWrite(t, c, r, r+" text")
		}
		var order []string
		for _, b := range c.Assemble().System {
			order = append(order, b.Region)
		}
		if strings.Join(order, ",") != "facts,notes,rules,scratch" {
			t.Fatal(order)
		}
	})
	t.Run("a stable region that keeps changing warns once", func(t *testing.T) {
		c := newCtx(t, "facts = { kind = \"pinned\", volatility = \"stable\" }\n", Options{})
		warnings := 0
		for i := range 4 {
			mustWrite(t, c, "facts", fmt.Sprint("fact ", i))
			c.Assemble()
			for _, e := range c.Drain() {
				if e.Kind == EventWarning && e.Region == "facts" {
					warnings++
				}
			}
		}
		if warnings != 1 {
			t.Fatal(warnings)
		}
	})
	t.Run("RecentlyChanged retags the newest-changed tail", func(t *testing.T) {
		c := newCtx(t, "a = { kind = \"compacting\" }\nb = { kind = \"compacting\" }\n", Options{})
		mustWrite(t, c, "a", "one")
		mustWrite(t, c, "b", "two")
		mustWrite(t, c, "a", "three")
		req := c.Assemble()
		if req.System[0].Cache != CacheUntilChanged || req.System[1].Cache != CacheUntilChanged {
			t.Fatalf("newest block first: %v %v", req.System[0].Cache, req.System[1].Cache)
		}
		c2 := newCtx(t, "a = { kind = \"compacting\" }\nb = { kind = \"compacting\" }\n", Options{})
		mustWrite(t, c2, "a", "one")
		mustWrite(t, c2, "b", "two")
		req = c2.Assemble()
		if req.System[0].Cache != CacheUntilChanged || req.System[1].Cache != CacheRecentlyChanged {
			t.Fatalf("%v %v", req.System[0].Cache, req.System[1].Cache)
		}
	})
	t.Run("assembly is incremental: unchanged regions keep their blocks", func(t *testing.T) {
		c := newCtx(t, "big = { kind = \"pinned\", max_tokens = 50000, volatility = \"grows\" }\n"+conv, Options{})
		for i := range 10 {
			mustWrite(t, c, "big", text(fmt.Sprint("chunk", i), 1000))
		}
		first := c.Assemble()
		c.AddUser("hello")
		second := c.Assemble()
		if &first.System[0] != &second.System[0] {
			t.Fatal("system blocks re-rendered for a conversation change")
		}
		mustWrite(t, c, "big", text("more", 100))
		third := c.Assemble()
		if third.System[0].Text != first.System[0].Text || third.System[0].Hash != first.System[0].Hash {
			t.Fatal("an appended chunk changed an earlier chunk")
		}
		if &third.System[0] == &first.System[0] {
			t.Fatal("system slice shared after a change")
		}
		want := 0
		for _, b := range third.System {
			want += b.Tokens
		}
		for _, m := range third.Messages {
			want += m.Tokens()
		}
		if third.Tokens != want {
			t.Fatalf("request tokens %d, blocks sum to %d", third.Tokens, want)
		}
	})
}

// Stage instructions (11.50 and the seed's 2-not-65 table).
func TestStageInstructions(t *testing.T) {
	prompt := strings.Repeat("p", 63*4-len("[Stage instructions: ]"))
	stages := fmt.Sprintf("[stages.plan]\nsystem_prompt = %q\n[stages.plan.transitions.build]\n[stages.build]\nsystem_prompt = %q\n", prompt, strings.Replace(prompt, "p", "b", 1))
	regionsWith := "[context.regions]\nstage_instructions = { kind = \"pinned\", budget = \"3%\" }\ntask = { kind = \"pinned\", max_tokens = 1000 }\nrules = { kind = \"pinned\", volatility = \"stable\", seed = { literal = \"Never edit generated files.\" } }\n"
	regionsWithout := "[context.regions]\ntask = { kind = \"pinned\", max_tokens = 1000 }\n"
	build := func(regions string, legacy bool) *Context {
		bp := mustParse(t, "[agent]\n"+regions+stages)
		c, err := New(bp, Options{Window: 100_000, Task: "fix bug!", LegacyStageInstructions: legacy})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tokens := func(c *Context, name string) int { return c.byName[name].tokens }
	t.Run("seed table: with the declaration task holds 2 tokens", func(t *testing.T) {
		c := build(regionsWith, false)
		if tokens(c, "task") != 2 || tokens(c, "stage_instructions") != 63 {
			t.Fatalf("task %d, stage_instructions %d", tokens(c, "task"), tokens(c, "stage_instructions"))
		}
	})
	t.Run("seed table: without it the prompt lands in task (65)", func(t *testing.T) {
		c := build(regionsWithout, true)
		if tokens(c, "task") != 65 {
			t.Fatalf("task %d", tokens(c, "task"))
		}
		if err := c.Transition("build"); err != nil {
			t.Fatal(err)
		}
		if tokens(c, "task") != 65 || len(c.byName["task"].entries) != 2 {
			t.Fatal("previous stage's instructions not replaced")
		}
	})
	t.Run("11.50 stage_instructions is last and the prefix before it is byte-identical", func(t *testing.T) {
		c := build(regionsWith, false)
		before := c.Assemble()
		last := before.System[len(before.System)-1]
		if last.Region != StageInstructions {
			t.Fatalf("last block is %s", last.Region)
		}
		if err := c.Transition("build"); err != nil {
			t.Fatal(err)
		}
		after := c.Assemble()
		if len(after.System) != len(before.System) {
			t.Fatal("block count changed")
		}
		for i := 0; i < len(before.System)-1; i++ {
			if before.System[i].Hash != after.System[i].Hash {
				t.Fatalf("block %d (%s) changed across the stage change", i, before.System[i].Region)
			}
		}
		if len(c.byName[StageInstructions].entries) != 1 || !strings.Contains(after.System[len(after.System)-1].Text, "bpp") {
			t.Fatal("stage_instructions does not hold exactly the new prompt")
		}
	})
	t.Run("without a declaration the runtime creates stage_instructions", func(t *testing.T) {
		c := build(regionsWithout, false)
		if tokens(c, "task") != 2 || tokens(c, StageInstructions) != 63 {
			t.Fatalf("task %d", tokens(c, "task"))
		}
	})
	t.Run("a task with no region to take it is refused", func(t *testing.T) {
		bp := mustParse(t, "[agent]\n[context.regions]\ndiff = { kind = \"pinned\", seed = \"diff\" }\n")
		_, err := New(bp, Options{Window: 100_000, Task: "review"})
		if !errors.Is(err, ErrTaskNotAccepted) || !strings.Contains(err.Error(), "[diff]") {
			t.Fatal(err)
		}
	})
}

// Routing (11.51–11.56) and file tracking.
func TestRouting(t *testing.T) {
	bp := func(t *testing.T, routing string, regions string) *Context {
		b := mustParse(t, "[agent]\n[context.regions]\n"+regions+"[stages.work]\n"+routing)
		c, err := New(b, Options{Window: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	readCall := func(c *Context, id, tool, args string) {
		c.AddAssistant("", []ToolCall{{ID: id, Name: tool, Args: json.RawMessage(args)}})
	}
	regions := "codebase = { kind = \"compacting\", max_tokens = 20000 }\nscratch = { kind = \"clearable\" }\nconversation = { kind = \"sliding_window\", max_items = 50, max_tokens = 10000 }\n"
	t.Run("11.51 routed output lands in its region, a pointer in the conversation", func(t *testing.T) {
		c := bp(t, "[stages.work.tool_routing]\ndefault_region = \"conversation\"\n[stages.work.tool_routing.overrides]\nread_file = \"codebase\"\n", regions)
		readCall(c, "t1", "read_file", `{"path":"a.go"}`)
		body := strings.Repeat("x", 500)
		r, err := c.AddToolResult(ToolResult{CallID: "t1", Tool: "read_file", Content: body})
		if err != nil || r.Region != "codebase" || r.Outcome != RoutedWhole {
			t.Fatal(r, err)
		}
		if got := contents(c, "codebase"); len(got) != 1 || c.byName["codebase"].entries[0].content != body {
			t.Fatal("codebase does not hold the full text")
		}
		conv := c.byName["conversation"].entries
		ptr := conv[len(conv)-1]
		if ptr.kind != EntryToolResult || ptr.callID != "t1" || !strings.HasPrefix(ptr.content, "[output (125 tokens) is in your context under the 'codebase' heading") {
			t.Fatalf("%+v", ptr)
		}
		// 11.52: previews end with … when longer than 160 characters.
		if !strings.Contains(ptr.content, strings.Repeat("x", 160)+"…]") {
			t.Fatal("preview not cut at 160 characters")
		}
		uses, results := 0, 0
		for _, m := range c.Assemble().Messages {
			for _, b := range m.Blocks {
				if b.Type == BlockToolUse && b.ToolCallID == "t1" {
					uses++
				}
				if b.Type == BlockToolResult && b.ToolCallID == "t1" {
					results++
				}
			}
		}
		if uses != 1 || results != 1 {
			t.Fatalf("uses %d results %d", uses, results)
		}
	})
	t.Run("11.53 an override for bash covers shell", func(t *testing.T) {
		c := bp(t, "[stages.work.tool_routing]\ndefault_region = \"conversation\"\n[stages.work.tool_routing.overrides]\nbash = \"scratch\"\n", regions)
		readCall(c, "t1", "shell", `{}`)
		if r, _ := c.AddToolResult(ToolResult{CallID: "t1", Tool: "shell", Content: "ok"}); r.Region != "scratch" {
			t.Fatal(r.Region)
		}
	})
	t.Run("11.54 persist = false goes to scratch when it exists", func(t *testing.T) {
		c := bp(t, "[stages.work.tool_routing]\ndefault_region = \"codebase\"\npersist = false\n", regions)
		readCall(c, "t1", "grep", `{}`)
		if r, _ := c.AddToolResult(ToolResult{CallID: "t1", Tool: "grep", Content: "hit"}); r.Region != "scratch" {
			t.Fatal(r.Region)
		}
		c2 := bp(t, "[stages.work.tool_routing]\ndefault_region = \"codebase\"\npersist = false\n", "codebase = { kind = \"compacting\" }\n")
		readCall(c2, "t1", "grep", `{}`)
		if r, _ := c2.AddToolResult(ToolResult{CallID: "t1", Tool: "grep", Content: "hit"}); r.Region != "codebase" {
			t.Fatal(r.Region)
		}
	})
	t.Run("11.55 max_result_tokens truncates", func(t *testing.T) {
		c := bp(t, "[stages.work.tool_routing]\ndefault_region = \"conversation\"\nmax_result_tokens = 1\n", regions)
		readCall(c, "t1", "grep", `{}`)
		r, _ := c.AddToolResult(ToolResult{CallID: "t1", Tool: "grep", Content: strings.Repeat("y", 100)})
		if r.Tokens >= 25 || !strings.HasSuffix(c.byName["conversation"].entries[1].content, "\n[...truncated]") {
			t.Fatal(r.Tokens)
		}
	})
	t.Run("per-tool caps by canonical name; override caps win", func(t *testing.T) {
		c := bp(t, "[stages.work.tool_routing]\ndefault_region = \"conversation\"\nmax_result_tokens = 1000\n[stages.work.tool_routing.max_result_tokens_per_tool]\nbash = 2\n[stages.work.tool_routing.overrides]\nread_file = { region = \"codebase\", max_result_tokens = 3 }\n", regions)
		readCall(c, "t1", "shell", `{}`)
		if r, _ := c.AddToolResult(ToolResult{CallID: "t1", Tool: "shell", Content: strings.Repeat("y", 100)}); r.Tokens != 6 {
			t.Fatal(r.Tokens) // 8 chars + "\n[...truncated]"
		}
		readCall(c, "t2", "read_file", `{"path":"x"}`)
		if r, _ := c.AddToolResult(ToolResult{CallID: "t2", Tool: "read_file", Content: strings.Repeat("y", 100)}); r.Region != "codebase" || r.Tokens != 7 {
			t.Fatal(r)
		}
	})
	t.Run("11.56 a full conversation truncates a result rather than dropping it", func(t *testing.T) {
		c := bp(t, "", "conversation = { kind = \"sliding_window\", max_items = 50, max_tokens = 200, admission = \"reject\" }\n")
		mustWrite(t, c, "conversation", text("pre", 88))
		readCall(c, "t1", "grep", `{}`)
		r, err := c.AddToolResult(ToolResult{CallID: "t1", Tool: "grep", Content: strings.Repeat("z", 600)})
		cur := c.byName["conversation"].tokens
		if err != nil || r.Outcome != RoutedTruncated || cur <= 90 || cur > 200 {
			t.Fatal(r, err, cur)
		}
	})
	t.Run("no tool_routing table: results stay in the conversation", func(t *testing.T) {
		c := bp(t, "", regions)
		readCall(c, "t1", "read_file", `{}`)
		if r, _ := c.AddToolResult(ToolResult{CallID: "t1", Tool: "read_file", Content: "x"}); r.Region != "conversation" || r.Outcome != RoutedInline {
			t.Fatal(r)
		}
	})
	t.Run("read_file byte cap", func(t *testing.T) {
		c := bp(t, "", "conversation = { kind = \"sliding_window\", max_tokens = 200000 }\n")
		readCall(c, "t1", "read_file", `{}`)
		c.AddToolResult(ToolResult{CallID: "t1", Tool: "read_file", Content: strings.Repeat("a", MaxReadFileBytes+10)})
		got := c.byName["conversation"].entries[1].content
		if !strings.HasSuffix(got, "[truncated] The file is 262154 bytes; the first 262144 are shown. Read a range, or narrow with a search, rather than re-reading the whole file.") {
			t.Fatal(got[len(got)-100:])
		}
	})
	t.Run("a failed read of a region's name points at the region", func(t *testing.T) {
		c := bp(t, "", regions)
		readCall(c, "t1", "read_file", `{"path":"./codebase"}`)
		c.AddToolResult(ToolResult{CallID: "t1", Tool: "read_file", Content: "[error] no such file", IsError: true})
		got := c.byName["conversation"].entries[1].content
		if got != "[error] no such file\n'codebase' is a context region, not a file - its contents are already in this prompt, under the 'codebase' heading. Read them there rather than through a tool." {
			t.Fatal(got)
		}
	})
	t.Run("file tracking stores reads in the hashmap", func(t *testing.T) {
		b := mustParse(t, "[agent]\n[context.file_tracking]\n[context.regions]\nfiles = { kind = \"hashmap\" }\n")
		c, err := New(b, Options{Window: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		readCall(c, "t1", "read_file", `{"path":"src/a.go"}`)
		r, _ := c.AddToolResult(ToolResult{CallID: "t1", Tool: "read_file", Content: "package a"})
		want := "File stored in [files] → ### [src/a.go] (3 tokens). Reference it there; do not re-read this path."
		if !r.File || c.byName["conversation"].entries[1].content != want || c.byName["files"].indexOfKey("src/a.go") != 0 {
			t.Fatal(c.byName["conversation"].entries[1].content)
		}
	})
}

// Context tools (11.58, 11.59 and the result texts).
func TestContextTools(t *testing.T) {
	t.Run("11.58 reject region: full, release by key, retry", func(t *testing.T) {
		c := newCtx(t, "sources = { max_tokens = 200, admission = \"reject\" }\n", Options{})
		body := strings.Repeat("s", 600)
		if out := call(t, c, "context_append", map[string]string{"region": "sources", "key": "kept", "content": body}); out != "Stored in 'sources' section under key 'kept'." {
			t.Fatal(out)
		}
		out := call(t, c, "context_append", map[string]string{"region": "sources", "content": body})
		if !strings.HasPrefix(out, "[error]") || !strings.Contains(out, "full") || !strings.Contains(out, "release an entry") {
			t.Fatal(out)
		}
		call(t, c, "context_delete", map[string]string{"region": "sources", "key": "kept"})
		if out := call(t, c, "context_append", map[string]string{"region": "sources", "content": body}); out != "Stored in 'sources' section." {
			t.Fatal(out)
		}
	})
	t.Run("11.59 reject sliding window refuses by count", func(t *testing.T) {
		c := newCtx(t, "notes = { kind = \"sliding_window\", max_items = 2, admission = \"reject\" }\n", Options{})
		call(t, c, "context_append", map[string]string{"region": "notes", "content": "one"})
		call(t, c, "context_append", map[string]string{"region": "notes", "content": "two"})
		if out := call(t, c, "context_append", map[string]string{"region": "notes", "content": "three"}); !strings.Contains(out, "full") {
			t.Fatal(out)
		}
		if contents(c, "notes")[0] != "one" {
			t.Fatal("one was evicted")
		}
	})
	t.Run("result texts", func(t *testing.T) {
		c := newCtx(t, "notes = {}\nfiles = { kind = \"hashmap\" }\nhist = { kind = \"compact_history\" }\n", Options{})
		cases := []struct {
			tool string
			args map[string]any
			want string
		}{
			{"context_write", map[string]any{"region": "nope", "content": "x"}, "[error] Section 'nope' not found. Available sections: notes, files, tool_results, final_output"},
			{"context_write", map[string]any{"region": "files", "content": "x"}, "[error] HashMap regions require a 'key' argument"},
			{"context_read", map[string]any{"region": "notes"}, "Section 'notes' is empty."},
			{"context_write", map[string]any{"region": "notes", "content": "a"}, "Stored in 'notes' section."},
			{"context_write", map[string]any{"region": "notes", "content": "b"}, "Stored in 'notes' section."},
			{"context_read", map[string]any{"region": "notes"}, "b"},
			{"context_append", map[string]any{"region": "files", "key": "k", "content": "1"}, "Stored in 'files' section under key 'k'."},
			{"context_append", map[string]any{"region": "files", "key": "k", "content": "2"}, "Stored in 'files' section under key 'k'."},
			{"context_read", map[string]any{"region": "files", "key": "k"}, "1\n2"},
			{"context_read", map[string]any{"region": "files"}, "  k (1 tokens)"},
			{"context_list", map[string]any{"region": "notes"}, "  [0] (1 tokens)"},
			{"context_delete", map[string]any{"region": "notes"}, "[error] name what to release: 'key', 'index', or 'oldest'"},
			{"context_delete", map[string]any{"region": "notes", "oldest": 3}, "Released the 1 oldest entries from 'notes'."},
		}
		for _, cs := range cases {
			if out := call(t, c, cs.tool, cs.args); out != cs.want {
				t.Errorf("%s %v:\n got %q\nwant %q", cs.tool, cs.args, out, cs.want)
			}
		}
		if _, err := c.CallTool("rm_rf", nil); err == nil {
			t.Error("unknown tool accepted")
		}
	})
}

// Compaction decisions D2, D3, D9, D10 and stage layouts D11.
func TestCompactionDecisions(t *testing.T) {
	pair := "codebase = { kind = \"compacting\", max_tokens = 1000, threshold_tokens = 500 }\nhistory = { kind = \"compact_history\", source_region = \"codebase\", max_tokens = 300 }\n"
	t.Run("D2 compacting summarises at its threshold into the paired history", func(t *testing.T) {
		c := newCtx(t, pair, Options{})
		mustWrite(t, c, "codebase", "func ParseConfig reads config.toml\n"+text("a", 300))
		mustWrite(t, c, "codebase", text("b", 250)) // 300+250 > 500
		if got := contents(c, "codebase"); len(got) != 1 || got[0] != "b" {
			t.Fatalf("codebase %q", got)
		}
		h := contents(c, "history")
		if len(h) != 1 || !strings.Contains(h[0], "ParseConfig") {
			t.Fatalf("history %q", h)
		}
		checkInv(t, c)
	})
	t.Run("D2 unpaired: the summary stays as the first entry", func(t *testing.T) {
		c := newCtx(t, "codebase = { kind = \"compacting\", max_tokens = 1000, threshold_tokens = 500 }\n", Options{})
		mustWrite(t, c, "codebase", "func ParseConfig reads config.toml\n"+text("a", 300))
		mustWrite(t, c, "codebase", text("b", 250))
		got := contents(c, "codebase")
		if len(got) != 2 || !strings.HasPrefix(got[0], "[summary of codebase]") || got[1] != "b" {
			t.Fatalf("%q", got)
		}
	})
	t.Run("D3 a full history folds its summaries into one", func(t *testing.T) {
		c := newCtx(t, strings.Replace(pair, "max_tokens = 300", "max_tokens = 40", 1), Options{})
		for i := range 6 {
			mustWrite(t, c, "codebase", fmt.Sprintf("file_%d.go defines Handler%d\n", i, i)+text("x", 400))
		}
		evs := c.Drain()
		folded := false
		for _, e := range evs {
			folded = folded || e.Kind == EventRecompact
		}
		if !folded || len(c.byName["history"].entries) != 1 {
			t.Fatalf("folded %v, %d summaries", folded, len(c.byName["history"].entries))
		}
		checkInv(t, c)
	})
	t.Run("D9 a failing summariser leaves the region untouched", func(t *testing.T) {
		c := newCtx(t, pair, Options{Summarizer: failing{}})
		mustWrite(t, c, "codebase", text("a", 300))
		mustWrite(t, c, "codebase", text("b", 100))
		c.compact(c.byName["codebase"], "test")
		if len(c.byName["codebase"].entries) != 2 || len(c.byName["history"].entries) != 0 {
			t.Fatal("region changed")
		}
		found := false
		for _, e := range c.Drain() {
			found = found || (e.Kind == EventSummarize && strings.Contains(e.Message, "failed"))
		}
		if !found {
			t.Fatal("no event")
		}
	})
	t.Run("D9 the default summariser is deterministic and within budget", func(t *testing.T) {
		in := "Intro line\nsome filler\n\nerror: E42 in pkg/foo/bar.go\nwe decided to keep cache_v2\nmore filler text here\n"
		a, _ := Extractive{}.Summarize(SummaryRequest{Region: "r", Content: in, MaxTokens: 20})
		b, _ := Extractive{}.Summarize(SummaryRequest{Region: "r", Content: in, MaxTokens: 20})
		if a != b || estimateTokens(a) > 20 || !strings.Contains(a, "E42") {
			t.Fatalf("%q", a)
		}
	})
	t.Run("D10 a compact edge on an unpaired region keeps the summary", func(t *testing.T) {
		b := mustParse(t, "[agent]\n[context.regions]\nconversation = { kind = \"sliding_window\", max_tokens = 5000 }\n[stages.a.transitions.b]\ntransform = \"compact\"\n[stages.b]\n")
		c, err := New(b, Options{Window: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		c.AddUser("the deploy failed with error E42")
		c.AddAssistant("I will roll back release_7", nil)
		if err := c.Transition("b"); err != nil {
			t.Fatal(err)
		}
		got := contents(c, "conversation")
		if len(got) != 1 || !strings.Contains(got[0], "E42") {
			t.Fatalf("%q", got)
		}
	})
	t.Run("11.62 clear edge wipes stage-specific regions, keeps pinned", func(t *testing.T) {
		b := mustParse(t, "[agent]\n[context.regions]\np = { kind = \"pinned\" }\nt = {}\n[stages.a.transitions.b]\ntransform = \"clear\"\n[stages.b]\n")
		c, _ := New(b, Options{Window: 100_000})
		mustWrite(t, c, "p", "keep")
		mustWrite(t, c, "t", "drop")
		c.Transition("b")
		if len(c.byName["p"].entries) != 1 || len(c.byName["t"].entries) != 0 {
			t.Fatal("clear edge")
		}
	})
	t.Run("11.62 custom edge: carry wins over clear and compact", func(t *testing.T) {
		b := mustParse(t, "[agent]\n[context.regions]\nkeep = {}\ndrop = {}\nscratch = {}\n[stages.a.transitions.b]\ntransform = \"custom\"\n[stages.a.transitions.b.transform_config]\ncarry = [\"keep\"]\ncompact = [\"scratch\", \"keep\", \"ghost\"]\nclear = [\"drop\", \"keep\", \"missing\"]\n[stages.b]\n")
		c, _ := New(b, Options{Window: 100_000})
		for _, r := range []string{"keep", "drop", "scratch"} {
			mustWrite(t, c, r, r+" content line")
		}
		c.Transition("b")
		if got := contents(c, "keep"); got[0] != "keep content line" || len(c.byName["drop"].entries) != 0 || !strings.HasPrefix(contents(c, "scratch")[0], "[summary of scratch]") {
			t.Fatal(contents(c, "keep"), contents(c, "drop"), contents(c, "scratch"))
		}
	})
	t.Run("D11 a shrinking stage layout keeps the newest entries", func(t *testing.T) {
		b := mustParse(t, "[agent]\n[context.regions]\nnotes = { max_tokens = 1000 }\nother = {}\n[stages.a.transitions.b]\n[stages.b.context.regions]\nnotes = { max_tokens = 100 }\n")
		c, _ := New(b, Options{Window: 100_000})
		for _, s := range []string{"old", "mid", "new"} {
			mustWrite(t, c, "notes", text(s, 45))
		}
		mustWrite(t, c, "other", "x")
		c.Transition("b")
		if got := contents(c, "notes"); strings.Join(got, ",") != "mid,new" {
			t.Fatal(got)
		}
		if !c.byName["other"].hidden || c.byName["conversation"].hidden {
			t.Fatal("hidden set wrong")
		}
		for _, blk := range c.Assemble().System {
			if blk.Region == "other" {
				t.Fatal("hidden region assembled")
			}
		}
		checkInv(t, c)
	})
	t.Run("D11 pinned content that no longer fits is an error naming the region", func(t *testing.T) {
		b := mustParse(t, "[agent]\n[context.regions]\nfacts = { kind = \"pinned\", max_tokens = 1000 }\n[stages.a.transitions.b]\n[stages.b.context.regions]\nfacts = { kind = \"pinned\", max_tokens = 10 }\n")
		c, _ := New(b, Options{Window: 100_000})
		mustWrite(t, c, "facts", text("f", 50))
		if err := c.Transition("b"); err == nil || !strings.Contains(err.Error(), "'facts'") {
			t.Fatal(err)
		}
	})
	t.Run("checklist gate holds, nudges, then is forced", func(t *testing.T) {
		b := mustParse(t, "[agent]\n[context.regions]\ntodos = { kind = \"checklist\" }\n[stages.a.transitions.b]\ngate = { require_no_open_items = \"todos\", max_attempts = 2 }\n[stages.b]\n")
		c, _ := New(b, Options{Window: 100_000})
		call(t, c, "todo_add", map[string]string{"region": "todos", "item": "write tests"})
		var ge *GateError
		for i := 0; i < 2; i++ {
			if err := c.Transition("b"); !errors.As(err, &ge) {
				t.Fatalf("attempt %d: %v", i, err)
			}
		}
		if ge.Nudge != "1 item(s) are still open in `todos`: 1 write tests. Finish them, or use todo_done to drop the ones that no longer apply, before moving on." {
			t.Fatal(ge.Nudge)
		}
		if err := c.Transition("b"); err != nil || c.Stage() != "b" {
			t.Fatal("gate not forced after max_attempts", err)
		}
	})
	t.Run("required regions nudge with the default message", func(t *testing.T) {
		b := mustParse(t, "[agent]\n[context.regions]\nplan = { kind = \"pinned\", required = true }\n[stages.s]\navailable_tools = [\"context_write\"]\n")
		c, _ := New(b, Options{Window: 100_000})
		want := "Required context region 'plan' is still empty. You must populate it (e.g. via context_write with region=\"plan\") before this stage can complete."
		if n := c.RequiredNudges(); len(n) != 1 || n[0] != want {
			t.Fatal(n)
		}
	})
}

type failing struct{}

func (failing) Summarize(SummaryRequest) (string, error) { return "", errors.New("model unavailable") }

func TestCalibration(t *testing.T) {
	t.Run("calibration keeps the high-water mark of the gap", func(t *testing.T) {
		c := newCtx(t, "t = {}\n", Options{})
		c.ObserveUsage(29491, 32497)
		if c.Shortfall() != 3006 {
			t.Fatal(c.Shortfall())
		}
		c.ObserveUsage(10000, 6000)
		c.ObserveUsage(10000, 0)
		if c.Shortfall() != 3006 {
			t.Fatal(c.Shortfall())
		}
	})
	t.Run("the shortfall counts toward the eviction trigger", func(t *testing.T) {
		c := newCtx(t, "scratch = { kind = \"clearable\", max_tokens = 9000 }\n", Options{Window: 10000})
		mustWrite(t, c, "scratch", text("s", 8000))
		c.Assemble()
		if c.Tokens() != 8000 {
			t.Fatal("evicted below the trigger")
		}
		c.ObserveUsage(8000, 9000)
		c.Assemble()
		if c.Tokens() != 0 {
			t.Fatal("calibrated usage at 90% did not evict")
		}
	})
}

package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/engine/rhai"
)

// The seed 001 brain region, end to end through the real Rhai engine.
func TestSeed001BrainRegion(t *testing.T) {
	bp, err := engine.LoadBlueprint("testdata/brain/agent.leviath")
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := rhai.NewEngine(rhai.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.New(bp, engine.Options{Window: 100_000, Task: "watch the build", Scripts: scripts})
	if err != nil {
		t.Fatal(err)
	}
	c.AddUser("go")
	c.AddAssistant("", []engine.ToolCall{{ID: "a", Name: "bash", Args: json.RawMessage(`{}`)}, {ID: "b", Name: "bash", Args: json.RawMessage(`{}`)}})
	if _, err := c.AddToolResult(engine.ToolResult{CallID: "a", Tool: "bash", Content: "ok: built\nline two\nline three"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddToolResult(engine.ToolResult{CallID: "b", Tool: "bash", Content: "ERROR: test failed\ndetails"}); err != nil {
		t.Fatal(err)
	}
	got, _ := c.RegionText("brain")
	// Routed output is a tool_result entry, so on_write trims the success
	// to its first line; the render wraps every entry as an event in one
	// user message.
	if !strings.Contains(got, "ERROR: test failed") {
		t.Fatalf("brain holds %q", got)
	}
	req := c.Assemble()
	first := req.Messages[0].Blocks[0].Text
	if first != "<context><event kind=\"tool_result\">ok: built</event><event kind=\"tool_result\">ERROR: test failed\ndetails</event></context>" {
		t.Fatalf("preamble message %q", first)
	}
	// Overflow: on_overflow drops the successes first, so the error survives.
	for i := range 4 {
		id := string(rune('c' + i))
		c.AddAssistant("", []engine.ToolCall{{ID: id, Name: "bash", Args: json.RawMessage(`{}`)}})
		if _, err := c.AddToolResult(engine.ToolResult{CallID: id, Tool: "bash", Content: "ok: step " + id + strings.Repeat(" .", 20)}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = c.RegionText("brain")
	if !strings.Contains(got, "ERROR: test failed") || strings.Contains(got, "ok: built") {
		t.Fatalf("after overflow brain holds %q", got)
	}
	if err := c.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Drain() {
		if e.Kind == engine.EventWarning && e.Region == "brain" {
			t.Errorf("warning from the brain region: %s", e.Message)
		}
	}
}

// customAgent writes a one-custom-region blueprint around script (its
// max_tokens budget is maxTokens) into a temporary directory and starts a
// window on it with the real Rhai engine. Routed tool results go to "brain".
func customAgent(t *testing.T, script []byte, maxTokens int) *engine.Context {
	t.Helper()
	dir := t.TempDir()
	bp := fmt.Sprintf(`[agent]
name = "custom"

[context.regions]
task = { kind = "pinned", budget = "2%%" }
brain = { kind = "custom", script = "context_hooks/brain.rhai", max_tokens = %d }
conversation = { kind = "sliding_window", max_items = 20, budget = "10%%" }

[stages.work.tool_routing]
default_region = "brain"
`, maxTokens)
	if err := os.MkdirAll(filepath.Join(dir, "context_hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.leviath"), []byte(bp), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "context_hooks", "brain.rhai"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := engine.LoadBlueprint(filepath.Join(dir, "agent.leviath"))
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := rhai.NewEngine(rhai.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.New(b, engine.Options{Window: 100_000, Task: "watch the build", Scripts: scripts})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func warningsFor(events []engine.Event, region string) []string {
	var out []string
	for _, e := range events {
		if e.Kind == engine.EventWarning && e.Region == region {
			out = append(out, e.Message)
		}
	}
	return out
}

// Seed 001: print and debug are captured as warnings, never written to a
// terminal; each line is one warning event naming the region and hook.
func TestCustomRegionOutputBecomesWarnings(t *testing.T) {
	script := []byte(`
fn render(ctx) { print("entries: " + ctx.entries.len()); "" }
fn on_write(ctx) { debug(ctx.entry.kind); () }
fn on_overflow(ctx) { print("need " + ctx.needed_tokens); [] }
`)
	tests := []struct {
		name string
		do   func(t *testing.T, c *engine.Context)
		want []string
	}{
		{"render", func(t *testing.T, c *engine.Context) { c.Assemble() },
			[]string{"script output: render print (line 2, column 18): entries: 0"}},
		{"render twice", func(t *testing.T, c *engine.Context) { c.Assemble(); c.Assemble() },
			[]string{"script output: render print (line 2, column 18): entries: 0", "script output: render print (line 2, column 18): entries: 0"}},
		{"on_write", func(t *testing.T, c *engine.Context) {
			if err := c.Write("brain", "a note"); err != nil {
				t.Fatal(err)
			}
		}, []string{`script output: on_write debug (line 3, column 20): "text"`}},
		{"on_overflow", func(t *testing.T, c *engine.Context) {
			for i := range 3 {
				if err := c.Write("brain", fmt.Sprintf("note %d %s", i, strings.Repeat("word ", 12))); err != nil {
					t.Fatal(err)
				}
			}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := customAgent(t, script, 40)
			tt.do(t, c)
			got := warningsFor(c.Drain(), "brain")
			if tt.want == nil {
				// Overflow: every hook's output is there, on_overflow's too.
				var hooks []string
				for _, w := range got {
					hooks = append(hooks, strings.Fields(w)[2])
				}
				if !slices.Contains(hooks, "on_overflow") || !slices.Contains(hooks, "on_write") {
					t.Fatalf("warnings %q: want on_write and on_overflow output", got)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("warnings\n%q\nwant\n%q", got, tt.want)
			}
			if again := warningsFor(c.Drain(), "brain"); len(again) != 0 {
				t.Fatalf("output reported twice: %q", again)
			}
		})
	}
}

// A tool result routed into a custom region reaches its hooks, and its
// render, as a tool_result entry: seed 001's brain.rhai keeps an error
// verbatim and trims a success to its first line.
func TestRoutedResultIsToolResultInCustomRegion(t *testing.T) {
	brain, err := os.ReadFile("rhai/testdata/brain.rhai")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		result  engine.ToolResult
		want    string // the entry as stored and rendered
		notWant string
	}{
		{"success is trimmed", engine.ToolResult{CallID: "a", Tool: "bash", Content: "ok: built\nline two\nline three"},
			`<event kind="tool_result">ok: built</event>`, "line two"},
		{"error is kept verbatim", engine.ToolResult{CallID: "a", Tool: "bash", Content: "ERROR: test failed\ndetails", IsError: true},
			"<event kind=\"tool_result\">ERROR: test failed\ndetails</event>", "\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := customAgent(t, brain, 200)
			c.AddUser("go")
			if err := c.AddAssistant("", []engine.ToolCall{{ID: "a", Name: "bash", Args: json.RawMessage(`{}`)}}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.AddToolResult(tt.result); err != nil {
				t.Fatal(err)
			}
			req := c.Assemble()
			got := req.Messages[0].Blocks[0].Text
			if !strings.Contains(got, tt.want) || strings.Contains(got, tt.notWant) {
				t.Fatalf("render %q: want %q without %q", got, tt.want, tt.notWant)
			}
			if w := warningsFor(c.Drain(), "brain"); len(w) > 0 {
				t.Fatalf("warnings: %q", w)
			}
		})
	}

	t.Run("render sees the result's fields", func(t *testing.T) {
		c := customAgent(t, []byte("fn render(ctx) { ctx.entries.map(|e| `${e.kind} ${e.tool_name} ${e.tool_call_id} ${e.is_error}`).join(\"|\") }"), 200)
		if err := c.AddAssistant("", []engine.ToolCall{{ID: "x1", Name: "bash", Args: json.RawMessage(`{}`)}, {ID: "x2", Name: "grep", Args: json.RawMessage(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		for _, tr := range []engine.ToolResult{{CallID: "x1", Tool: "bash", Content: "fine"}, {CallID: "x2", Tool: "grep", Content: "ERROR", IsError: true}} {
			if _, err := c.AddToolResult(tr); err != nil {
				t.Fatal(err)
			}
		}
		var sys []string
		for _, b := range c.Assemble().System {
			if b.Region == "brain" {
				sys = append(sys, b.Text)
			}
		}
		want := "tool_result bash x1 false|tool_result grep x2 true"
		if len(sys) != 1 || sys[0] != want {
			t.Fatalf("brain renders %q, want %q", sys, want)
		}
	})
}

// A render over the region's budget warns once per distinct render, not at
// every assembly that re-sends it.
func TestOverBudgetRenderWarnsOncePerRender(t *testing.T) {
	script := []byte("fn render(ctx) { let s = \"\"; for i in 0..60 { s += \"word \"; } for e in ctx.entries { s += e.content; } s }")
	c := customAgent(t, script, 20)
	count := func() int {
		n := 0
		for _, w := range warningsFor(c.Drain(), "brain") {
			if strings.Contains(w, "over the region's budget") {
				n++
			}
		}
		return n
	}
	steps := []struct {
		name string
		do   func()
		want int
	}{
		{"first assembly warns", func() { c.Assemble() }, 1},
		{"same render again is quiet", func() { c.Assemble(); c.Assemble(); c.Assemble() }, 0},
		{"a changed render warns", func() {
			if err := c.Write("brain", "new"); err != nil {
				t.Fatal(err)
			}
			c.Assemble()
			c.Assemble()
		}, 1},
	}
	for _, s := range steps {
		s.do()
		if got := count(); got != s.want {
			t.Fatalf("%s: %d over-budget warnings, want %d", s.name, got, s.want)
		}
	}
}

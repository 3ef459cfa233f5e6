package engine_test

import (
	"encoding/json"
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
	// Routed output is stored as text, so on_write keeps it whole; the
	// render wraps every entry as an event in one user message.
	if !strings.Contains(got, "ERROR: test failed") {
		t.Fatalf("brain holds %q", got)
	}
	req := c.Assemble()
	first := req.Messages[0].Blocks[0].Text
	if !strings.HasPrefix(first, `<context><event kind="text">ok: built`) || !strings.HasSuffix(first, "</event></context>") {
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

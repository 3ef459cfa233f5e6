package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/internal/golden"
)

// scriptedRun drives a blueprint through a fixed sequence of writes.
func scriptedRun(t testing.TB, bp *Blueprint, window int) string {
	t.Helper()
	opt := Options{Window: window, Inputs: map[string]string{"constraints": "Do not touch vendor/.", "scope": "last five years", "criteria": "correctness first"}}
	if strings.Contains(bp.Name, "reviewer") {
		opt.Inputs["diff"] = "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-old\n+new\n"
	} else {
		opt.Task = "Find why TestCheckout fails intermittently and fix it."
	}
	c, err := New(bp, opt)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	step := func(what string, err error) {
		var ge *GateError
		if errors.As(err, &ge) {
			fmt.Fprintf(&b, "# %s: gate held: %s\n", what, ge.Nudge)
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	step("user", c.AddUser("Please look at the repository and report what you find."))
	step("assistant", c.AddAssistant("Reading the entry point and running the tests.", []ToolCall{
		{ID: "call_1", Name: "read_file", Args: json.RawMessage(`{"path":"src/checkout.go"}`)},
		{ID: "call_2", Name: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`)},
		{ID: "call_3", Name: "web_fetch", Args: json.RawMessage(`{"url":"https://example.com/spec"}`)},
	}))
	var code strings.Builder
	for i := range 60 {
		fmt.Fprintf(&code, "func step%d(ctx context.Context) error { return checkout(ctx, %d) }\n", i, i)
	}
	for _, tr := range []ToolResult{
		{CallID: "call_1", Tool: "read_file", Content: code.String()},
		{CallID: "call_2", Tool: "bash", Content: "--- FAIL: TestCheckout (0.02s)\n    checkout_test.go:42: race on cart.total\nFAIL\n"},
		{CallID: "call_3", Tool: "web_fetch", Content: strings.Repeat("The spec says totals are computed once. ", 20)},
	} {
		r, err := c.AddToolResult(tr)
		step("tool "+tr.Tool, err)
		fmt.Fprintf(&b, "# routed %s -> %s (%v, %d tokens)\n", tr.Tool, r.Region, r.Outcome, r.Tokens)
	}
	for _, d := range bp.RegionDefs {
		if d.Kind == KindPinned && d.Seed == nil && d.Name != StageInstructions {
			out, err := c.CallTool("context_write", json.RawMessage(fmt.Sprintf(`{"region":%q,"content":"Noted: the race is on cart.total."}`, d.Name)))
			step("context_write", err)
			fmt.Fprintf(&b, "# context_write %s: %s\n", d.Name, out)
			break
		}
	}
	dump := func(label string) {
		req := c.Assemble()
		fmt.Fprintf(&b, "## %s (stage %s)\n", label, c.Stage())
		req.WriteText(&b)
		b.WriteString("## occupancy\n")
		for _, u := range c.Occupancy() {
			fmt.Fprintf(&b, "  %s %v %d/%d entries=%d hidden=%v\n", u.Name, u.Kind, u.Tokens, u.MaxTokens, u.Entries, u.Hidden)
		}
		b.WriteString("## events\n")
		for _, e := range c.Drain() {
			fmt.Fprintf(&b, "  %v region=%s tokens=%d entries=%d in=%d out=%d %s\n", e.Kind, e.Region, e.Tokens, e.Entries, e.InputTokens, e.OutputTokens, e.Message)
		}
	}
	dump("request 1")
	if s, ok := bp.Stage(c.Stage()); ok && len(s.Transitions) > 0 {
		step("transition "+s.Transitions[0].Target, c.Transition(s.Transitions[0].Target))
	}
	step("user", c.AddUser("Continue with the next step."))
	dump("request 2")
	if err := c.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestGoldenRequests(t *testing.T) {
	for _, path := range realBlueprintPaths(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".leviath")
		t.Run(name, func(t *testing.T) {
			bp, err := LoadBlueprint(path)
			if err != nil {
				t.Fatal(err)
			}
			got := scriptedRun(t, bp, 200_000)
			if again := scriptedRun(t, bp, 200_000); again != got {
				t.Fatal("the same run assembled different requests")
			}
			golden.Check(t, filepath.Join("testdata", "golden", name+".txt"), []byte(got), nil)
		})
	}
}

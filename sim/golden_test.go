package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ctxsim/ctxsim/internal/golden"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// The metrics of the built-in needle workload for every policy and two cache
// models are pinned in testdata/needle.golden.json: any change to a meter,
// policy or cache model shows up here. Refresh with go test -run Golden -update.
// (The region policy is left out: it follows the engine, which has its own
// golden tests.)
func TestGoldenNeedle(t *testing.T) {
	type cell struct {
		Policy  string  `json:"policy"`
		Model   string  `json:"model"`
		Window  int     `json:"window"`
		Metrics Metrics `json:"metrics"`
	}
	var cells []cell
	for _, model := range []string{"claude-sonnet-5.5", "gpt-5.5"} {
		prof, err := LookupProfile(model)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"flat", "flat-keep-system", "flat-compact", "flat-clear-tools", "as-recorded", "unbounded", "clairvoyant"} {
			for _, w := range []int{8192, 65536} {
				src, _ := BuiltinWorkload("needle", 1)
				res, err := Run(context.Background(), src, Config{Policy: p, Model: prof, Window: w, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				cells = append(cells, cell{p, model, w, res.Metrics})
			}
		}
	}
	got, err := json.MarshalIndent(cells, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "needle.golden.json"), append(got, '\n'), nil)
}

// as-recorded measures the exact recorded request when the trace has one.
func TestAsRecordedExactRequest(t *testing.T) {
	req := &trace.Request{
		System:   []trace.Block{{Type: "text", Text: text("sys", 100), Cache: "5m"}},
		Messages: []trace.Message{{Role: "user", Blocks: []trace.Block{{Type: "text", Text: text("hello", 50)}}}},
	}
	b := (&tb{}).task("t", 10).user("u", 10)
	b.add(trace.Event{Kind: trace.KindUsage, ID: "use1", Usage: &trace.Usage{Prompt: 150, Uncached: 150, Request: req}})
	b.asst("a1", 5, 5).asst("a2", 5, 5)
	res := run(t, b, Config{Policy: "as-recorded", Model: testProfile("anthropic")})
	// r1 is the recorded request (150 tokens, 100 written at its breakpoint);
	// r2 falls back to the replayed messages: t u a1 = 25.
	checkMetrics(t, res.Metrics, map[string]float64{"requests": 2, "input_tokens": 150 + 25, "peak_request_tokens": 150})
	for _, w := range res.Warnings {
		if w != "" && bytes.Contains([]byte(w), []byte("records no requests")) {
			t.Errorf("warning %q for a trace that records a request", w)
		}
	}
}

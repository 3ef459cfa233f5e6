package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// handTrace is a task and three assistant turns, each reading a file: every
// request extends the previous one, so the common prefix is all of the
// previous request.
func handTrace() sim.Source {
	evs := []trace.Event{{Kind: trace.KindTask, ID: "task", Text: "Fix the bug in parser.go where tokens are dropped."}}
	for i, body := range []string{strings.Repeat("alpha ", 200), strings.Repeat("beta ", 300), strings.Repeat("gamma ", 100)} {
		n := string(rune('1' + i))
		evs = append(evs,
			trace.Event{Kind: trace.KindAssistant, ID: "a" + n, T: float64(10 * i), Text: "Reading file " + n,
				ToolCalls: []trace.ToolCall{{ID: "c" + n, Name: "read_file"}}},
			trace.Event{Kind: trace.KindToolResult, ID: "r" + n, T: float64(10*i + 1), Tool: "read_file", CallID: "c" + n, Text: body})
	}
	evs = append(evs, trace.Event{Kind: trace.KindAssistant, ID: "a4", T: 40, Text: "Done."})
	return sim.SliceSource(trace.Header{Schema: trace.Schema, Version: trace.Version, Workload: "hand"}, evs)
}

func TestInspect(t *testing.T) {
	prof, err := sim.LookupProfile("claude-sonnet-5.5")
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Policy: "unbounded", Model: prof, Window: 200000}
	tests := []struct {
		name       string
		step       int
		wantStep   int
		wantBlocks int
	}{
		{"first request", 1, 1, 1}, // the task
		{"third request", 3, 3, 5}, // task, a1, r1, a2, r2
		{"last request", 0, 4, 7},  // everything
		{"fourth request", 4, 4, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins, err := Inspect(context.Background(), handTrace(), cfg, tt.step)
			if err != nil {
				t.Fatal(err)
			}
			if ins.Step != tt.wantStep || len(ins.Blocks) != tt.wantBlocks {
				t.Fatalf("step %d with %d blocks, want step %d with %d", ins.Step, len(ins.Blocks), tt.wantStep, tt.wantBlocks)
			}
			sum := 0
			for i, b := range ins.Blocks {
				if b.Index != i {
					t.Errorf("block %d has index %d", i, b.Index)
				}
				sum += b.Tokens
			}
			if sum != ins.Tokens {
				t.Errorf("blocks sum to %d tokens, request has %d", sum, ins.Tokens)
			}
			if ins.Step == 1 {
				if ins.StableTokens != 0 || ins.PrefixEndsBlock != 0 {
					t.Errorf("first request: prefix %d tokens ending at block %d, want 0 at 0", ins.StableTokens, ins.PrefixEndsBlock)
				}
				return
			}
			// Unbounded only appends: the prefix is the whole previous request
			// and ends where this request's two new blocks begin.
			if want := tt.wantBlocks - 2; ins.PrefixEndsBlock != want {
				t.Errorf("prefix ends at block %d, want %d", ins.PrefixEndsBlock, want)
			}
			prev := 0
			for _, b := range ins.Blocks[:ins.PrefixEndsBlock] {
				prev += b.Tokens
			}
			if ins.StableTokens != prev {
				t.Errorf("stable tokens %d, want the %d tokens before the prefix end", ins.StableTokens, prev)
			}
		})
	}
	if _, err := Inspect(context.Background(), handTrace(), cfg, 9); err == nil || !strings.Contains(err.Error(), "only 4 requests") {
		t.Errorf("step past the end: %v", err)
	}
	if _, err := Inspect(context.Background(), handTrace(), cfg, -1); err == nil {
		t.Error("negative step: no error")
	}
}

package bench_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ctxsim/ctxsim/bench"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// A grid names workloads, policies, models, windows and seeds; every key is
// checked, so a typo is an error that names it.
func ExampleParseGrid() {
	g, err := bench.ParseGrid([]byte(`
models   = ["claude-sonnet-5.5"]
windows  = ["8K", "200K", "1M"]
seeds    = [1, 2]
policies = ["flat", "flat-compact"]

[[workload]]
name     = "coder"
policies = ["regions:coder"]
`), "grid.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	cells, _ := g.Cells(bench.ExpandOptions{})
	fmt.Println(len(cells), "cells; the first is", cells[0].ID())

	_, err = bench.ParseGrid([]byte("models = [\"m\"]\nwindow = [\"8K\"]\n"), "typo.toml")
	fmt.Println(err)
	// Output:
	// 18 cells; the first is coder.flat.claude-sonnet-5-5.8K.s1.4b42133214e889f7
	// typo.toml:2: window: unknown key (did you mean "windows"? want one of name, models, windows, seeds, policies, [figures], [[workload]], [[trace]])
}

// A sweep stores each finished cell under Dir/cells; run again, it skips
// them, so an interrupted sweep resumes where it stopped.
func ExampleSweep() {
	dir, _ := os.MkdirTemp("", "sweep")
	defer os.RemoveAll(dir)
	cells := []bench.Cell{
		{Workload: "coder", Policy: "flat", Model: "m", WindowTokens: 8000, Seed: 1},
		{Workload: "coder", Policy: "flat", Model: "m", WindowTokens: 200000, Seed: 1},
	}
	run := func(ctx context.Context, c bench.Cell) (bench.Result, error) {
		kept := min(100, float64(c.WindowTokens)/1000)
		return bench.Result{Metrics: map[string]float64{"task_retained_pct": kept}}, nil
	}
	s := &bench.Sweep{Dir: dir, RunCell: run}
	first, _ := s.Run(context.Background(), cells)
	again, _ := s.Run(context.Background(), cells)
	fmt.Printf("first: ran %d; again: ran %d, skipped %d\n", first.Ran, again.Ran, again.Skipped)
	// Output:
	// first: ran 2; again: ran 0, skipped 2
}

// Inspect prints what a policy would send at one step: here the second
// request of a tiny trace under the unbounded policy, whose prefix is the
// whole first request.
func ExampleInspect() {
	evs := []trace.Event{
		{Kind: trace.KindTask, ID: "task", Text: "Find why the parser drops tokens."},
		{Kind: trace.KindAssistant, ID: "a1", T: 1, Text: "Reading parser.go.", ToolCalls: []trace.ToolCall{{ID: "c1", Name: "read_file"}}},
		{Kind: trace.KindToolResult, ID: "r1", T: 2, Tool: "read_file", CallID: "c1", Text: strings.Repeat("func parse() {}\n", 50)},
		{Kind: trace.KindAssistant, ID: "a2", T: 3, Text: "Found it."},
	}
	prof, _ := sim.LookupProfile("claude-sonnet-5.5")
	src := sim.SliceSource(trace.Header{Schema: trace.Schema, Version: trace.Version}, evs)
	ins, err := bench.Inspect(context.Background(), src, sim.Config{Policy: "unbounded", Model: prof, Window: 200000}, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range ins.Blocks {
		fmt.Println(b.Index, b.Kind, b.ID)
	}
	fmt.Println("prefix ends at block", ins.PrefixEndsBlock)
	// Output:
	// 0 task task
	// 1 assistant a1
	// 2 tool_result r1
	// prefix ends at block 1
}

package bench_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ctxsim/ctxsim/bench"
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
	// typo.toml:2: window: unknown key (want one of name, models, windows, seeds, policies, [figures], [[workload]], [[trace]])
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

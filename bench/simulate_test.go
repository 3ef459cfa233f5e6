package bench

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctxsim/ctxsim/sim"
)

const realGrid = `
models   = ["claude-sonnet-5.5"]
windows  = ["16K", "200K"]
seeds    = [1]
policies = ["flat", "flat-compact", "unbounded"]

[figures]
window = "16K"

[[workload]]
name = "needle"

[[trace]]
name = "swe-gpt4-pydicom-1458"
cut  = "swe-gpt4-pydicom-1458.cut.jsonl"
`

func realCells(t *testing.T) []Cell {
	t.Helper()
	g, err := ParseGrid([]byte(realGrid), "real.toml")
	if err != nil {
		t.Fatal(err)
	}
	cells, err := g.Cells(ExpandOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cells
}

// TestSimulateResumeDeterministic runs a small grid through the real
// simulator three ways (all at once on one worker, on four workers, and
// interrupted then resumed) and wants byte-identical cell files.
func TestSimulateResumeDeterministic(t *testing.T) {
	cells := realCells(t)
	one := t.TempDir()
	sum, err := (&Sweep{Dir: one, RunCell: Simulate, Workers: 1}).Run(context.Background(), cells)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 0 {
		recs, _ := ReadRecords(one)
		for _, r := range recs {
			if !r.OK() {
				t.Errorf("%s: %s", r.ID, r.Error)
			}
		}
		t.FailNow()
	}
	four := t.TempDir()
	if _, err := (&Sweep{Dir: four, RunCell: Simulate, Workers: 4}).Run(context.Background(), cells); err != nil {
		t.Fatal(err)
	}
	sameDirs(t, one, four)

	resumed := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	stop := func(ctx context.Context, c Cell) (Result, error) {
		if n.Add(1) == 5 {
			cancel()
		}
		return Simulate(ctx, c)
	}
	if _, err := (&Sweep{Dir: resumed, RunCell: stop, Workers: 2}).Run(ctx, cells); err == nil {
		t.Fatal("interrupted sweep: no error")
	}
	if _, err := (&Sweep{Dir: resumed, RunCell: Simulate}).Run(context.Background(), cells); err != nil {
		t.Fatal(err)
	}
	sameDirs(t, one, resumed)
}

func TestSimulateResults(t *testing.T) {
	byPolicy := map[string]Result{}
	for _, c := range realCells(t) {
		if c.Workload != "needle" || c.WindowTokens != 16000 {
			continue
		}
		res, err := Simulate(context.Background(), c)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		for _, m := range Metrics() {
			if _, ok := res.Metrics[m.Name]; !ok && m.Name != "reference_recall_pct" {
				t.Errorf("%s: no metric %s", c, m.Name)
			}
		}
		if res.Series == nil || len(res.Series.RequestTokens) != int(res.Metrics["requests"]) {
			t.Errorf("%s: series of %v requests for %v requests", c, res.Series != nil, res.Metrics["requests"])
		}
		if len(res.DepthRecall) == 0 {
			t.Errorf("%s: no recall by depth", c)
		}
		byPolicy[c.Policy] = res
	}
	if got := byPolicy["unbounded"].Metrics["fact_recall_pct"]; got != 100 {
		t.Errorf("unbounded fact recall %v, want 100", got)
	}
	if f, u := byPolicy["flat"].Metrics["fact_recall_pct"], byPolicy["unbounded"].Metrics["fact_recall_pct"]; f >= u {
		t.Errorf("flat at 16K recalls %v%%, unbounded %v%%: the window should bite", f, u)
	}
	for _, c := range []Cell{
		{Workload: "nope", Policy: "flat", Model: "claude-sonnet-5.5", WindowTokens: 8000},
		{Workload: "needle", Policy: "flat", Model: "no-such-model", WindowTokens: 8000},
		{Workload: "x", Trace: "cut", Path: "missing.jsonl", Policy: "flat", Model: "claude-sonnet-5.5", WindowTokens: 8000},
		{Workload: "x", Trace: "full", Path: "/nonexistent/x.jsonl", Format: "claude-code", Policy: "flat", Model: "claude-sonnet-5.5", WindowTokens: 8000},
	} {
		if _, err := Simulate(context.Background(), c); err == nil || strings.Contains(err.Error(), "panic") {
			t.Errorf("%s: error %v", c, err)
		}
	}
}

func TestRegionOrder(t *testing.T) {
	got := regionOrder("regions:coder")
	if len(got) < 5 || got[0] != "task" {
		t.Fatalf("regions of coder: %v", got)
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r] {
			t.Errorf("region %s listed twice", r)
		}
		seen[r] = true
	}
	for _, p := range []string{"flat", "regions:no-such-blueprint", "unbounded"} {
		if o := regionOrder(p); o != nil {
			t.Errorf("regionOrder(%q) = %v, want nil", p, o)
		}
	}
	rec := &seriesRecorder{s: &Series{}, order: []string{"task", "codebase", "conversation"}}
	rec.Request(sim.RequestSample{RequestTokens: 10, Regions: []sim.RegionTokens{{Name: "conversation", Tokens: 4}, {Name: "extra", Tokens: 1}, {Name: "task", Tokens: 5}}})
	s := rec.finish()
	if strings.Join(s.Regions, ",") != "task,conversation,extra" || fmt.Sprint(s.Occupancy) != "[[5 4 1]]" {
		t.Errorf("series regions %v occupancy %v", s.Regions, s.Occupancy)
	}
}

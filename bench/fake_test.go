package bench

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
)

// fakeRun is a deterministic stand-in for the simulator: its metrics follow
// from the cell alone, shaped like real ones (flat lists lose the task at
// small windows, region layouts keep it), so reports have something to say.
func fakeRun(_ context.Context, c Cell) (Result, error) {
	if strings.Contains(c.Policy, "broken") {
		return Result{}, errors.New("policy broken: no such policy")
	}
	if strings.Contains(c.Policy, "panics") {
		panic("fake policy panics")
	}
	h := fnv.New32a()
	fmt.Fprint(h, c.key())
	jitter := float64(h.Sum32()%100) / 100 // 0..0.99, per cell
	k := float64(c.WindowTokens) / 1000
	fit := math.Min(1, k/64) // share of the workload that fits the window
	m := map[string]float64{"requests": 40, "input_tokens": math.Round(k * 900), "output_tokens": 4000}
	switch PolicyLayout(c.Policy) {
	case LayoutRegions:
		m["task_retained_pct"] = 100
		m["fact_recall_pct"] = math.Min(100, 60+40*fit+jitter)
		m["cache_hit_pct"] = 80 + jitter
		m["waste_pct"] = 10 + jitter
		m["prefix_stability_pct"] = 95
	case LayoutFlat:
		m["task_retained_pct"] = 100 * fit
		m["fact_recall_pct"] = 100*fit*0.9 + jitter
		m["cache_hit_pct"] = 50 + 30*fit
		m["waste_pct"] = 40 - 20*fit
		m["prefix_stability_pct"] = 60 + 30*fit
	default:
		m["task_retained_pct"] = 100
		m["fact_recall_pct"] = 100
		m["cache_hit_pct"] = 90
		m["waste_pct"] = 5
	}
	m["cost_usd"] = m["input_tokens"] * 3e-6 * (1 - m["cache_hit_pct"]/100*0.9)
	m["reference_recall_pct"] = math.NaN() // undefined for synthetic workloads: dropped
	res := Result{Metrics: m}
	res.DepthRecall = []DepthBucket{{0, 1000, 10, 10}, {1000, 10000, 10, int(10 * fit)}}
	if c.Series {
		s := &Series{}
		for i := range 6 {
			s.RequestTokens = append(s.RequestTokens, 1000*(i+1))
			s.PrefixTokens = append(s.PrefixTokens, 1000*i)
		}
		if PolicyLayout(c.Policy) == LayoutRegions {
			s.Regions = []string{"system", "task", "history"}
			for i := range 6 {
				s.Occupancy = append(s.Occupancy, []int{200, 100, 700 + 1000*i})
			}
		}
		res.Series = s
	}
	return res, nil
}

const smallGrid = `
name     = "small"
models   = ["m1"]
windows  = ["8K", "64K", "1M"]
seeds    = [1, 2]
policies = ["flat", "flat-compact", "unbounded"]

[figures]
window = "64K"

[[workload]]
name     = "coder"
policies = ["regions:coder"]

[[workload]]
name     = "chat"
policies = ["regions:coder", "flat-broken"]
`

func smallCells() []Cell {
	g, err := ParseGrid([]byte(smallGrid), "small.toml")
	if err != nil {
		panic(err)
	}
	cells, err := g.Cells(ExpandOptions{})
	if err != nil {
		panic(err)
	}
	return cells
}

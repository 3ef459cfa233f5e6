package bench

import (
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/sim"
)

// Direction says which way a metric improves.
type Direction int

// The directions of a metric.
const (
	Neutral Direction = iota // neither better nor worse
	Higher                   // higher is better
	Lower                    // lower is better
)

// String returns "higher", "lower" or "neutral".
func (d Direction) String() string {
	switch d {
	case Higher:
		return "higher"
	case Lower:
		return "lower"
	default:
		return "neutral"
	}
}

// Metric describes one metric of a run: its key in cell files, CSV and JSON,
// its unit, and how go test -bench reports it.
type Metric struct {
	Name      string    // key, e.g. "task_retained_pct"
	Label     string    // short human label for tables and figures
	Unit      string    // unit for people: "%", "tokens", "USD", "s", ...
	BenchUnit string    // unit for b.ReportMetric: no spaces, e.g. "task%"
	Dir       Direction // which way is better
	Exact     bool      // deterministic given the cell: benchstat may assume=exact
	Doc       string    // the definition (DESIGN.md §6)
}

// benchUnits are the go test -bench units of the metrics: short, no spaces,
// "%" for shares and "/run" for totals over one run.
var benchUnits = map[string]string{
	"task_retained_pct":        "task%",
	"task_first_loss":          "first-loss-req",
	"fact_recall_pct":          "recall%",
	"reference_recall_pct":     "ref-recall%",
	"prefix_stability_pct":     "prefix%",
	"prefix_stability_p10_pct": "prefix-p10%",
	"cache_hit_pct":            "hit%",
	"input_tokens":             "in-tok/run",
	"cache_read_tokens":        "cache-read-tok/run",
	"cache_write_tokens":       "cache-write-tok/run",
	"uncached_tokens":          "uncached-tok/run",
	"output_tokens":            "out-tok/run",
	"waste_pct":                "waste%",
	"waste_reprefill_pct":      "waste-reprefill%",
	"waste_dead_pct":           "waste-dead%",
	"waste_refetch_pct":        "waste-refetch%",
	"cost_usd":                 "usd/run",
	"virtual_seconds":          "virtual-s/run",
	"ttft_mean_s":              "ttft-s",
	"input_growth":             "growth-x",
	"peak_request_tokens":      "peak-tok",
	"evictions":                "evictions/run",
	"compactions":              "compactions/run",
	"lost_facts":               "lost-facts/run",
	"requests":                 "requests/run",
}

// Metrics lists every metric a run reports, in report order: the
// simulator's sim.MetricDefs, with the units go test -bench reports them in.
// Every metric is deterministic given its cell (a run is), so benchstat may
// assume exact values.
func Metrics() []Metric {
	defs := sim.MetricDefs()
	out := make([]Metric, 0, len(defs))
	for _, d := range defs {
		bu, ok := benchUnits[d.Key]
		if !ok {
			bu = strings.ReplaceAll(d.Key, "_", "-") + "/run"
		}
		dir := Lower
		if d.Higher {
			dir = Higher
		}
		out = append(out, Metric{Name: d.Key, Label: d.Name, Unit: d.Unit, BenchUnit: bu, Dir: dir, Exact: true, Doc: d.Help})
	}
	return out
}

// metricIndex maps a metric name to its position in Metrics.
func metricIndex() map[string]int { return metricIdx() }

var metricIdx = sync.OnceValue(func() map[string]int {
	m := make(map[string]int)
	for i, d := range Metrics() {
		m[d.Name] = i
	}
	return m
})

package bench

import (
	"math"
	"sort"
	"strings"
)

// Layout classifies a policy for side-by-side comparisons.
type Layout int

// The layouts of DESIGN.md §3.
const (
	LayoutFlat      Layout = iota // a flat message list (flat, flat-compact, ...)
	LayoutRegions                 // the region engine running a blueprint
	LayoutReference               // a bound or a replay: unbounded, clairvoyant, as-recorded
)

// String returns "flat", "regions" or "reference".
func (l Layout) String() string {
	switch l {
	case LayoutFlat:
		return "flat"
	case LayoutRegions:
		return "regions"
	default:
		return "reference"
	}
}

// PolicyLayout returns the layout of a policy name.
func PolicyLayout(policy string) Layout {
	switch {
	case policy == "flat" || strings.HasPrefix(policy, "flat-"):
		return LayoutFlat
	case strings.HasPrefix(policy, "regions:") || policy == "regions":
		return LayoutRegions
	default:
		return LayoutReference
	}
}

// policyRank orders policies in every table and legend: the flat baselines
// in DESIGN.md's order, then region layouts, then the references.
func policyRank(p string) (int, string) {
	fixed := []string{"flat", "flat-keep-system", "flat-compact", "flat-clear-tools"}
	for i, f := range fixed {
		if p == f {
			return i, ""
		}
	}
	switch PolicyLayout(p) {
	case LayoutFlat:
		return 10, p
	case LayoutRegions:
		return 20, p
	}
	switch p {
	case "as-recorded":
		return 30, ""
	case "clairvoyant":
		return 31, ""
	case "unbounded":
		return 32, ""
	}
	return 40, p
}

// SortPolicies sorts policy names into report order.
func SortPolicies(ps []string) {
	sort.SliceStable(ps, func(i, j int) bool {
		ri, si := policyRank(ps[i])
		rj, sj := policyRank(ps[j])
		if ri != rj {
			return ri < rj
		}
		return si < sj
	})
}

// Table is the mean of every metric over seeds, by workload, model, policy
// and window: the data of the report's tables and window figures.
type Table struct {
	Workloads []WorkloadTable
}

// WorkloadTable is one workload on one model.
type WorkloadTable struct {
	Workload string
	Trace    string // "", "cut" or "full"
	Model    string
	Policies []string // report order
	Windows  []int    // ascending
	// Cells[policy][window] aggregates the seeds of one grid point; absent
	// when the grid had no such cell.
	Cells map[string]map[int]*Agg
	// SeriesWindow is the window whose runs recorded per-request series (0: none).
	SeriesWindow int
}

// Agg aggregates the seeds of one grid point.
type Agg struct {
	Runs   []*Record // sorted by seed; failed ones included
	Failed int
	mean   map[string]float64
}

// Mean returns the mean of metric name over the successful runs that report
// it, and false when none does.
func (a *Agg) Mean(name string) (float64, bool) {
	if a == nil {
		return 0, false
	}
	v, ok := a.mean[name]
	return v, ok
}

// MakeTable aggregates records. Records of the same grid point differ only
// in seed.
func MakeTable(recs []*Record) *Table {
	type wkey struct{ workload, trace, model string }
	groups := map[wkey]*WorkloadTable{}
	var keys []wkey
	for _, r := range recs {
		c := r.Cell
		k := wkey{c.Workload, c.Trace, c.Model}
		wt := groups[k]
		if wt == nil {
			wt = &WorkloadTable{Workload: c.Workload, Trace: c.Trace, Model: c.Model, Cells: map[string]map[int]*Agg{}}
			groups[k] = wt
			keys = append(keys, k)
		}
		byWin := wt.Cells[c.Policy]
		if byWin == nil {
			byWin = map[int]*Agg{}
			wt.Cells[c.Policy] = byWin
			wt.Policies = append(wt.Policies, c.Policy)
		}
		a := byWin[c.WindowTokens]
		if a == nil {
			a = &Agg{}
			byWin[c.WindowTokens] = a
		}
		a.Runs = append(a.Runs, r)
		if c.Series && r.Series != nil {
			wt.SeriesWindow = c.WindowTokens
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if (a.trace == "") != (b.trace == "") {
			return a.trace == "" // synthetic workloads first
		}
		if a.workload != b.workload {
			return a.workload < b.workload
		}
		if a.trace != b.trace {
			return a.trace < b.trace
		}
		return a.model < b.model
	})
	t := &Table{}
	for _, k := range keys {
		wt := groups[k]
		SortPolicies(wt.Policies)
		wins := map[int]bool{}
		for _, byWin := range wt.Cells {
			for w, a := range byWin {
				wins[w] = true
				a.finish()
			}
		}
		for w := range wins {
			wt.Windows = append(wt.Windows, w)
		}
		sort.Ints(wt.Windows)
		t.Workloads = append(t.Workloads, *wt)
	}
	return t
}

func (a *Agg) finish() {
	sort.Slice(a.Runs, func(i, j int) bool { return a.Runs[i].Cell.Seed < a.Runs[j].Cell.Seed })
	sum := map[string]float64{}
	n := map[string]int{}
	for _, r := range a.Runs {
		if !r.OK() {
			a.Failed++
			continue
		}
		for k, v := range r.Metrics {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			sum[k] += v
			n[k]++
		}
	}
	a.mean = map[string]float64{}
	for k, s := range sum {
		a.mean[k] = s / float64(n[k])
	}
}

// Title names the workload for headings: "coder", "cc-spotter-258c7280 (cut)".
func (wt *WorkloadTable) Title() string {
	s := wt.Workload
	if wt.Trace != "" {
		s += " (recorded, " + wt.Trace + ")"
	}
	return s
}

// slug is a file-name-safe name of the workload table.
func (wt *WorkloadTable) slug(models int) string {
	s := safe(wt.Workload)
	if wt.Trace == "full" {
		s += "-full"
	}
	if models > 1 {
		s += "-" + safe(wt.Model)
	}
	return s
}

// at returns the mean of metric at policy and window.
func (wt *WorkloadTable) at(policy string, window int, metric string) (float64, bool) {
	return wt.Cells[policy][window].Mean(metric)
}

// has reports whether any cell of the table reports metric.
func (wt *WorkloadTable) has(metric string) bool {
	for _, p := range wt.Policies {
		for _, w := range wt.Windows {
			if _, ok := wt.at(p, w, metric); ok {
				return true
			}
		}
	}
	return false
}

// recallMetric is the recall the workload has: planted facts for synthetic
// workloads, derived references for recorded ones.
func (wt *WorkloadTable) recallMetric() string {
	if wt.has("fact_recall_pct") {
		return "fact_recall_pct"
	}
	return "reference_recall_pct"
}

// policiesOf returns the table's policies of one layout that have at least
// one successful run, in report order.
func (wt *WorkloadTable) policiesOf(l Layout) []string {
	var out []string
	for _, p := range wt.Policies {
		if PolicyLayout(p) == l && wt.ran(p) {
			out = append(out, p)
		}
	}
	return out
}

// ran reports whether policy p has a successful run at some window.
func (wt *WorkloadTable) ran(p string) bool {
	for _, a := range wt.Cells[p] {
		if a.Failed < len(a.Runs) {
			return true
		}
	}
	return false
}

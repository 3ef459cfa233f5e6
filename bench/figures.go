package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/plots"
)

// windowPanels are the metrics of figure 1, in panel order; "recall" stands
// for the workload's recall metric (facts or references).
var windowPanels = []struct{ metric, title, unit string }{
	{"task_retained_pct", "Task retained", "%"},
	{"recall", "Recall", "%"},
	{"cache_hit_pct", "Cache hit", "%"},
	{"waste_pct", "Token waste", "%"},
	{"cost_usd", "Cost", "USD per run"},
}

// DrawFigures draws the four figures of one workload table into
// dir/figures, as SVG and PNG, and returns them for the report:
//  1. the metric panels against window, one line per policy;
//  2. request and prefix-stable tokens per request, flat against regions,
//     at the series window;
//  3. region occupancy over that run, per region layout;
//  4. recall against fact depth at the series window, per policy.
//
// Figures whose data the cells lack (no series recorded, no probes) are
// left out.
func DrawFigures(dir string, wt *WorkloadTable, slug string) ([]FigureFile, error) {
	if err := os.MkdirAll(filepath.Join(dir, FiguresDir), 0o755); err != nil {
		return nil, err
	}
	var out []FigureFile
	save := func(f *plots.Figure, name, caption string) error {
		rel := FiguresDir + "/" + slug + "-" + name
		if err := f.Save(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			return err
		}
		out = append(out, FigureFile{Caption: caption, SVG: rel + ".svg", PNG: rel + ".png"})
		return nil
	}
	title := wt.Title()

	// 1. Metrics against window.
	var panels []plots.Panel
	for _, p := range windowPanels {
		metric := p.metric
		ptitle := p.title
		if metric == "recall" {
			metric = wt.recallMetric()
			ptitle = "Fact recall"
			if metric == "reference_recall_pct" {
				ptitle = "Reference recall"
			}
		}
		if !wt.has(metric) {
			continue
		}
		pn := plots.Panel{Title: ptitle, YLabel: ptitle, Unit: p.unit}
		for _, pol := range wt.Policies {
			s := plots.Series{Name: pol}
			for _, w := range wt.Windows {
				v, ok := wt.at(pol, w, metric)
				if !ok {
					v = math.NaN()
				}
				s.X = append(s.X, float64(w))
				s.Y = append(s.Y, v)
			}
			pn.Series = append(pn.Series, s)
		}
		panels = append(panels, pn)
	}
	if len(panels) > 0 {
		f := plots.WindowPanels(fmt.Sprintf("%s: metrics against window (%s)", title, wt.Model), panels)
		if err := save(f, "windows", "Task retained, recall, cache hit, waste and cost against window size, one line per policy"); err != nil {
			return nil, err
		}
	}

	sw := wt.SeriesWindow
	if sw == 0 {
		return out, nil
	}
	// 2. Request and prefix-stable tokens per request: the plain flat list
	// against each region layout (with the compacting flat list as well when
	// no region layout ran), so the figure stays readable.
	var runs []plots.RunSeries
	for _, pol := range requestPolicies(wt) {
		s := seriesRun(wt, pol, sw)
		if s == nil || len(s.RequestTokens) == 0 {
			continue
		}
		runs = append(runs, plots.RunSeries{Name: pol, Request: ints(s.RequestTokens), PrefixStable: ints(s.PrefixTokens)})
	}
	if len(runs) > 0 {
		f := plots.RequestSeries(fmt.Sprintf("%s at %s: request and prefix-stable tokens", title, FormatWindow(sw)), float64(sw), runs)
		if err := save(f, "requests", fmt.Sprintf("Request tokens (solid) and prefix-stable tokens (dashed) per request at %s, flat against regions", FormatWindow(sw))); err != nil {
			return nil, err
		}
	}
	// 3. Region occupancy, one figure per region layout.
	for _, pol := range wt.policiesOf(LayoutRegions) {
		s := seriesRun(wt, pol, sw)
		if s == nil || len(s.Regions) == 0 || len(s.Occupancy) == 0 {
			continue
		}
		x := make([]float64, len(s.Occupancy))
		tok := make([][]float64, len(s.Regions))
		for r := range tok {
			tok[r] = make([]float64, len(s.Occupancy))
		}
		for i, row := range s.Occupancy {
			x[i] = float64(i + 1)
			for r := range s.Regions {
				if r < len(row) {
					tok[r][i] = float64(row[r])
				}
			}
		}
		f := plots.Occupancy(fmt.Sprintf("%s at %s: region occupancy of %s", title, FormatWindow(sw), pol), s.Regions, x, tok, float64(sw))
		if err := save(f, "occupancy-"+safe(pol), fmt.Sprintf("Region occupancy over the run of %s at %s, stacked by region", pol, FormatWindow(sw))); err != nil {
			return nil, err
		}
	}
	// 4. Recall against depth.
	var depth []plots.Series
	for _, pol := range wt.Policies {
		a := wt.Cells[pol][sw]
		if a == nil {
			continue
		}
		buckets := map[[2]int]*DepthBucket{}
		var order [][2]int
		for _, r := range a.Runs {
			for _, b := range r.DepthRecall {
				k := [2]int{b.MinTokens, b.MaxTokens}
				if buckets[k] == nil {
					buckets[k] = &DepthBucket{MinTokens: b.MinTokens, MaxTokens: b.MaxTokens}
					order = append(order, k)
				}
				buckets[k].Probes += b.Probes
				buckets[k].Hits += b.Hits
			}
		}
		s := plots.Series{Name: pol}
		for _, k := range order {
			b := buckets[k]
			if b.Probes == 0 {
				continue
			}
			s.X = append(s.X, math.Sqrt(float64(max(b.MinTokens, 1))*float64(max(b.MaxTokens, 1))))
			s.Y = append(s.Y, 100*float64(b.Hits)/float64(b.Probes))
		}
		if len(s.X) > 0 {
			depth = append(depth, s)
		}
	}
	if len(depth) > 0 {
		f := plots.RecallDepth(fmt.Sprintf("%s at %s: recall against fact depth", title, FormatWindow(sw)), depth)
		if err := save(f, "depth", fmt.Sprintf("Fact recall against depth (tokens between a fact's arrival and its probe) at %s, per policy", FormatWindow(sw))); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// requestPolicies picks the runs of the request figure.
func requestPolicies(wt *WorkloadTable) []string {
	flat := wt.policiesOf(LayoutFlat)
	regions := wt.policiesOf(LayoutRegions)
	var out []string
	if len(flat) > 0 {
		out = append(out, flat[0])
	}
	if len(regions) == 0 {
		for _, p := range flat[min(1, len(flat)):] {
			if p == "flat-compact" {
				out = append(out, p)
			}
		}
	}
	return append(out, regions...)
}

// seriesRun returns the series of the first seed that recorded one.
func seriesRun(wt *WorkloadTable, pol string, window int) *Series {
	a := wt.Cells[pol][window]
	if a == nil {
		return nil
	}
	for _, r := range a.Runs {
		if r.OK() && r.Series != nil {
			return r.Series
		}
	}
	return nil
}

func ints(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The files a report writes under its directory.
const (
	ReportFile = "report.md"
	CSVFile    = "cells.csv"
	JSONFile   = "cells.json"
	FiguresDir = "figures"
)

// FigureFunc draws the figures of one workload table into dir and returns
// the files it wrote, relative to dir, each with a caption. The report links
// them. It is a parameter so that reports can be tested without drawing.
type FigureFunc func(dir string, wt *WorkloadTable, slug string) ([]FigureFile, error)

// FigureFile is one figure the report links.
type FigureFile struct {
	Caption string
	SVG     string // path relative to the report directory
	PNG     string // path relative to the report directory, "" if none
}

// ReportOptions configure WriteReport.
type ReportOptions struct {
	// Figures draws each workload's figures; nil draws none.
	Figures FigureFunc
	// Title heads report.md.
	Title string
}

// WriteReport writes report.md, cells.csv, cells.json and the figures for the
// records into dir. The output depends only on the records: the same records
// give byte-identical files.
func WriteReport(dir string, recs []*Record, opt ReportOptions) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	recs = append([]*Record(nil), recs...)
	sort.Slice(recs, func(i, j int) bool { return recs[i].ID < recs[j].ID })
	csvb, err := CellsCSV(recs)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	jsonb, err := CellsJSON(recs)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	t := MakeTable(recs)
	figs := map[int][]FigureFile{}
	if opt.Figures != nil {
		models := countModels(t)
		for i := range t.Workloads {
			wt := &t.Workloads[i]
			ff, err := opt.Figures(dir, wt, wt.slug(models))
			if err != nil {
				return fmt.Errorf("report: figures of %s: %w", wt.Title(), err)
			}
			figs[i] = ff
		}
	}
	md := Markdown(t, recs, figs, opt.Title)
	for _, f := range []struct {
		name string
		data []byte
	}{{CSVFile, csvb}, {JSONFile, jsonb}, {ReportFile, md}} {
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	return nil
}

func countModels(t *Table) int {
	ms := map[string]bool{}
	for _, wt := range t.Workloads {
		ms[wt.Model] = true
	}
	return len(ms)
}

// metricNames returns the known metrics in report order, followed by any
// other metric the records carry, sorted, so that no metric is dropped.
func metricNames(recs []*Record) []string {
	var names []string
	known := metricIndex()
	for _, m := range Metrics() {
		names = append(names, m.Name)
	}
	extra := map[string]bool{}
	for _, r := range recs {
		for k := range r.Metrics {
			if _, ok := known[k]; !ok {
				extra[k] = true
			}
		}
	}
	return append(names, slices.Sorted(maps.Keys(extra))...)
}

// CellsCSV writes one row per record: the cell, its error, and every metric
// (empty where the run did not report it).
func CellsCSV(recs []*Record) ([]byte, error) {
	names := metricNames(recs)
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := []string{"id", "workload", "trace", "format", "policy", "layout", "model", "window_tokens", "seed", "error"}
	if err := w.Write(append(head, names...)); err != nil {
		return nil, err
	}
	for _, r := range recs {
		c := r.Cell
		row := []string{r.ID, c.Workload, c.Trace, c.Format, c.Policy, PolicyLayout(c.Policy).String(), c.Model,
			strconv.Itoa(c.WindowTokens), strconv.FormatUint(c.Seed, 10), r.Error}
		for _, n := range names {
			v, ok := r.Metrics[n]
			if !ok {
				row = append(row, "")
				continue
			}
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// jsonCell is one element of cells.json.
type jsonCell struct {
	ID          string             `json:"id"`
	Cell        Cell               `json:"cell"`
	Layout      string             `json:"layout"`
	Error       string             `json:"error,omitempty"`
	Metrics     map[string]float64 `json:"metrics"`
	DepthRecall []DepthBucket      `json:"depth_recall,omitempty"`
	// DeadByRegion: a finding is computed from it.
	DeadByRegion []RegionDead `json:"dead_by_region,omitempty"`
}

// CellsJSON writes every record, without its per-request series, as one JSON
// document: {"metrics": [definitions], "cells": [...]}.
func CellsJSON(recs []*Record) ([]byte, error) {
	type def struct {
		Name      string `json:"name"`
		Unit      string `json:"unit"`
		BenchUnit string `json:"bench_unit"`
		Better    string `json:"better"`
		Doc       string `json:"doc"`
	}
	doc := struct {
		Metrics []def      `json:"metrics"`
		Cells   []jsonCell `json:"cells"`
	}{Cells: []jsonCell{}}
	for _, m := range Metrics() {
		doc.Metrics = append(doc.Metrics, def{m.Name, m.Unit, m.BenchUnit, m.Dir.String(), m.Doc})
	}
	for _, r := range recs {
		c := r.Cell
		c.Path = "" // machine-specific; the id and trace kind identify it
		m := r.Metrics
		if m == nil {
			m = map[string]float64{}
		}
		doc.Cells = append(doc.Cells, jsonCell{r.ID, c, PolicyLayout(r.Cell.Policy).String(), r.Error, m, r.DepthRecall, r.DeadByRegion})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// formatValue writes a metric value for tables, with the precision its unit
// deserves.
func formatValue(name string, v float64) string {
	unit := ""
	if i, ok := metricIndex()[name]; ok {
		unit = Metrics()[i].Unit
	}
	switch unit {
	case "%":
		return strconv.FormatFloat(v, 'f', 1, 64)
	case "USD":
		switch {
		case v == 0:
			return "0"
		case v < 0.01:
			return strconv.FormatFloat(v, 'f', 4, 64)
		default:
			return strconv.FormatFloat(v, 'f', 3, 64)
		}
	case "s", "ratio":
		return strconv.FormatFloat(v, 'f', 2, 64)
	case "tokens", "count", "index":
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func metricHeading(name string) string {
	i, ok := metricIndex()[name]
	if !ok {
		return name
	}
	m := Metrics()[i]
	s := fmt.Sprintf("%s (%s)", m.Label, m.Unit)
	if m.Dir != Neutral {
		s += ", " + m.Dir.String() + " is better"
	}
	return s
}

// Markdown renders the report. figs[i] are the figures of t.Workloads[i].
func Markdown(t *Table, recs []*Record, figs map[int][]FigureFile, title string) []byte {
	if title == "" {
		title = "ctxsim results"
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	failed := 0
	for _, r := range recs {
		if !r.OK() {
			failed++
		}
	}
	p("# %s\n\n", title)
	p("Generated by `ctxsim report` from %d cells (%d failed). Every number below is computed from `cells.json`; ", len(recs), failed)
	p("tables show the mean over seeds. Flat layouts, region layouts and references (unbounded, clairvoyant, as-recorded) are side by side at every window.\n\n")
	if len(t.Workloads) == 0 {
		p("No cells yet.\n")
		return b.Bytes()
	}
	models := countModels(t)
	p("## Headline\n\n")
	writeHeadline(&b, t)
	p("\n## Workloads\n\n")
	for _, wt := range t.Workloads {
		p("- [%s](#%s)\n", mdEscape(headingText(&wt, models)), anchor(headingText(&wt, models)))
	}
	p("\n")
	names := metricNames(recs)
	for i := range t.Workloads {
		wt := &t.Workloads[i]
		p("## %s\n\n", mdEscape(headingText(wt, models)))
		p("Model `%s`; windows %s; %d policies.\n\n", wt.Model, windowList(wt.Windows), len(wt.Policies))
		p("### What this shows\n\n")
		for _, s := range Findings(wt) {
			p("- %s\n", s)
		}
		p("\n")
		if ff := figs[i]; len(ff) > 0 {
			p("### Figures\n\n")
			for _, f := range ff {
				p("**%s**\n\n![%s](%s)", mdEscape(f.Caption), mdEscape(f.Caption), f.SVG)
				if f.PNG != "" {
					p(" ([PNG](%s))", f.PNG)
				}
				p("\n\n")
			}
		}
		p("### Tables\n\n")
		// The headline metrics first, then every other one folded away.
		first := map[string]bool{}
		for _, hm := range headlineMetrics {
			m := hm.name
			if m == "recall" {
				m = wt.recallMetric()
			}
			if wt.has(m) {
				first[m] = true
				writeMetricTable(&b, wt, m)
			}
		}
		opened := false
		for _, n := range names {
			if first[n] || !wt.has(n) {
				continue
			}
			if !opened {
				p("<details><summary>Every other metric</summary>\n\n")
				opened = true
			}
			writeMetricTable(&b, wt, n)
		}
		if opened {
			p("</details>\n\n")
		}
		writeFailures(&b, wt)
	}
	writeDefinitions(&b)
	return b.Bytes()
}

func headingText(wt *WorkloadTable, models int) string {
	s := wt.Title()
	if models > 1 {
		s += " on " + wt.Model
	}
	return s
}

// anchor is GitHub's heading anchor of a heading text.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// mdEscape keeps table cells and headings intact.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func windowList(ws []int) string {
	var parts []string
	for _, w := range ws {
		parts = append(parts, FormatWindow(w))
	}
	return strings.Join(parts, ", ")
}

// writeMetricTable writes one metric by policy (rows: flat, regions,
// references) and window (columns).
func writeMetricTable(b *bytes.Buffer, wt *WorkloadTable, name string) {
	fmt.Fprintf(b, "#### %s\n\n", metricHeading(name))
	fmt.Fprintf(b, "| layout | policy |")
	for _, w := range wt.Windows {
		fmt.Fprintf(b, " %s |", FormatWindow(w))
	}
	b.WriteString("\n|---|---|")
	for range wt.Windows {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	marked := false
	for _, p := range wt.Policies {
		fmt.Fprintf(b, "| %s | `%s` |", PolicyLayout(p), mdEscape(p))
		for _, w := range wt.Windows {
			a := wt.Cells[p][w]
			v, ok := a.Mean(name)
			switch {
			case ok && wt.overflows(p, w):
				fmt.Fprintf(b, " %s %s |", formatValue(name, v), overMark)
				marked = true
			case ok:
				fmt.Fprintf(b, " %s |", formatValue(name, v))
			case a != nil && a.Failed == len(a.Runs):
				b.WriteString(" failed |")
			default:
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if marked {
		b.WriteString(overNote)
	}
}

// overMark flags a number from a run whose every request went over the
// window: a provider would have refused them all, so its cache hits, waste
// and cost describe requests that were never served.
const (
	overMark = "†"
	overNote = overMark + " every request of the run went over the window; a provider would refuse them all, so the number describes requests never served.\n\n"
)

func writeFailures(b *bytes.Buffer, wt *WorkloadTable) {
	var rows []*Record
	for _, p := range wt.Policies {
		for _, w := range wt.Windows {
			if a := wt.Cells[p][w]; a != nil {
				for _, r := range a.Runs {
					if !r.OK() {
						rows = append(rows, r)
					}
				}
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "### Failed cells\n\n| policy | window | seed | error |\n|---|---:|---:|---|\n")
	for _, r := range rows {
		msg, _, _ := strings.Cut(r.Error, "\n")
		fmt.Fprintf(b, "| `%s` | %s | %d | %s |\n", mdEscape(r.Cell.Policy), FormatWindow(r.Cell.WindowTokens), r.Cell.Seed, mdEscape(msg))
	}
	b.WriteString("\n")
}

func writeDefinitions(b *bytes.Buffer) {
	b.WriteString("## Metric definitions\n\n| metric | unit | better | definition |\n|---|---|---|---|\n")
	for _, m := range Metrics() {
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", m.Name, m.Unit, m.Dir, mdEscape(m.Doc))
	}
}

// headlineMetrics are the metrics of the headline table.
var headlineMetrics = []struct{ name, label string }{
	{"task_retained_pct", "task %"},
	{"recall", "recall %"},
	{"cache_hit_pct", "cache hit %"},
	{"waste_pct", "waste %"},
	{"cost_usd", "cost $"},
}

// writeHeadline writes, per workload, at the smallest window and at the
// series window, each headline metric for the plain flat list and the region
// layout side by side (the first of each that ran).
func writeHeadline(b *bytes.Buffer, t *Table) {
	models := countModels(t)
	b.WriteString("| workload | window | flat | regions |")
	for _, m := range headlineMetrics {
		fmt.Fprintf(b, " %s flat | %s regions |", m.label, m.label)
	}
	b.WriteString("\n|---|---:|---|---|")
	for range headlineMetrics {
		b.WriteString("---:|---:|")
	}
	b.WriteString("\n")
	marked := false
	for i := range t.Workloads {
		wt := &t.Workloads[i]
		var flat, regions string
		if f := wt.policiesOf(LayoutFlat); len(f) > 0 {
			flat = f[0]
		}
		if r := wt.policiesOf(LayoutRegions); len(r) > 0 {
			regions = r[0]
		}
		name := func(p string) string {
			if p == "" {
				return "–"
			}
			return "`" + mdEscape(p) + "`"
		}
		for _, w := range headlineWindows(wt) {
			fmt.Fprintf(b, "| %s | %s | %s | %s |", mdEscape(headingText(wt, models)), FormatWindow(w), name(flat), name(regions))
			for _, hm := range headlineMetrics {
				m := hm.name
				if m == "recall" {
					m = wt.recallMetric()
				}
				for _, p := range []string{flat, regions} {
					if v, ok := wt.at(p, w, m); ok && p != "" {
						mark := ""
						if wt.overflows(p, w) {
							mark, marked = " "+overMark, true
						}
						fmt.Fprintf(b, " %s%s |", formatValue(m, v), mark)
					} else {
						b.WriteString(" – |")
					}
				}
			}
			b.WriteString("\n")
		}
	}
	if marked {
		b.WriteString("\n" + strings.TrimSuffix(overNote, "\n"))
	}
}

func headlineWindows(wt *WorkloadTable) []int {
	if len(wt.Windows) == 0 {
		return nil
	}
	ws := []int{wt.Windows[0]}
	if wt.SeriesWindow != 0 && wt.SeriesWindow != ws[0] {
		ws = append(ws, wt.SeriesWindow)
	}
	return ws
}

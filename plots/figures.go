package plots

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Panel is one metric of a WindowPanels figure: its series share the figure's window axis.
type Panel struct {
	Title  string // e.g. "Task retained"
	YLabel string // e.g. "Task retained"; empty means Title
	Unit   string // e.g. "%", "USD per run", "tokens"; with "%", data within 0–100 gets the full 0–100 axis
	Series []Series
	// YMin, YMax fix the y range when YMax > YMin; otherwise it runs from zero to just above
	// the data.
	YMin, YMax float64
}

// Figure sizes. A panel is wide enough for about seven window labels under it; a single
// plot is a page width.
var (
	panelW  = 3.2 * vg.Inch
	panelH  = 2.4 * vg.Inch
	singleW = 7.0 * vg.Inch
	singleH = 4.2 * vg.Inch
	// panelAxesW is what a panel's y axis and the padding between panels take from its
	// width, as estimated for spacing window labels: a little more than they need.
	panelAxesW = vg.Points(64)
)

const (
	windowAxisLabel = "Window (tokens)"
	requestLabel    = "Request (index)"
	singleMaxLabels = 12
)

// WindowPanels draws figure 1 of the report: one panel per metric against the model window
// (log axis, a tick at every window of the data: 8K, 16K, …, 1M, 2M), one line per policy,
// all panels on the same window range. Points are joined in window order. Legend entries
// follow the order in which series keys first appear, panel by panel.
func WindowPanels(title string, panels []Panel) *Figure {
	f := &Figure{title: title, legendRow: -1, legendCol: -1}
	if len(panels) == 0 {
		f.err = errf(title, "no panels to draw")
		return f
	}
	windowSet := map[float64]bool{}
	var keys []string
	names := map[string]string{}
	hasData := map[string]bool{}
	for _, pn := range panels {
		for _, s := range pn.Series {
			what := fmt.Sprintf("panel %q, series %q", pn.Title, s.Name)
			if err := checkSeries(title, what, s.X, s.Y, log2Scale); err != nil {
				f.err = err
				return f
			}
			k := s.key()
			if _, seen := names[k]; !seen {
				names[k] = s.Name
				keys = append(keys, k)
			}
			for i := range s.X {
				if isFinite(s.X[i]) {
					windowSet[s.X[i]] = true
				}
				if isFinite(s.Y[i]) && isFinite(s.X[i]) {
					hasData[k] = true
				}
			}
		}
	}
	idx := assignStyles(keys)
	windows := slices.Sorted(maps.Keys(windowSet))

	n := len(panels)
	cols := n
	switch {
	case n == 4:
		cols = 2
	case n > 4:
		cols = 3
	}
	rows := (n + cols - 1) / cols
	f.grid = make([][]*plot.Plot, rows)
	for r := range f.grid {
		f.grid[r] = make([]*plot.Plot, cols)
	}
	thumbs := map[string][]plot.Thumbnailer{}
	for i, pn := range panels {
		xLabel := ""
		if i+cols >= n { // nothing below this panel
			xLabel = windowAxisLabel
		}
		yLabel := pn.YLabel
		if yLabel == "" {
			yLabel = pn.Title
		}
		p := newPlot(pn.Title, xLabel, axisLabel(yLabel, pn.Unit))
		var ys extent
		for _, s := range pn.Series {
			k := s.key()
			x, y := sortedByX(s.X, s.Y)
			th := addLine(p, lineSpec{x: x, y: y, sty: styles[idx[k]], markPhase: idx[k]})
			if thumbs[k] == nil {
				thumbs[k] = th
			}
			for j := range s.Y {
				if isFinite(s.X[j]) {
					ys.add(s.Y[j])
				}
			}
		}
		if !ys.ok {
			p.Add(noData{})
		}
		setWindowX(p, windows, panelW-panelAxesW)
		setY(p, ys, fixedRange(pn.YMin, pn.YMax), unitKind(pn.Unit))
		f.grid[i/cols][i%cols] = p
	}
	for _, k := range keys {
		f.legend = append(f.legend, legendEntry{label: dataLabel(names[k], hasData[k]), thumbs: thumbs[k]})
	}

	f.width = vg.Length(cols)*panelW + 2*figurePad
	f.height = vg.Length(rows)*panelH + titleHeight(title)
	if rows*cols > n {
		f.legendRow, f.legendCol = n/cols, n%cols
	} else {
		f.height += legendStripHeight(f.legend, f.width, 1)
	}
	return f
}

// RunSeries is one policy's run in a RequestSeries figure, request by request.
type RunSeries struct {
	Name string // legend text
	Key  string // style key; empty means Name
	// Request is the size of each request in tokens.
	Request []float64
	// PrefixStable is, per request, the tokens of its longest common prefix with the
	// previous request (what a prompt cache can reuse). Empty to omit; otherwise as long as
	// Request.
	PrefixStable []float64
}

// RequestSeries draws figure 2: for one run per policy at one window, request tokens (solid)
// and prefix-stable tokens (dashed, same colour and glyph) against the request index. A flat
// list's cliff, where it starts dropping its oldest messages and the prefix breaks, shows
// against a region layout's steady footprint. A window > 0 is drawn as a dotted reference
// line.
func RequestSeries(title string, window float64, runs []RunSeries) *Figure {
	f := &Figure{title: title, legendRow: -1, legendCol: -1}
	if err := checkWindow(title, window); err != nil {
		f.err = err
		return f
	}
	keys := make([]string, len(runs))
	longest := 0
	for i, r := range runs {
		keys[i] = r.key()
		if len(r.PrefixStable) != 0 && len(r.PrefixStable) != len(r.Request) {
			f.err = errf(title, "run %q: %d request sizes but %d prefix-stable sizes", r.Name, len(r.Request), len(r.PrefixStable))
			return f
		}
		for _, vs := range [][]float64{r.Request, r.PrefixStable} {
			for j, v := range vs {
				if math.IsInf(v, 0) || v < 0 {
					f.err = errf(title, "run %q: request %d: %v tokens; want a count ≥ 0 or NaN for a gap", r.Name, j+1, v)
					return f
				}
			}
		}
		longest = max(longest, len(r.Request))
	}
	idx := assignStyles(keys)

	p := newPlot("", requestLabel, axisLabel("Request size", "tokens"))
	var ys extent
	for i, r := range runs {
		k := keys[i]
		sty := styles[idx[k]]
		xs := indexes(len(r.Request))
		th := addLine(p, lineSpec{x: xs, y: r.Request, sty: sty, solid: true, markPhase: i})
		f.legend = append(f.legend, legendEntry{label: dataLabel(r.Name, anyFinite(r.Request)) + ": request", thumbs: th})
		if len(r.PrefixStable) > 0 {
			th := addLine(p, lineSpec{x: xs, y: r.PrefixStable, sty: sty, dashes: prefixDash, markPhase: i + 1})
			f.legend = append(f.legend, legendEntry{label: r.Name + ": prefix-stable", thumbs: th})
		}
		for _, vs := range [][]float64{r.Request, r.PrefixStable} {
			for _, v := range vs {
				ys.add(v)
			}
		}
	}
	xlo, xhi := 1.0, float64(max(longest, 2))
	if !ys.ok {
		p.Add(noData{})
	}
	f.perRequest(p, xlo, xhi, true, ys, window)
	// Keep each run's two lines on one legend row when every run has both.
	f.legendGroup = 1
	if len(runs) > 0 && !slices.ContainsFunc(runs, func(r RunSeries) bool { return len(r.PrefixStable) == 0 }) {
		f.legendGroup = 2
	}
	f.height = singleH + titleHeight(title) + legendStripHeight(f.legend, f.width, f.legendGroup)
	return f
}

func (r RunSeries) key() string {
	if r.Key != "" {
		return r.Key
	}
	return r.Name
}

// Occupancy draws figure 3: the tokens each region holds at each request of one run,
// stacked in the order given (the first region at the bottom), with the window as a dotted
// line when window > 0. tokens[r][i] is region r's occupancy at x[i]; x is the request index
// and must increase. A column with a NaN anywhere is a gap.
func Occupancy(title string, regions []string, x []float64, tokens [][]float64, window float64) *Figure {
	f := &Figure{title: title, legendRow: -1, legendCol: -1}
	if f.err = checkOccupancy(title, regions, x, tokens, window); f.err != nil {
		return f
	}
	x, tokens = thinColumns(x, tokens)
	p := newPlot("", requestLabel, axisLabel("Occupancy", "tokens"))

	// cum[r][i] is the top of region r's band at column i.
	cum := make([][]float64, len(regions))
	valid := make([]bool, len(x))
	for i := range x {
		valid[i] = isFinite(x[i])
		for r := range regions {
			valid[i] = valid[i] && isFinite(tokens[r][i])
		}
	}
	var ys, xs extent
	for r := range regions {
		cum[r] = make([]float64, len(x))
		for i := range x {
			if !valid[i] {
				continue
			}
			cum[r][i] = tokens[r][i]
			if r > 0 {
				cum[r][i] += cum[r-1][i]
			}
			ys.add(cum[r][i])
		}
	}
	half := loneColumnHalfWidth(x)
	for r, name := range regions {
		fill := fills[r%len(fills)]
		for _, run := range finiteRuns(valid) {
			pts := bandPolygon(x, cum, r, run, half)
			for _, pt := range pts {
				xs.add(pt.X)
			}
			p.Add(&plotter.Polygon{XYs: []plotter.XYs{pts}, Color: fill,
				LineStyle: draw.LineStyle{Color: color.White, Width: vg.Points(0.6)}})
		}
		f.legend = append(f.legend, legendEntry{label: name, thumbs: []plot.Thumbnailer{
			&plotter.Polygon{Color: fill, LineStyle: draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(0.5)}},
		}})
	}
	xlo, xhi := 1.0, 2.0
	if xs.ok && xs.lo < xs.hi { // the bands' own extent, lone columns' bars included
		xlo, xhi = xs.lo, xs.hi
	}
	if !xs.ok {
		p.Add(noData{})
	}
	f.perRequest(p, xlo, xhi, allIntegers(x), ys, window)
	f.height = singleH + titleHeight(title) + legendStripHeight(f.legend, f.width, 1)
	return f
}

func checkOccupancy(title string, regions []string, x []float64, tokens [][]float64, window float64) error {
	if err := checkWindow(title, window); err != nil {
		return err
	}
	if len(tokens) != len(regions) {
		return errf(title, "%d regions but %d token rows", len(regions), len(tokens))
	}
	prev := math.Inf(-1)
	for i, v := range x {
		if math.IsInf(v, 0) {
			return errf(title, "x %d is %v; use NaN for a gap", i, v)
		}
		if math.IsNaN(v) {
			continue
		}
		if v <= prev {
			return errf(title, "x %d is %v, not after the previous %v; x must increase", i, v, prev)
		}
		prev = v
	}
	for r, name := range regions {
		if len(tokens[r]) != len(x) {
			return errf(title, "region %q: %d values for %d x positions", name, len(tokens[r]), len(x))
		}
		for i, v := range tokens[r] {
			if math.IsInf(v, 0) || v < 0 {
				return errf(title, "region %q: point %d: %v tokens; want a count ≥ 0 or NaN for a gap", name, i, v)
			}
		}
	}
	return nil
}

// thinColumns applies keepIndexes to the columns of an occupancy figure by their total,
// keeping whole columns (real states of the run) rather than averaging them.
func thinColumns(x []float64, tokens [][]float64) ([]float64, [][]float64) {
	valid := make([]bool, len(x))
	total := make([]float64, len(x))
	for i := range x {
		valid[i] = isFinite(x[i])
		for r := range tokens {
			valid[i] = valid[i] && isFinite(tokens[r][i])
			total[i] += tokens[r][i]
		}
	}
	keep := keepIndexes(valid, total, maxLinePoints)
	if keep == nil {
		return x, tokens
	}
	xs := make([]float64, len(keep))
	ts := make([][]float64, len(tokens))
	for r := range ts {
		ts[r] = make([]float64, len(keep))
	}
	for j, i := range keep {
		if i < 0 {
			xs[j] = math.NaN()
			continue
		}
		xs[j] = x[i]
		for r := range ts {
			ts[r][j] = tokens[r][i]
		}
	}
	return xs, ts
}

// finiteRuns returns the [start, end) ranges of consecutive true values.
func finiteRuns(valid []bool) [][2]int {
	var runs [][2]int
	start := -1
	for i, ok := range valid {
		switch {
		case ok && start < 0:
			start = i
		case !ok && start >= 0:
			runs = append(runs, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		runs = append(runs, [2]int{start, len(valid)})
	}
	return runs
}

// bandPolygon outlines region r's band over one run of columns: along its top left to
// right, then along the band below right to left. A run of one column becomes a bar of
// width 2·half so that it stays visible.
func bandPolygon(x []float64, cum [][]float64, r int, run [2]int, half float64) plotter.XYs {
	top := func(i int) float64 { return cum[r][i] }
	bottom := func(i int) float64 {
		if r == 0 {
			return 0
		}
		return cum[r-1][i]
	}
	a, b := run[0], run[1]
	if b-a == 1 {
		return plotter.XYs{
			{X: x[a] - half, Y: bottom(a)}, {X: x[a] - half, Y: top(a)},
			{X: x[a] + half, Y: top(a)}, {X: x[a] + half, Y: bottom(a)},
		}
	}
	pts := make(plotter.XYs, 0, 2*(b-a))
	for i := a; i < b; i++ {
		pts = append(pts, plotter.XY{X: x[i], Y: top(i)})
	}
	for i := b - 1; i >= a; i-- {
		pts = append(pts, plotter.XY{X: x[i], Y: bottom(i)})
	}
	return pts
}

// loneColumnHalfWidth is 0.4 of the smallest spacing of x, or 0.4 when there is none.
func loneColumnHalfWidth(x []float64) float64 {
	gap := math.Inf(1)
	prev := math.NaN()
	for _, v := range x {
		if math.IsNaN(v) {
			continue
		}
		if !math.IsNaN(prev) {
			gap = math.Min(gap, v-prev)
		}
		prev = v
	}
	if math.IsInf(gap, 1) {
		gap = 1
	}
	return 0.4 * gap
}

// RecallDepth draws figure 4: fact recall (%) against the depth of the fact, in tokens
// between its arrival and the probe (log axis ticked at powers of two), one line per
// policy. Points are joined in depth order.
func RecallDepth(title string, series []Series) *Figure {
	f := &Figure{title: title, legendRow: -1, legendCol: -1}
	keys := make([]string, len(series))
	var xs, ys extent
	for i, s := range series {
		if err := checkSeries(title, fmt.Sprintf("series %q", s.Name), s.X, s.Y, log2Scale); err != nil {
			f.err = err
			return f
		}
		keys[i] = s.key()
		for j := range s.X {
			if isFinite(s.X[j]) && isFinite(s.Y[j]) {
				xs.add(s.X[j])
				ys.add(s.Y[j])
			}
		}
	}
	idx := assignStyles(keys)
	p := newPlot("", "Fact depth (tokens)", axisLabel("Fact recall", "%"))
	for i, s := range series {
		x, y := sortedByX(s.X, s.Y)
		th := addLine(p, lineSpec{x: x, y: y, sty: styles[idx[keys[i]]], markPhase: i})
		f.legend = append(f.legend, legendEntry{label: dataLabel(s.Name, anyFiniteXY(s.X, s.Y)), thumbs: th})
	}
	if !xs.ok {
		p.Add(noData{})
	}
	setLog2X(p, xs, singleMaxLabels)
	setY(p, ys, extent{}, unitPercent)
	f.grid = [][]*plot.Plot{{p}}
	f.width = singleW
	f.height = singleH + titleHeight(title) + legendStripHeight(f.legend, f.width, 1)
	return f
}

// perRequest makes p, a plot of tokens per request over [xlo, xhi], the
// figure's one panel: the window (when > 0) as a dotted line in the plot and
// the legend, and the y axis over ys and the window.
func (f *Figure) perRequest(p *plot.Plot, xlo, xhi float64, integerX bool, ys extent, window float64) {
	if window > 0 {
		ys.add(window)
		f.legend = append(f.legend, addWindowLine(p, window, xlo, xhi))
	}
	p.X.Min, p.X.Max = xlo, xhi
	p.X.Tick.Marker = linearTicks{target: 8, integer: integerX}
	setY(p, ys, extent{}, unitTokens)
	f.grid = [][]*plot.Plot{{p}}
	f.width = singleW
}

// addWindowLine draws the window as a horizontal dotted line and returns its legend entry.
func addWindowLine(p *plot.Plot, window, xlo, xhi float64) legendEntry {
	sty := draw.LineStyle{Color: color.Black, Width: vg.Points(1.2), Dashes: windowLineDash}
	p.Add(&plotter.Line{XYs: plotter.XYs{{X: xlo, Y: window}, {X: xhi, Y: window}}, LineStyle: sty})
	return legendEntry{
		label:  "window (" + windowLabel(window) + " tokens)",
		thumbs: []plot.Thumbnailer{&plotter.Line{LineStyle: sty}},
	}
}

func checkWindow(title string, window float64) error {
	if math.IsNaN(window) || math.IsInf(window, 0) || window < 0 {
		return errf(title, "window is %v tokens; want > 0, or 0 for no window line", window)
	}
	return nil
}

// windowLabel writes a window as it is quoted: multiples of 1024 that are not also round
// thousands with binary suffixes (128K = 131072, 1M = 1048576), anything else in decimal
// (200K = 200000, 1M = 1000000).
func windowLabel(v float64) string {
	if v >= 1<<10 && math.Mod(v, 1<<10) == 0 && math.Mod(v, 1000) != 0 {
		return pow2Label(v)
	}
	return tokenLabel(v)
}

func allIntegers(xs []float64) bool {
	for _, v := range xs {
		if isFinite(v) && v != math.Trunc(v) {
			return false
		}
	}
	return true
}

// noData writes "no data" across an empty plot, so that an empty panel reads as a result
// (nothing was measured) rather than as a drawing fault.
type noData struct{}

func (noData) Plot(c draw.Canvas, _ *plot.Plot) {
	ts := textStyle(sansFont, axisLabelSize)
	ts.Color = color.Gray{Y: 120}
	ts.XAlign, ts.YAlign = draw.XCenter, draw.YCenter
	c.FillText(ts, c.Center(), "no data")
}

func fixedRange(lo, hi float64) extent {
	if isFinite(lo) && isFinite(hi) && hi > lo {
		return extent{lo: lo, hi: hi, ok: true}
	}
	return extent{}
}

func dataLabel(name string, has bool) string {
	if has {
		return name
	}
	return name + " (no data)"
}

func anyFinite(vs []float64) bool {
	return slices.ContainsFunc(vs, isFinite)
}

func anyFiniteXY(x, y []float64) bool {
	for i := range x {
		if isFinite(x[i]) && isFinite(y[i]) {
			return true
		}
	}
	return false
}

// indexes returns 1, 2, …, n: request numbers as people count them.
func indexes(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}

func titleHeight(title string) vg.Length {
	h := 2 * figurePad
	if title != "" {
		h += textStyle(boldFont, figureTitleSize).FontExtents().Height + figurePad
	}
	return h
}

func legendStripHeight(entries []legendEntry, width vg.Length, group int) vg.Length {
	if len(entries) == 0 {
		return 0
	}
	return layoutLegend(entries, width-2*figurePad, group).height + figurePad
}

package plots

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one line: a policy's values at some x positions. NaN in X or Y leaves a gap;
// a point with no finite neighbour is drawn as a lone glyph.
type Series struct {
	// Name is the legend text, e.g. a policy name.
	Name string
	// Key chooses the style; empty means Name. The policies of DESIGN.md §3 ("flat",
	// "flat-compact", "unbounded", …) have fixed styles, so they look the same in every
	// figure; the first "regions:<blueprint>" key of a figure gets the region style and
	// further ones the next region styles, in order.
	Key  string
	X, Y []float64
}

func (s Series) key() string {
	if s.Key != "" {
		return s.Key
	}
	return s.Name
}

// axisScale says how an axis maps values.
type axisScale int

const (
	linearScale axisScale = iota
	log2Scale             // log axis ticked at powers of two
)

// extent is the finite range of some values.
type extent struct {
	lo, hi float64
	ok     bool
}

func (e *extent) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if !e.ok {
		e.lo, e.hi, e.ok = v, v, true
		return
	}
	e.lo = math.Min(e.lo, v)
	e.hi = math.Max(e.hi, v)
}

// checkSeries validates one series for a figure. what names it in errors ("panel "Cost",
// series "flat"").
func checkSeries(figure, what string, x, y []float64, xScale axisScale) error {
	if len(x) != len(y) {
		return errf(figure, "%s: %d x values but %d y values", what, len(x), len(y))
	}
	for i := range x {
		if math.IsInf(x[i], 0) {
			return errf(figure, "%s: point %d: x is %v; use NaN for a gap", what, i, x[i])
		}
		if math.IsInf(y[i], 0) {
			return errf(figure, "%s: point %d: y is %v; use NaN for a gap", what, i, y[i])
		}
		if xScale == log2Scale && x[i] <= 0 {
			return errf(figure, "%s: point %d: x is %v; a log axis needs x > 0", what, i, x[i])
		}
	}
	return nil
}

// lineSpec is one drawn line: data plus how to draw it.
type lineSpec struct {
	x, y   []float64
	sty    style
	dashes []vg.Length // overrides sty.dashes when non-nil
	solid  bool        // ignore sty.dashes and draw solid
	// markPhase shifts the sparse glyphs of long lines so that series of equal length do
	// not put their glyphs on the same requests.
	markPhase int
}

// denseMarks is the longest line that gets a glyph on every point; longer lines get about
// sparseMarks glyphs, enough to identify the series without hiding it.
const (
	denseMarks  = 24
	sparseMarks = 8
)

// addLine adds the line to p and returns its legend thumbnails. Lines are split at
// non-finite points; gonum's line plotter rejects NaN.
func addLine(p *plot.Plot, ls lineSpec) []plot.Thumbnailer {
	lineSty := draw.LineStyle{Color: ls.sty.color, Width: lineWidth, Dashes: ls.sty.dashes}
	switch {
	case ls.solid:
		lineSty.Dashes = nil
	case ls.dashes != nil:
		lineSty.Dashes = ls.dashes
	}
	glyphSty := draw.GlyphStyle{Color: ls.sty.color, Radius: glyphRadius, Shape: ls.sty.glyph}
	ls.x, ls.y = thinLine(ls.x, ls.y)

	finite := 0
	for i := range ls.x {
		if isFinite(ls.x[i]) && isFinite(ls.y[i]) {
			finite++
		}
	}
	step := 1
	if finite > denseMarks {
		step = (finite + sparseMarks - 1) / sparseMarks
	}
	phase := mod(ls.markPhase*max(step/3, 1), step)

	var marks plotter.XYs
	var seg plotter.XYs
	lastMarked := false
	flush := func() {
		switch len(seg) {
		case 0:
		case 1:
			if !lastMarked { // a lone point must stay visible even where glyphs are sparse
				marks = append(marks, seg[0])
			}
		default:
			l := &plotter.Line{XYs: seg, LineStyle: lineSty}
			p.Add(l)
		}
		seg = nil
	}
	n := 0
	for i := range ls.x {
		if !isFinite(ls.x[i]) || !isFinite(ls.y[i]) {
			flush()
			continue
		}
		pt := plotter.XY{X: ls.x[i], Y: ls.y[i]}
		seg = append(seg, pt)
		lastMarked = mod(n-phase, step) == 0
		if lastMarked {
			marks = append(marks, pt)
		}
		n++
	}
	flush()
	if len(marks) > 0 {
		p.Add(&plotter.Scatter{XYs: marks, GlyphStyle: glyphSty})
	}
	return []plot.Thumbnailer{
		&plotter.Line{LineStyle: lineSty},
		&plotter.Scatter{GlyphStyle: glyphSty},
	}
}

// thinLine applies keepIndexes to a line.
func thinLine(x, y []float64) ([]float64, []float64) {
	valid := make([]bool, len(x))
	for i := range x {
		valid[i] = isFinite(x[i]) && isFinite(y[i])
	}
	keep := keepIndexes(valid, y, maxLinePoints)
	if keep == nil {
		return x, y
	}
	xs, ys := make([]float64, len(keep)), make([]float64, len(keep))
	for j, i := range keep {
		if i < 0 {
			xs[j], ys[j] = math.NaN(), math.NaN()
			continue
		}
		xs[j], ys[j] = x[i], y[i]
	}
	return xs, ys
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// setLog2X makes p's x axis logarithmic with power-of-two ticks over the range of e,
// widened to whole powers of two so that at least two ticks are labelled.
func setLog2X(p *plot.Plot, e extent, maxLabels int) {
	lo, hi := log2Range(e)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = pow2Ticks{maxLabels: maxLabels}
	p.X.Min, p.X.Max = lo, hi
}

// setWindowX makes p's x axis logarithmic over exactly the windows given, with a tick at
// each (see windowTicks).
func setWindowX(p *plot.Plot, windows []float64, dataWidth vg.Length) {
	p.X.Scale = plot.LogScale{}
	p.X.Min, p.X.Max = 1<<10, 1<<20
	if len(windows) > 0 {
		p.X.Min, p.X.Max = windows[0], windows[len(windows)-1]
	}
	p.X.Min, p.X.Max = widenLog(p.X.Min, p.X.Max)
	p.X.Tick.Marker = windowTicks{values: windows, widthPt: dataWidth.Points()}
}

// sortedByX returns the points ordered by x, dropping those whose x is NaN: on a window or
// depth axis order is by value, and a caller that collects buckets in map or arrival order
// still gets a line rather than a zigzag. NaN in y stays, as a gap at its x.
func sortedByX(x, y []float64) ([]float64, []float64) {
	idx := make([]int, 0, len(x))
	for i := range x {
		if !math.IsNaN(x[i]) {
			idx = append(idx, i)
		}
	}
	if slices.IsSortedFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) }) && len(idx) == len(x) {
		return x, y
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	xs, ys := make([]float64, len(idx)), make([]float64, len(idx))
	for j, i := range idx {
		xs[j], ys[j] = x[i], y[i]
	}
	return xs, ys
}

// keepIndexes thins a long series to about maxPts points for drawing: it splits the
// points into maxPts/2 buckets and keeps, for each run of valid points within a bucket, the
// one with the least and the one with the greatest value, in order; -1 marks a gap (one or
// more invalid points). Peaks and cliffs survive; the SVG stays small however long the run.
// It returns nil when no thinning is needed.
func keepIndexes(valid []bool, val []float64, maxPts int) []int {
	n := len(valid)
	if n <= maxPts {
		return nil
	}
	size := (n + maxPts/2 - 1) / (maxPts / 2)
	var out []int
	lo, hi := -1, -1
	flush := func() {
		switch {
		case lo < 0:
		case lo == hi:
			out = append(out, lo)
		case lo < hi:
			out = append(out, lo, hi)
		default:
			out = append(out, hi, lo)
		}
		lo, hi = -1, -1
	}
	for i := range n {
		if i%size == 0 {
			flush()
		}
		if !valid[i] {
			flush()
			if len(out) == 0 || out[len(out)-1] != -1 {
				out = append(out, -1)
			}
			continue
		}
		if lo < 0 || val[i] < val[lo] {
			lo = i
		}
		if hi < 0 || val[i] > val[hi] {
			hi = i
		}
	}
	flush()
	return out
}

// maxLinePoints bounds the points drawn per line (and columns per occupancy figure); a
// 7-inch figure has no more distinct pixels than this at PNGDPI.
const maxLinePoints = 2000

func log2Range(e extent) (lo, hi float64) {
	if !e.ok || e.lo <= 0 {
		return 1 << 10, 1 << 20
	}
	// Exponents stay within float64's range: 2^1024 would be +Inf.
	lo = math.Ldexp(1, max(int(math.Floor(math.Log2(e.lo))), -1074))
	hi = math.Ldexp(1, min(int(math.Ceil(math.Log2(e.hi))), 1023))
	return widenLog(lo, hi)
}

// widenLog turns a zero-width log range into one octave either side, staying within
// positive finite numbers (log axes cannot hold 0 or +Inf).
func widenLog(lo, hi float64) (float64, float64) {
	if lo != hi {
		return lo, hi
	}
	if lo/2 > 0 {
		lo /= 2
	}
	if !math.IsInf(hi*2, 0) {
		hi *= 2
	}
	return lo, hi
}

// yUnit says how a y axis is labelled.
type yUnit int

const (
	unitPlain yUnit = iota
	unitTokens
	unitPercent
)

// setY sets p's y range from the data: from zero (or below, for negative data) to a little
// above the top, so that lines do not run along the plot's edge. A percent axis whose data
// lies in 0…100 is fixed to 0…100 so that panels compare at a glance. fixed, when
// fixed.ok, overrides the data range.
func setY(p *plot.Plot, data, fixed extent, unit yUnit) {
	lo, hi := 0.0, 1.0
	switch {
	case fixed.ok:
		lo, hi = fixed.lo, fixed.hi
	case unit == unitPercent && (!data.ok || data.lo >= 0 && data.hi <= 100):
		lo, hi = 0, 100
	case data.ok:
		lo = math.Min(0, data.lo)
		hi = math.Max(0, data.hi)
		if hi == lo {
			hi = lo + 1
		}
		span := hi - lo
		if data.hi > 0 && isFinite(hi+0.05*span) {
			hi += 0.05 * span
		}
		if data.lo < 0 && isFinite(lo-0.05*span) {
			lo -= 0.05 * span
		}
	}
	p.Y.Min, p.Y.Max = lo, hi
	switch {
	case unit == unitPercent && lo == 0 && hi == 100:
		p.Y.Tick.Marker = percentTicks{}
	default:
		p.Y.Tick.Marker = linearTicks{target: 5, tokens: unit == unitTokens}
	}
}

// edgePad asks gonum to keep room for a glyph at every edge of the data area, whether or not
// data lies there, so that aligned panels put their titles and axes at the same heights.
type edgePad struct{}

func (edgePad) Plot(draw.Canvas, *plot.Plot) {}

func (edgePad) GlyphBoxes(*plot.Plot) []plot.GlyphBox {
	r := glyphRadius + lineWidth
	box := vg.Rectangle{Min: vg.Point{X: -r, Y: -r}, Max: vg.Point{X: r, Y: r}}
	return []plot.GlyphBox{{X: 0, Y: 0, Rectangle: box}, {X: 1, Y: 1, Rectangle: box}}
}

// axisLabel joins a quantity and its unit: "Cost (USD per run)".
func axisLabel(label, unit string) string {
	if unit == "" {
		return label
	}
	return label + " (" + unit + ")"
}

func unitKind(unit string) yUnit {
	switch unit {
	case "%":
		return unitPercent
	case "tokens", "tokens per request", "tokens/request":
		return unitTokens
	}
	return unitPlain
}

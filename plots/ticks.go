package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// pow2Ticks marks every power of two in range, labelled with binary suffixes (8K = 8192,
// 1M = 1048576), as model windows are quoted. When more than maxLabels powers fall in
// range, only every n-th keeps a label (the rest stay as minor ticks) so labels never
// overlap in a narrow panel.
type pow2Ticks struct {
	maxLabels int
}

func (t pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	k0 := int(math.Ceil(math.Log2(lo) - 1e-9))
	k1 := int(math.Floor(math.Log2(hi) + 1e-9))
	count := k1 - k0 + 1
	if count <= 0 {
		return nil
	}
	every := 1
	if t.maxLabels > 0 && count > t.maxLabels {
		every = (count + t.maxLabels - 1) / t.maxLabels
	}
	ticks := make([]plot.Tick, 0, count)
	for k := k0; k <= k1; k++ {
		v := math.Ldexp(1, k)
		tk := plot.Tick{Value: v}
		// Label by exponent, not by position, so panels with the same range label the
		// same ticks.
		if mod(k, every) == 0 {
			tk.Label = pow2Label(v)
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

func mod(a, b int) int {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// pow2Label writes a power of two with a binary suffix: 512, 1K, 128K, 1M, 2M.
func pow2Label(v float64) string {
	switch {
	case v >= 1<<30:
		return strconv.FormatFloat(v/(1<<30), 'g', 4, 64) + "G"
	case v >= 1<<20:
		return strconv.FormatFloat(v/(1<<20), 'g', 4, 64) + "M"
	case v >= 1<<10:
		return strconv.FormatFloat(v/(1<<10), 'g', 4, 64) + "K"
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}

// linearTicks labels about target round values (steps of 1, 2, 2.5 or 5 times a power of
// ten) in range; gonum's default aims at three, too few to read a value off a line. tokens
// labels with decimal suffixes (50K, 1.5M), shorter than 150000 and never in exponent
// notation.
type linearTicks struct {
	target  int
	tokens  bool
	integer bool // whole numbers only (request indexes)
}

func (t linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	step := niceStep((hi - lo) / float64(max(t.target, 1)))
	if t.integer {
		step = math.Ceil(step) // 1, 2, 3 (from 2.5), 5, 10, …
	}
	// Work in whole multiples of step so that labels are exact (no 0.30000000000000004).
	first, last := math.Ceil(lo/step-1e-9), math.Floor(hi/step+1e-9)
	if !(step > 0) || !isFinite(first) || !isFinite(last) || last-first > 100 {
		return nil // a range at the edge of float64 (denormal or near overflow)
	}
	var ticks []plot.Tick
	for m := first; m <= last; m++ {
		v := m * step
		p := math.Pow(10, float64(decimals(step)))
		label := strconv.FormatFloat(math.Round(v*p)/p, 'f', -1, 64)
		if t.tokens {
			label = tokenLabel(v)
		}
		if v == 0 {
			label = "0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// niceStep rounds raw up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// decimals is how many decimal places a multiple of step needs.
func decimals(step float64) int {
	for d := 0; d < 10; d++ {
		scaled := step * math.Pow(10, float64(d))
		if math.Abs(scaled-math.Round(scaled)) < 1e-6*scaled {
			return d
		}
	}
	return 10
}

func tokenLabel(v float64) string {
	a := math.Abs(v)
	switch {
	case a < 1e-9:
		return "0"
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'g', 4, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "K"
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}

// percentTicks labels 0, 25, 50, 75 and 100 on a fixed 0–100 axis.
type percentTicks struct{}

func (percentTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for v := 0.0; v <= 100; v += 25 {
		if v >= lo-1e-9 && v <= hi+1e-9 {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
		}
	}
	return ticks
}

// windowTicks marks the windows a sweep actually ran on a log axis, so that every point
// sits on a tick whatever the windows are (8192 or 8000, 200K, 272K). Labels that would
// collide are dropped (their ticks stay, unlabelled): the first and last windows always
// keep theirs, the others are kept left to right while they fit.
type windowTicks struct {
	values  []float64 // sorted, distinct, > 0
	widthPt float64   // width of the data area the axis spans, estimated
}

// windowLabelGap is the least space between two tick labels.
const windowLabelGap = 4.0

func (t windowTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	ts := textStyle(sansFont, tickLabelSize)
	perLog := t.widthPt / math.Log(hi/lo)
	type span struct{ left, right float64 }
	at := func(v float64, label string) span {
		mid := perLog * math.Log(v/lo)
		w := ts.Width(label).Points()
		return span{mid - w/2, mid + w/2}
	}
	var ticks []plot.Tick
	for _, v := range t.values {
		if v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	if len(ticks) == 0 {
		return nil
	}
	n := len(ticks)
	lastLabel := windowLabel(ticks[n-1].Value)
	last := at(ticks[n-1].Value, lastLabel)
	ticks[n-1].Label = lastLabel
	prevRight := math.Inf(-1)
	for i := range n - 1 {
		label := windowLabel(ticks[i].Value)
		s := at(ticks[i].Value, label)
		if i > 0 && (s.left < prevRight+windowLabelGap || s.right+windowLabelGap > last.left) {
			continue
		}
		ticks[i].Label = label
		prevRight = s.right
	}
	return ticks
}

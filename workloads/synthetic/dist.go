package synthetic

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// LogNormal is a log-normal distribution given the way people think about
// sizes and durations: its median and the standard deviation (Sigma) of its
// natural logarithm, clamped to [Min, Max] so that one unlucky draw cannot
// produce a 10 GB file. Max 0 means no upper clamp.
type LogNormal struct {
	Median float64 `toml:"median"`
	Sigma  float64 `toml:"sigma"`
	Min    float64 `toml:"min"`
	Max    float64 `toml:"max"`
}

// Draw returns one sample.
func (d LogNormal) Draw(r *rand.Rand) float64 {
	v := d.Median
	if d.Sigma > 0 {
		v = d.Median * math.Exp(d.Sigma*r.NormFloat64())
	}
	if v < d.Min {
		v = d.Min
	}
	if d.Max > 0 && v > d.Max {
		v = d.Max
	}
	return v
}

// DrawInt returns one sample rounded to an integer of at least 1.
func (d LogNormal) DrawInt(r *rand.Rand) int {
	n := int(math.Round(d.Draw(r)))
	return max(n, 1)
}

// check validates the distribution; key names it in errors.
func (d LogNormal) check(key string) error {
	switch {
	case !(d.Median > 0) || math.IsInf(d.Median, 0):
		return &keyError{key + ".median", fmt.Errorf("median %v: want a finite number > 0", d.Median)}
	case !(d.Sigma >= 0) || d.Sigma > 5:
		return &keyError{key + ".sigma", fmt.Errorf("sigma %v: want 0..5", d.Sigma)}
	case !(d.Min >= 0) || math.IsInf(d.Min, 0):
		return &keyError{key + ".min", fmt.Errorf("min %v: want a finite number >= 0", d.Min)}
	case d.Max != 0 && (!(d.Max >= d.Min) || math.IsInf(d.Max, 0)):
		return &keyError{key + ".max", fmt.Errorf("max %v: want 0 (no clamp) or a finite number >= min %v", d.Max, d.Min)}
	}
	return nil
}

// checkBounded validates d and also requires its draws to stay at or below
// limit, so that a parameter file cannot ask for an unbounded amount of text.
func (d LogNormal) checkBounded(key string, limit float64) error {
	if err := d.check(key); err != nil {
		return err
	}
	if d.Max == 0 || d.Max > limit {
		return &keyError{key + ".max", fmt.Errorf("max %v: want a clamp between min and %v", d.Max, limit)}
	}
	return nil
}

// pickWeighted returns a key of w chosen with probability proportional to
// its weight; keys is w's keys in sorted order (map iteration is random).
func pickWeighted(r *rand.Rand, keys []string, w map[string]float64) string {
	total := 0.0
	for _, k := range keys {
		total += w[k]
	}
	x := r.Float64() * total
	for _, k := range keys {
		x -= w[k]
		if x < 0 {
			return k
		}
	}
	return keys[len(keys)-1]
}

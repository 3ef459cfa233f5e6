package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultMaxTokens is a region's ceiling when it declares neither budget nor
// max_tokens.
const DefaultMaxTokens = 5000

// Budget is a region's declared size: an absolute token count, or a share of
// the model window with an optional cap (max_tokens) and floor (min_tokens).
type Budget struct {
	Percent  bool
	Fraction float64 // share of the window, 0 < f <= 1, when Percent
	Tokens   int     // absolute tokens, when !Percent
	Max      int     // cap on a percentage; 0 = none
	Min      int     // floor on a percentage; 0 = none
}

// ParseBudget parses "N%" into a fraction of the window, with the reference
// runtime's three error texts. compact_at is parsed by the same function.
func ParseBudget(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if !strings.HasSuffix(t, "%") {
		return 0, fmt.Errorf("budget '%s' must end with '%%' (e.g. \"35%%\")", s)
	}
	num := strings.TrimSpace(strings.TrimSuffix(t, "%"))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) {
		return 0, fmt.Errorf("budget '%s' is not a valid number", s)
	}
	if !(v > 0 && v <= 100) {
		return 0, fmt.Errorf("budget '%s' must be greater than 0%% and at most 100%%", s)
	}
	return v / 100, nil
}

// roundHalfAway rounds half away from zero, as Rust's f64::round does.
func roundHalfAway(x float64) int {
	return int(math.Round(x))
}

// Resolve works the budget out against a window: the percentage, then the
// cap, then the floor (so a floor above the cap wins).
func (b Budget) Resolve(window int) int {
	if !b.Percent {
		return b.Tokens
	}
	v := roundHalfAway(float64(window) * b.Fraction)
	if b.Max > 0 && v > b.Max {
		v = b.Max
	}
	if b.Min > 0 && v < b.Min {
		v = b.Min
	}
	return v
}

// String renders the budget the way a blueprint writes it.
func (b Budget) String() string {
	if !b.Percent {
		return strconv.Itoa(b.Tokens)
	}
	s := percentString(b.Fraction) + "%"
	if b.Max > 0 {
		s += fmt.Sprintf(" max %d", b.Max)
	}
	if b.Min > 0 {
		s += fmt.Sprintf(" min %d", b.Min)
	}
	return s
}

// noThreshold is the "no cap" sentinel of the compacting threshold table.
const noThreshold = math.MaxInt

// resolveThreshold applies ENGINE.md §2.3 at resolve time.
func (d *RegionDef) resolveThreshold(resolved int) int {
	if d.Kind != KindCompacting {
		return 0
	}
	if d.HasCompactAt {
		v := roundHalfAway(float64(resolved) * d.CompactAt)
		if d.storedThreshold < v {
			return d.storedThreshold
		}
		return v
	}
	return d.storedThreshold
}

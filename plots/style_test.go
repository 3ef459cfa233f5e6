package plots

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// srgbLightness is CIELAB L* of an sRGB colour, to check the tables' stated lightness.
func srgbLightness(r, g, b uint8) float64 {
	lin := func(c uint8) float64 {
		v := float64(c) / 255
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	y := 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
	if y > 216.0/24389 {
		return 116*math.Cbrt(y) - 16
	}
	return y * 24389 / 27
}

// TestStylesReadableInGrey holds the promise that series differ in grey: every style has
// its own lightness (≥ 4 L* apart, a visible step), and its own dash-and-glyph pair.
func TestStylesReadableInGrey(t *testing.T) {
	for i, s := range styles {
		c := s.color.(interface{ RGBA() (r, g, b, a uint32) })
		r, g, b, _ := c.RGBA()
		got := srgbLightness(uint8(r>>8), uint8(g>>8), uint8(b>>8))
		if math.Abs(got-styleLightness[i]) > 2 {
			t.Errorf("style %d: L* = %.1f, table says %.0f", i, got, styleLightness[i])
		}
		if got > 78 {
			t.Errorf("style %d: L* = %.1f is too light for a line on white", i, got)
		}
	}
	for i := range styles {
		for j := i + 1; j < len(styles); j++ {
			if d := math.Abs(styleLightness[i] - styleLightness[j]); d < 4 {
				t.Errorf("styles %d and %d differ by %.0f L*, want ≥ 4", i, j, d)
			}
			if fmt.Sprintf("%v %T", styles[i].dashes, styles[i].glyph) == fmt.Sprintf("%v %T", styles[j].dashes, styles[j].glyph) {
				t.Errorf("styles %d and %d share dashes and glyph", i, j)
			}
		}
	}
	for i, c := range fills {
		if got := srgbLightness(c.R, c.G, c.B); math.Abs(got-fillLightness[i]) > 3 {
			t.Errorf("fill %d: L* = %.1f, table says %.0f", i, got, fillLightness[i])
		}
		// Neighbouring bands (wrapping around, as fills repeat) must differ in grey.
		next := fillLightness[(i+1)%len(fills)]
		if d := math.Abs(fillLightness[i] - next); d < 20 {
			t.Errorf("fills %d and %d differ by %.0f L*, want ≥ 20", i, (i+1)%len(fills), d)
		}
	}
	for i := range 6 {
		for j := i + 1; j < 6; j++ {
			if d := math.Abs(fillLightness[i] - fillLightness[j]); d < 10 {
				t.Errorf("fills %d and %d differ by %.0f L*, want ≥ 10", i, j, d)
			}
		}
	}
}

func TestAssignStyles(t *testing.T) {
	leviath := []string{"regions:coder", "regions:researcher", "regions:reviewer", "regions:planner", "regions:writer"}
	tests := []struct {
		name string
		keys []string
		want map[string]int // only the keys checked
	}{
		{"canonical", []string{"flat", "flat-compact", "unbounded"}, map[string]int{"flat": 0, "flat-compact": 2, "unbounded": 9}},
		{"order does not move canonical", []string{"unbounded", "clairvoyant", "flat"}, map[string]int{"flat": 0, "unbounded": 9, "clairvoyant": 10}},
		// A hashed key that lands on a canonical slot must not push the canonical one out,
		// whatever the order.
		{"canonical wins over hashed", append(hashedOnto(0), "flat"), map[string]int{"flat": 0}},
		{"first region layout gets the region style", []string{"flat", "regions:coder"}, map[string]int{"regions:coder": 4}},
		{"further region layouts", []string{"regions:b", "unbounded", "regions:a", "regions:c"}, map[string]int{"regions:b": 4, "regions:a": 5, "regions:c": 6}},
		{"hashed key cannot take the region style", append(hashedOnto(4), "regions:x"), map[string]int{"regions:x": 4}},
		{"canonical wins over regions", append(append([]string{}, leviath...), "flat-keep-system", "flat-compact", "flat-clear-tools", "as-recorded"),
			map[string]int{"flat-keep-system": 1, "flat-compact": 2, "flat-clear-tools": 3, "as-recorded": 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assignStyles(tt.keys)
			for k, w := range tt.want {
				if got[k] != w {
					t.Errorf("style of %q = %d, want %d (all: %v)", k, got[k], w, got)
				}
			}
			assertDistinct(t, tt.keys, got)
		})
	}

	t.Run("all distinct up to the table size", func(t *testing.T) {
		keys := append([]string{"flat", "flat-keep-system", "flat-compact", "flat-clear-tools", "unbounded", "clairvoyant"}, leviath...)
		keys = append(keys, "custom")
		if len(keys) != len(styles) {
			t.Fatalf("test wants %d keys, has %d", len(styles), len(keys))
		}
		assertDistinct(t, keys, assignStyles(keys))
	})
	t.Run("stable across figures", func(t *testing.T) {
		a := assignStyles([]string{"flat", "regions:coder"})
		b := assignStyles([]string{"regions:coder", "unbounded", "flat"})
		if a["flat"] != b["flat"] || a["regions:coder"] != b["regions:coder"] {
			t.Errorf("styles moved between figures: %v vs %v", a, b)
		}
	})
	t.Run("more keys than styles", func(t *testing.T) {
		var keys []string
		for i := range 2 * len(styles) {
			keys = append(keys, fmt.Sprintf("k%d", i))
		}
		got := assignStyles(keys)
		for _, k := range keys {
			if i, ok := got[k]; !ok || i < 0 || i >= len(styles) {
				t.Errorf("key %q got style %d (ok=%v)", k, i, ok)
			}
		}
	})
}

// hashedOnto returns a non-canonical key whose preferred style is slot.
func hashedOnto(slot int) []string {
	for i := 0; ; i++ {
		k := fmt.Sprintf("custom-%d", i)
		if slots, rank := candidates(k); rank == rankOther && slots[0] == slot {
			return []string{k}
		}
	}
}

func assertDistinct(t *testing.T, keys []string, got map[string]int) {
	t.Helper()
	seen := map[int]string{}
	for _, k := range keys {
		if other, dup := seen[got[k]]; dup && other != k {
			t.Errorf("%q and %q share style %d", k, other, got[k])
		}
		seen[got[k]] = k
	}
}

func TestPow2Ticks(t *testing.T) {
	tests := []struct {
		name      string
		lo, hi    float64
		maxLabels int
		want      string // labelled ticks; "." for an unlabelled one
	}{
		{"8K to 2M, five labels", 8192, 2 << 20, 5, ". 16K . 64K . 256K . 1M ."},
		{"8K to 2M, all labels", 8192, 2 << 20, 12, "8K 16K 32K 64K 128K 256K 512K 1M 2M"},
		{"small depths", 256, 4096, 12, "256 512 1K 2K 4K"},
		{"fractions", 0.25, 2, 12, "0.25 0.5 1 2"},
		{"range inside one octave", 150000, 200000, 5, ""},
		{"bad range", 0, 10, 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, tk := range (pow2Ticks{maxLabels: tt.maxLabels}).Ticks(tt.lo, tt.hi) {
				if tk.Label == "" {
					got = append(got, ".")
				} else {
					got = append(got, tk.Label)
				}
			}
			if s := fmt.Sprint(got); s != "["+tt.want+"]" {
				t.Errorf("ticks = %s, want [%s]", s, tt.want)
			}
		})
	}
}

func TestLog2Range(t *testing.T) {
	tests := []struct {
		name   string
		e      extent
		lo, hi float64
	}{
		{"powers of two", extent{8192, 2 << 20, true}, 8192, 2 << 20},
		{"decimal window widens to powers", extent{200000, 200000, true}, 131072, 262144},
		{"one power of two", extent{65536, 65536, true}, 32768, 131072},
		{"no data", extent{}, 1024, 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := log2Range(tt.e)
			if lo != tt.lo || hi != tt.hi {
				t.Errorf("log2Range = [%v, %v], want [%v, %v]", lo, hi, tt.lo, tt.hi)
			}
		})
	}
}

func TestLinearTicks(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi float64
		tokens bool
		want   string
	}{
		{"tokens", 0, 68000, true, "[0 20K 40K 60K]"},
		{"big tokens", 0, 2.1e6, true, "[0 500K 1M 1.5M 2M]"},
		{"requests", 1, 160, false, "[20 40 60 80 100 120 140 160]"},
		{"dollars", 0, 0.031, false, "[0 0.01 0.02 0.03]"},
		{"quarter steps", 0, 1.2, false, "[0 0.25 0.5 0.75 1]"},
		{"negative", -2, 3, false, "[-2 -1 0 1 2 3]"},
		{"empty range", 5, 5, false, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := 5
			if !tt.tokens && tt.name == "requests" {
				target = 8
			}
			var got []string
			for _, tk := range (linearTicks{target: target, tokens: tt.tokens}).Ticks(tt.lo, tt.hi) {
				got = append(got, tk.Label)
			}
			if s := fmt.Sprint(got); s != tt.want {
				t.Errorf("ticks = %s, want %s", s, tt.want)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	tests := []struct {
		fn   func(float64) string
		name string
		v    float64
		want string
	}{
		{pow2Label, "pow2 512", 512, "512"},
		{pow2Label, "pow2 1K", 1024, "1K"},
		{pow2Label, "pow2 128K", 131072, "128K"},
		{pow2Label, "pow2 2M", 2 << 20, "2M"},
		{tokenLabel, "tokens 0", 0, "0"},
		{tokenLabel, "tokens 12.5K", 12500, "12.5K"},
		{tokenLabel, "tokens 1.5M", 1.5e6, "1.5M"},
		{tokenLabel, "tokens negative", -3000, "-3K"},
		{windowLabel, "window 128K", 131072, "128K"},
		{windowLabel, "window 200K", 200000, "200K"},
		{windowLabel, "window 1M binary", 1 << 20, "1M"},
		{windowLabel, "window 1M decimal", 1e6, "1M"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fn(tt.v); got != tt.want {
				t.Errorf("label(%v) = %q, want %q", tt.v, got, tt.want)
			}
		})
	}
}

func TestWindowTicks(t *testing.T) {
	tests := []struct {
		name    string
		windows []float64
		widthPt float64
		want    string // "." for a window whose label was dropped
	}{
		{"default sweep, wide", windows, 600, "[8K 16K 32K 64K 128K 200K 272K 1M 2M]"},
		{"default sweep, panel", windows, 166, "[8K 16K 32K 64K . 200K . 1M 2M]"},
		{"default sweep, narrow", windows, 80, "[8K . 32K . . 200K . . 2M]"},
		{"binary windows", []float64{8192, 131072, 1 << 20}, 166, "[8K 128K 1M]"},
		{"crowded end keeps the last", []float64{1000, 100000, 110000}, 100, "[1K . 110K]"},
		{"one window", []float64{65536}, 166, "[64K]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := tt.windows[0], tt.windows[len(tt.windows)-1]
			if lo == hi {
				lo, hi = lo/2, hi*2
			}
			var got []string
			for _, tk := range (windowTicks{values: tt.windows, widthPt: tt.widthPt}).Ticks(lo, hi) {
				if tk.Label == "" {
					got = append(got, ".")
				} else {
					got = append(got, tk.Label)
				}
			}
			if s := fmt.Sprint(got); s != tt.want {
				t.Errorf("ticks = %s, want %s", s, tt.want)
			}
		})
	}
}

func TestSortedByX(t *testing.T) {
	x, y := sortedByX([]float64{4096, 1024, math.NaN(), 2048}, []float64{1, 2, 3, math.NaN()})
	if fmt.Sprint(x, y) != "[1024 2048 4096] [2 NaN 1]" {
		t.Errorf("sortedByX = %v %v", x, y)
	}
}

func TestKeepIndexes(t *testing.T) {
	const n = 10000
	valid := make([]bool, n)
	val := make([]float64, n)
	for i := range n {
		valid[i] = i < 5000 || i >= 5010 // a gap of ten points
		val[i] = float64(i % 100)
	}
	val[1234] = 1e6 // a spike must survive
	val[7777] = -5  // and a dip
	keep := keepIndexes(valid, val, 500)
	if len(keep) > 520 {
		t.Errorf("kept %d points, want about 500", len(keep))
	}
	has := func(i int) bool { return slices.Contains(keep, i) }
	if !has(1234) || !has(7777) {
		t.Error("the spike or the dip was thinned away")
	}
	gaps := 0
	for j, i := range keep {
		if i < 0 {
			gaps++
			continue
		}
		if !valid[i] {
			t.Errorf("kept invalid point %d", i)
		}
		if j > 0 && keep[j-1] >= 0 && i <= keep[j-1] {
			t.Errorf("indexes out of order at %d: %d after %d", j, i, keep[j-1])
		}
	}
	if gaps != 1 {
		t.Errorf("%d gaps kept, want 1", gaps)
	}
	if keepIndexes(valid[:400], val[:400], 500) != nil {
		t.Error("a short series was thinned")
	}
}

// TestCanonicalGlyphs: the policies a report shows together never share a glyph.
func TestCanonicalGlyphs(t *testing.T) {
	seen := map[string]string{}
	for name, i := range canonicalStyles {
		g := fmt.Sprintf("%T", styles[i].glyph)
		if other, dup := seen[g]; dup {
			t.Errorf("%s and %s share glyph %s", name, other, g)
		}
		seen[g] = name
	}
}

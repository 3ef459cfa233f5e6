package plots

import (
	"hash/fnv"
	"image/color"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// style is how one series is drawn. The table below is fixed: a style index means the same
// look in every figure.
type style struct {
	color  color.Color
	dashes []vg.Length // nil: solid
	glyph  draw.GlyphDrawer
}

func rgb(hex uint32) color.RGBA {
	return color.RGBA{R: uint8(hex >> 16), G: uint8(hex >> 8), B: uint8(hex), A: 0xff}
}

// styles: colours picked in CIELAB with lightness L* 20…75 in steps of 5, each index its own
// L* so that no two series share a grey level when printed without colour; hues spread so
// that in colour neighbours differ too. Dash patterns and glyphs vary independently so that a
// series can be told apart by shape alone.
var styles = [...]style{
	{rgb(0xd2472c), nil, draw.CircleGlyph{}},                                     // L*50 vermilion
	{rgb(0xed982b), []vg.Length{vg.Points(6), vg.Points(3)}, draw.SquareGlyph{}}, // L*70 orange
	{rgb(0x9c0278), []vg.Length{vg.Points(2), vg.Points(2)}, draw.TriangleGlyph{}},
	{rgb(0x889906), []vg.Length{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}, draw.CrossGlyph{}},
	{rgb(0x003c73), nil, draw.PyramidGlyph{}},
	{rgb(0x0baccf), []vg.Length{vg.Points(4), vg.Points(4)}, draw.RingGlyph{}},
	{rgb(0x036b54), []vg.Length{vg.Points(10), vg.Points(4)}, draw.BoxGlyph{}},
	{rgb(0x61d061), []vg.Length{vg.Points(1), vg.Points(3)}, draw.PlusGlyph{}},
	{rgb(0xa85302), []vg.Length{vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}, draw.SquareGlyph{}},
	{rgb(0x303030), []vg.Length{vg.Points(12), vg.Points(3)}, draw.RingGlyph{}},
	{rgb(0x7e73ee), nil, draw.TriangleGlyph{}},
	{rgb(0x025228), []vg.Length{vg.Points(3), vg.Points(5)}, draw.CircleGlyph{}},
}

// styleLightness is the CIELAB L* of each style's colour, kept beside the table so that a
// test can hold the "distinct in grey" promise.
var styleLightness = [len(styles)]float64{50, 70, 35, 60, 25, 65, 40, 75, 45, 20, 55, 30}

// canonicalStyles pins the policies of DESIGN.md §3 to fixed styles. Region layouts share
// the slots regionSlots…regionSlots+3, chosen by the blueprint name.
var canonicalStyles = map[string]int{
	"flat":             0,
	"flat-keep-system": 1,
	"flat-compact":     2,
	"flat-clear-tools": 3,
	"regions":          4,
	"as-recorded":      8,
	"unbounded":        9,
	"clairvoyant":      10,
}

const (
	regionSlots     = 4
	regionSlotCount = 4
)

// preferredStyle is the style a key asks for, before collisions within one figure are
// resolved; the second result ranks keys for that resolution (canonical first).
func preferredStyle(key string) (index, rank int) {
	if i, ok := canonicalStyles[key]; ok {
		return i, 0
	}
	if name, ok := strings.CutPrefix(key, "regions:"); ok {
		return regionSlots + int(hash(name)%regionSlotCount), 1
	}
	return int(hash(key) % uint32(len(styles))), 2
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// assignStyles gives each distinct key of one figure a style index. Canonical policy names
// always get their own slot; region layouts and other keys take their preferred slot when
// it is free and otherwise the next free one, resolved in the order given, so the result
// depends only on the set of keys and their order. Past len(styles) keys, styles repeat.
func assignStyles(keys []string) map[string]int {
	out := make(map[string]int, len(keys))
	var taken [len(styles)]bool
	for rank := range 3 {
		for _, k := range keys {
			if _, done := out[k]; done {
				continue
			}
			want, r := preferredStyle(k)
			if r != rank {
				continue
			}
			got := want
			for n := 0; n < len(styles) && taken[got]; n++ {
				got = (got + 1) % len(styles)
			}
			if taken[got] { // more keys than styles: share the preferred one
				got = want
			}
			taken[got] = true
			out[k] = got
		}
	}
	return out
}

// fills are the area colours of the occupancy figure, in region order. Lightness alternates
// dark/light so that adjacent bands differ in grey; bands are also separated by white rules.
var fills = [...]color.RGBA{
	rgb(0x0a5781), // L*35
	rgb(0xe9c795), // L*82
	rgb(0xad6a64), // L*52
	rgb(0xdfeac0), // L*92
	rgb(0x6da27a), // L*62
	rgb(0x825e8b), // L*45
	rgb(0x71c3e8), // L*75
	rgb(0x384718), // L*28
	rgb(0xfdd3d3), // L*88
	rgb(0x758bbf), // L*58
}

var fillLightness = [len(fills)]float64{35, 82, 52, 92, 62, 45, 75, 28, 88, 58}

// Text styles. Liberation Sans ships with gonum/plot, so text metrics (and hence layout)
// are the same on every machine.
var (
	sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	boldFont = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

const (
	figureTitleSize = 14
	panelTitleSize  = 11
	axisLabelSize   = 10
	tickLabelSize   = 9
	legendSize      = 9
)

var (
	lineWidth      = vg.Points(1.5)
	glyphRadius    = vg.Points(2.8)
	windowLineDash = []vg.Length{vg.Points(1), vg.Points(2)}
	prefixDash     = []vg.Length{vg.Points(5), vg.Points(3)}
)

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
// series can be told apart by shape alone. The eight canonical slots (flat family, first
// region slot, as-recorded, unbounded, clairvoyant: the policies a report shows together)
// have eight different glyphs; the extra region slots reuse glyphs with their own dashes.
var styles = [...]style{
	{rgb(0xd2472c), nil, draw.CircleGlyph{}},                      // 0 flat: L*50 vermilion
	{rgb(0xed982b), dash(6, 3), draw.SquareGlyph{}},               // 1 flat-keep-system: L*70 orange
	{rgb(0x9c0278), dash(2, 2), draw.TriangleGlyph{}},             // 2 flat-compact: L*35 magenta
	{rgb(0x889906), dash(8, 3, 2, 3), draw.CrossGlyph{}},          // 3 flat-clear-tools: L*60 olive
	{rgb(0x003c73), nil, draw.BoxGlyph{}},                         // 4 regions: L*25 navy
	{rgb(0x7e73ee), dash(4, 4), draw.PyramidGlyph{}},              // 5 regions: L*55 violet
	{rgb(0x036b54), dash(10, 4), draw.CircleGlyph{}},              // 6 regions: L*40 teal
	{rgb(0x61d061), dash(1, 3), draw.PlusGlyph{}},                 // 7 regions: L*75 green
	{rgb(0xa85302), dash(6, 2, 2, 2), draw.PlusGlyph{}},           // 8 as-recorded: L*45 brown
	{rgb(0x303030), dash(12, 3), draw.RingGlyph{}},                // 9 unbounded: L*20 charcoal
	{rgb(0x0baccf), dash(10, 2, 2, 2, 2, 2), draw.PyramidGlyph{}}, // 10 clairvoyant: L*65 sky blue
	{rgb(0x025228), dash(3, 5), draw.TriangleGlyph{}},             // 11: L*30 dark green
}

func dash(pts ...float64) []vg.Length {
	out := make([]vg.Length, len(pts))
	for i, p := range pts {
		out[i] = vg.Points(p)
	}
	return out
}

// styleLightness is the CIELAB L* of each style's colour, kept beside the table so that a
// test can hold the "distinct in grey" promise.
var styleLightness = [len(styles)]float64{50, 70, 35, 60, 25, 55, 40, 75, 45, 20, 65, 30}

// canonicalStyles pins the policies of DESIGN.md §3 to fixed styles.
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

// Region layouts ("regions:<blueprint>") take the region slots in the order they appear in
// a figure: a report compares one layout per workload against the flat baselines, and that
// layout always gets the region style (slot 4); further layouts take 5, 6, 7.
const (
	regionSlots     = 4
	regionSlotCount = 4
)

// Ranks order the assignment: canonical names first, so that nothing can push them out of
// their slot, then region layouts, then any other key.
const (
	rankCanonical = iota
	rankRegion
	rankOther
	rankCount
)

// candidates lists the slots a key may take, best first, and the key's rank.
func candidates(key string) (slots []int, rank int) {
	if i, ok := canonicalStyles[key]; ok {
		return []int{i}, rankCanonical
	}
	start := int(hash(key) % uint32(len(styles)))
	rank = rankOther
	if strings.HasPrefix(key, "regions:") {
		start, rank = regionSlots, rankRegion
	}
	for n := range len(styles) {
		slots = append(slots, (start+n)%len(styles))
	}
	return slots, rank
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// assignStyles gives each distinct key of one figure a style index: canonical policy names
// their fixed slot, region layouts the region slots in order of appearance, other keys a
// slot chosen by a hash of the key (the next free one on a collision). The result depends
// only on the keys and their order. Past len(styles) keys, styles repeat.
func assignStyles(keys []string) map[string]int {
	out := make(map[string]int, len(keys))
	var taken [len(styles)]bool
	for rank := range rankCount {
		for _, k := range keys {
			if _, done := out[k]; done {
				continue
			}
			slots, r := candidates(k)
			if r != rank {
				continue
			}
			got := slots[0] // when every slot is taken: share the preferred one
			for _, s := range slots {
				if !taken[s] {
					got = s
					break
				}
			}
			taken[got] = true
			out[k] = got
		}
	}
	return out
}

// fills are the area colours of the occupancy figure, in region order. Lightness alternates
// dark/light so that adjacent bands differ in grey (bands are also separated by white
// rules), and the first six, enough for most layouts, are all at least 10 L* apart so that
// a band can be matched to its legend entry in grey.
var fills = [...]color.RGBA{
	rgb(0x084b70), // L*30 blue
	rgb(0xc8a672), // L*70 sand
	rgb(0x94504a), // L*42 brick
	rgb(0xdee1a3), // L*88 pale olive
	rgb(0x589067), // L*55 green
	rgb(0x45234f), // L*20 aubergine
	rgb(0x79d1f9), // L*80 sky
	rgb(0xc2767a), // L*58 rose
	rgb(0x035f5b), // L*36 teal
	rgb(0xfee3d3), // L*92 shell
}

var fillLightness = [len(fills)]float64{30, 70, 42, 88, 55, 20, 80, 58, 36, 92}

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

package plots

import (
	"bytes"
	"encoding/xml"
	"flag"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/internal/golden"
)

var (
	pngDir = flag.String("pngdir", "", "also write each golden figure as PNG into this directory, to look at")
)

// windows are the default sweep of bench/default.toml: decimal, uneven near the top.
var windows = []float64{8e3, 16e3, 32e3, 64e3, 128e3, 200e3, 272e3, 1e6, 2e6}

// curve gives a smooth, policy-specific value per window: a logistic in log2(window).
func curve(mid, lo, hi float64) []float64 {
	ys := make([]float64, len(windows))
	for i, w := range windows {
		t := math.Log2(w) - mid
		ys[i] = lo + (hi-lo)/(1+math.Exp(-1.3*t))
	}
	return ys
}

func samplePanels() []Panel {
	policies := []string{"flat", "flat-compact", "regions:coder", "unbounded"}
	mids := []float64{17, 15.5, 14, 10}
	mk := func(f func(i int) []float64) []Series {
		out := make([]Series, len(policies))
		for i, p := range policies {
			out[i] = Series{Name: p, X: windows, Y: f(i)}
		}
		out[1].Y[len(windows)-1] = math.NaN() // flat-compact not run at 2M
		return out
	}
	return []Panel{
		{Title: "Task retained", YLabel: "Task retained", Unit: "%", Series: mk(func(i int) []float64 { return curve(mids[i], 10, 100) })},
		{Title: "Fact recall", YLabel: "Fact recall", Unit: "%", Series: mk(func(i int) []float64 { return curve(mids[i]+0.5, 5, 95) })},
		{Title: "Cache hit", YLabel: "Cache hit", Unit: "%", Series: mk(func(i int) []float64 { return curve(mids[i]-1, 20, 90-5*float64(i)) })},
		{Title: "Waste", YLabel: "Waste", Unit: "%", Series: mk(func(i int) []float64 { return curve(mids[i], 60-10*float64(i), 5) })},
		{Title: "Cost", YLabel: "Cost", Unit: "USD per run", Series: mk(func(i int) []float64 {
			ys := curve(mids[i], 0.4, 2.5+float64(i))
			return ys
		})},
	}
}

// sampleRuns: flat grows until the window and then drops its oldest messages every request
// (prefix lost), regions level off well below the window with a stable prefix.
func sampleRuns() []RunSeries {
	const n, window = 160, 65536.0
	flat := RunSeries{Name: "flat", Request: make([]float64, n), PrefixStable: make([]float64, n)}
	reg := RunSeries{Name: "regions:coder", Request: make([]float64, n), PrefixStable: make([]float64, n)}
	for i := range n {
		grow := 3000 + 700*float64(i) + 900*math.Sin(float64(i)/3)
		flat.Request[i] = math.Min(grow, window-4096-800*math.Abs(math.Sin(float64(i))))
		reg.Request[i] = 3000 + 38000*(1-math.Exp(-float64(i)/25)) + 1500*math.Sin(float64(i)/4)
		if i > 0 {
			flat.PrefixStable[i] = flat.Request[i-1]
			if grow > window-4096 {
				flat.PrefixStable[i] = 2500
			}
			reg.PrefixStable[i] = 0.85 * reg.Request[i-1]
		}
	}
	return []RunSeries{flat, reg}
}

func sampleOccupancy() (regions []string, x []float64, tokens [][]float64) {
	regions = []string{"system", "task", "memory", "tools", "conversation", "scratch"}
	const n = 120
	x = indexes(n)
	tokens = make([][]float64, len(regions))
	for r := range regions {
		tokens[r] = make([]float64, n)
	}
	for i := range n {
		t := float64(i)
		tokens[0][i] = 2200
		tokens[1][i] = 800
		tokens[2][i] = math.Min(6000, 60*t)
		tokens[3][i] = 9000 * (0.5 + 0.5*math.Sin(t/7)) * (1 - math.Exp(-t/10))
		tokens[4][i] = math.Min(20000, 300*t)
		tokens[5][i] = 1500 + 1000*math.Sin(t/3)
	}
	tokens[3][70] = math.NaN() // an unmeasured request: a gap through every band
	tokens[3][71] = math.NaN()
	return regions, x, tokens
}

func sampleDepth() []Series {
	var depths []float64
	for k := 8; k <= 19; k++ {
		depths = append(depths, math.Ldexp(1, k))
	}
	mk := func(name string, cliff float64, floor float64) Series {
		ys := make([]float64, len(depths))
		for i, d := range depths {
			ys[i] = floor + (100-floor)/(1+math.Exp(1.8*(math.Log2(d)-cliff)))
		}
		return Series{Name: name, X: depths, Y: ys}
	}
	out := []Series{mk("flat", 15, 0), mk("flat-compact", 13, 20), mk("regions:coder", 17, 55), mk("clairvoyant", 18, 70)}
	out[2].Y[5] = math.NaN() // no probe at that depth: a gap in the line
	return out
}

func goldenFigures() map[string]*Figure {
	regions, x, tokens := sampleOccupancy()
	return map[string]*Figure{
		"window_panels":  WindowPanels("Coder workload: metrics against window size", samplePanels()),
		"request_series": RequestSeries("Coder workload at 64K: request size per request", 65536, sampleRuns()),
		"occupancy":      Occupancy("regions:coder at 64K: region occupancy", regions, x, tokens, 65536),
		"recall_depth":   RecallDepth("Needle workload: fact recall against depth", sampleDepth()),
	}
}

func TestGolden(t *testing.T) {
	for name, f := range goldenFigures() {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			if err := f.WriteSVG(&got); err != nil {
				t.Fatalf("WriteSVG: %v", err)
			}
			if err := wellFormed(got.Bytes()); err != nil {
				t.Fatalf("the SVG is not well-formed XML: %v", err)
			}
			path := filepath.Join("testdata", name+".golden.svg")
			if *pngDir != "" {
				if err := f.Save(filepath.Join(*pngDir, name)); err != nil {
					t.Fatalf("Save: %v", err)
				}
			}
			golden.Check(t, path, got.Bytes(), svgDiff)
		})
	}
}

func wellFormed(doc []byte) error {
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

var svgNumber = regexp.MustCompile(`-?\d+(\.\d+)?(e[-+]?\d+)?`)

// svgDiff compares two SVG documents. Bytes must match, except that numbers may differ by
// 0.01 pt: fused multiply-add on some CPUs moves the last printed digit, and a golden test
// must not fail on that.
func svgDiff(got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	if len(gl) != len(wl) {
		return "got " + strconv.Itoa(len(gl)) + " lines, want " + strconv.Itoa(len(wl))
	}
	for i := range gl {
		if gl[i] == wl[i] {
			continue
		}
		if svgNumber.ReplaceAllString(gl[i], "#") != svgNumber.ReplaceAllString(wl[i], "#") {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + gl[i] + "\n want " + wl[i]
		}
		gn, wn := svgNumber.FindAllString(gl[i], -1), svgNumber.FindAllString(wl[i], -1)
		for j := range gn {
			a, _ := strconv.ParseFloat(gn[j], 64)
			b, _ := strconv.ParseFloat(wn[j], 64)
			if math.Abs(a-b) > 0.01 {
				return "line " + strconv.Itoa(i+1) + ": number " + gn[j] + ", want " + wn[j] + ":\n got  " + gl[i] + "\n want " + wl[i]
			}
		}
	}
	return ""
}

func TestPNG(t *testing.T) {
	f := goldenFigures()["recall_depth"]
	var buf bytes.Buffer
	if err := f.WritePNG(&buf); err != nil {
		t.Fatalf("WritePNG: %v", err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("decoding the PNG: %v", err)
	}
	w, h := f.Size()
	wantW, wantH := int(math.Round(w/72*PNGDPI)), int(math.Round(h/72*PNGDPI))
	if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH {
		t.Errorf("PNG is %dx%d px, want %dx%d (size %.0fx%.0f pt at %d dpi)", b.Dx(), b.Dy(), wantW, wantH, w, h, PNGDPI)
	}
	// Something must have been drawn: count non-white pixels.
	inked := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				inked++
			}
		}
	}
	if inked < 1000 {
		t.Errorf("only %d inked pixels: the figure looks blank", inked)
	}
}

package plots

import (
	"bytes"
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"testing"
)

// textBox is the extent of one horizontal text element of an SVG, in points, y up.
type textBox struct {
	text                     string
	left, right, bottom, top float64
}

// svgTextBoxes reads the horizontal text of an SVG written by WriteSVG and measures each
// string with the font it names. Rotated text (the y axis labels) is skipped.
func svgTextBoxes(t *testing.T, doc []byte) []textBox {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var rotated []bool // per open <g>: whether it rotates
	inRotation := func() bool {
		for _, r := range rotated {
			if r {
				return true
			}
		}
		return false
	}
	var boxes []textBox
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return boxes
		}
		if err != nil {
			t.Fatalf("parsing the SVG: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "g":
				rotated = append(rotated, strings.Contains(attr(el, "transform"), "rotate"))
			case "text":
				var content string
				if err := d.DecodeElement(&content, &el); err != nil {
					t.Fatal(err)
				}
				if inRotation() {
					continue
				}
				x, _ := strconv.ParseFloat(attr(el, "x"), 64)
				y, _ := strconv.ParseFloat(attr(el, "y"), 64)
				style := attr(el, "style")
				size := styleNumber(style, "font-size:")
				f := sansFont
				if strings.Contains(style, "font-weight:bold") {
					f = boldFont
				}
				ts := textStyle(f, size)
				ext := ts.FontExtents()
				base := -y // texts are drawn under scale(1, -1)
				boxes = append(boxes, textBox{
					text: content, left: x, right: x + ts.Width(content).Points(),
					bottom: base - ext.Descent.Points(), top: base + ext.Ascent.Points(),
				})
			}
		case xml.EndElement:
			if el.Name.Local == "g" && len(rotated) > 0 {
				rotated = rotated[:len(rotated)-1]
			}
		}
	}
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func styleNumber(style, key string) float64 {
	i := strings.Index(style, key)
	if i < 0 {
		return 0
	}
	rest := style[i+len(key):]
	end := strings.IndexFunc(rest, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if end < 0 {
		end = len(rest)
	}
	v, _ := strconv.ParseFloat(rest[:end], 64)
	return v
}

// TestNoTextOverlaps: no two horizontal texts of a figure (titles, tick labels, axis labels,
// legend entries) overlap, in the golden figures and in crowded ones.
func TestNoTextOverlaps(t *testing.T) {
	figs := goldenFigures()
	figs["many policies"] = WindowPanels("Many policies", []Panel{
		{Title: "Task retained", Unit: "%", Series: manyWindowSeries(12)},
		{Title: "Cost", Unit: "USD per run", Series: manyWindowSeries(12)},
	})
	figs["six panels"] = WindowPanels("Six panels", append(samplePanels(), samplePanels()[0]))
	figs["five panels, twelve policies"] = WindowPanels("Crowded legend", func() []Panel {
		ps := samplePanels()
		for i := range ps {
			ps[i].Series = manyWindowSeries(12)
		}
		return ps
	}())
	figs["long names"] = RecallDepth("Depth", []Series{
		{Name: "regions:a-blueprint-with-a-rather-long-name", X: []float64{1024, 2048}, Y: []float64{50, 60}},
		{Name: "flat", X: []float64{1024, 2048}, Y: []float64{10, 20}},
	})
	figs["long title"] = RequestSeries(strings.Repeat("a very long trace name ", 6), 8192, sampleRuns())
	for name, f := range figs {
		t.Run(name, func(t *testing.T) { assertNoOverlap(t, f, 10) })
	}
}

// assertNoOverlap fails if two horizontal texts of f overlap or one runs off the figure.
// minTexts guards the parser: fewer texts than that means it did not read the SVG.
func assertNoOverlap(t *testing.T, f *Figure, minTexts int) {
	t.Helper()
	var svg bytes.Buffer
	if err := f.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	boxes := svgTextBoxes(t, svg.Bytes())
	if len(boxes) < minTexts {
		t.Fatalf("only %d texts found: the parser is not reading this SVG", len(boxes))
	}
	w, h := f.Size()
	const slack = 0.5 // points: touching is fine
	for i, a := range boxes {
		if a.left < -slack || a.right > w+slack {
			t.Errorf("%q runs off the figure: x %.1f…%.1f of %.1f", a.text, a.left, a.right, w)
		}
		if a.bottom < -slack || a.top > h+slack { // y up from the bottom edge
			t.Errorf("%q runs off the figure: y %.1f…%.1f of %.1f", a.text, a.bottom, a.top, h)
		}
		for _, b := range boxes[i+1:] {
			if a.left < b.right-slack && b.left < a.right-slack && a.bottom < b.top-slack && b.bottom < a.top-slack {
				t.Errorf("%q and %q overlap", a.text, b.text)
			}
		}
	}
}

func manyWindowSeries(n int) []Series {
	out := make([]Series, n)
	for i := range out {
		ys := make([]float64, len(windows))
		for j := range ys {
			ys[j] = float64(10*i + j)
		}
		out[i] = Series{Name: "policy-" + strconv.Itoa(i), X: windows, Y: ys}
	}
	return out
}

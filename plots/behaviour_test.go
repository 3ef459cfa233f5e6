package plots

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/plot/vg"
)

var nan = math.NaN()

// TestEdgeCases: degenerate but legal data draws without error (and without panicking).
func TestEdgeCases(t *testing.T) {
	one := []float64{65536}
	tests := []struct {
		name string
		fig  *Figure
	}{
		{"panels/empty series", WindowPanels("t", []Panel{{Title: "a", Unit: "%", Series: []Series{{Name: "flat"}}}})},
		{"panels/no series", WindowPanels("t", []Panel{{Title: "a"}, {Title: "b"}})},
		{"panels/all NaN", WindowPanels("t", []Panel{{Title: "a", Series: []Series{{Name: "flat", X: []float64{nan, 8192}, Y: []float64{1, nan}}}}})},
		{"panels/single point", WindowPanels("t", []Panel{{Title: "a", Unit: "USD", Series: []Series{{Name: "flat", X: one, Y: []float64{0.5}}}}})},
		{"panels/zero-width y", WindowPanels("t", []Panel{{Title: "a", Series: []Series{{Name: "flat", X: []float64{8192, 16384}, Y: []float64{3, 3}}}}})},
		{"panels/all zero", WindowPanels("t", []Panel{{Title: "a", Unit: "%", Series: []Series{{Name: "flat", X: []float64{8192, 16384}, Y: []float64{0, 0}}}}})},
		{"panels/negative y", WindowPanels("t", []Panel{{Title: "a", Series: []Series{{Name: "flat", X: []float64{8192, 16384}, Y: []float64{-2, 3}}}}})},
		{"panels/percent above 100", WindowPanels("t", []Panel{{Title: "a", Unit: "%", Series: []Series{{Name: "flat", X: []float64{8192, 16384}, Y: []float64{50, 140}}}}})},
		{"panels/fixed y range", WindowPanels("t", []Panel{{Title: "a", YMin: 10, YMax: 20, Series: []Series{{Name: "flat", X: []float64{8192, 16384}, Y: []float64{0, 40}}}}})},
		{"panels/window not a power of two", WindowPanels("t", []Panel{{Title: "a", Series: []Series{{Name: "flat", X: []float64{200000}, Y: []float64{1}}}}})},
		{"panels/many policies", WindowPanels("t", []Panel{{Title: "a", Series: manySeries(20)}})},
		{"panels/six panels", WindowPanels("t", make([]Panel, 6))},
		{"panels/no title", WindowPanels("", []Panel{{}})},
		{"request/no runs", RequestSeries("t", 0, nil)},
		{"request/empty run", RequestSeries("t", 8192, []RunSeries{{Name: "flat"}})},
		{"request/single request", RequestSeries("t", 8192, []RunSeries{{Name: "flat", Request: []float64{100}, PrefixStable: []float64{0}}})},
		{"request/no prefix series", RequestSeries("t", 8192, []RunSeries{{Name: "flat", Request: []float64{100, 200}}})},
		{"request/gaps", RequestSeries("t", 0, []RunSeries{{Name: "flat", Request: []float64{nan, 5, nan, 7, 8, nan}}})},
		{"request/long run", RequestSeries("t", 0, []RunSeries{{Name: "flat", Request: make([]float64, 5000)}})},
		{"occupancy/no regions", Occupancy("t", nil, nil, nil, 0)},
		{"occupancy/no requests", Occupancy("t", []string{"a", "b"}, nil, [][]float64{nil, nil}, 8192)},
		{"occupancy/single request", Occupancy("t", []string{"a"}, []float64{1}, [][]float64{{10}}, 0)},
		{"occupancy/isolated column", Occupancy("t", []string{"a"}, []float64{1, 2, 3}, [][]float64{{10, nan, 12}}, 0)},
		{"occupancy/all zero", Occupancy("t", []string{"a"}, []float64{1, 2}, [][]float64{{0, 0}}, 0)},
		{"occupancy/NaN x", Occupancy("t", []string{"a"}, []float64{1, nan, 3}, [][]float64{{1, 2, 3}}, 0)},
		{"occupancy/many regions", Occupancy("t", strings.Split("a b c d e f g h i j k l", " "), []float64{1, 2}, repeatRows(12, []float64{1, 2}), 0)},
		{"depth/no series", RecallDepth("t", nil)},
		{"depth/single point", RecallDepth("t", []Series{{Name: "flat", X: []float64{4096}, Y: []float64{50}}})},
		{"depth/depth below one token", RecallDepth("t", []Series{{Name: "flat", X: []float64{0.25, 3}, Y: []float64{50, 60}}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.fig.Err(); err != nil {
				t.Fatalf("Err() = %v, want nil", err)
			}
			if err := tt.fig.WriteSVG(&bytes.Buffer{}); err != nil {
				t.Errorf("WriteSVG: %v", err)
			}
			if err := tt.fig.WritePNG(&bytes.Buffer{}); err != nil {
				t.Errorf("WritePNG: %v", err)
			}
			assertNoOverlap(t, tt.fig, 1)
			if *pngDir != "" {
				name := strings.NewReplacer("/", "-", " ", "_").Replace(tt.name)
				if err := tt.fig.Save(filepath.Join(*pngDir, "edge-"+name)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func manySeries(n int) []Series {
	out := make([]Series, n)
	for i := range out {
		out[i] = Series{Name: "policy-" + string(rune('a'+i)), X: []float64{8192, 16384}, Y: []float64{float64(i), float64(i + 1)}}
	}
	return out
}

func repeatRows(n int, row []float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = row
	}
	return out
}

// TestBadInput: data that cannot be drawn honestly is an error that names the series and
// point, returned by every write; nothing is written.
func TestBadInput(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		fig  *Figure
		want string
	}{
		{"panels/none", WindowPanels("fig", nil), `"fig": no panels`},
		{"panels/length mismatch", WindowPanels("fig", []Panel{{Title: "Cost", Series: []Series{{Name: "flat", X: []float64{1, 2}, Y: []float64{1}}}}}),
			`panel "Cost", series "flat": 2 x values but 1 y values`},
		{"panels/zero window", WindowPanels("fig", []Panel{{Title: "Cost", Series: []Series{{Name: "flat", X: []float64{8192, 0}, Y: []float64{1, 2}}}}}),
			`series "flat": point 1: x is 0; a log axis needs x > 0`},
		{"panels/infinite y", WindowPanels("fig", []Panel{{Title: "Cost", Series: []Series{{Name: "flat", X: []float64{8192}, Y: []float64{inf}}}}}),
			`point 0: y is +Inf; use NaN for a gap`},
		{"panels/infinite x", WindowPanels("fig", []Panel{{Title: "Cost", Series: []Series{{Name: "flat", X: []float64{-inf}, Y: []float64{1}}}}}),
			`point 0: x is -Inf`},
		{"request/negative window", RequestSeries("fig", -1, nil), `window is -1 tokens`},
		{"request/NaN window", RequestSeries("fig", nan, nil), `window is NaN tokens`},
		{"request/prefix length", RequestSeries("fig", 0, []RunSeries{{Name: "flat", Request: []float64{1, 2}, PrefixStable: []float64{1}}}),
			`run "flat": 2 request sizes but 1 prefix-stable sizes`},
		{"request/negative tokens", RequestSeries("fig", 0, []RunSeries{{Name: "flat", Request: []float64{1, -2}}}),
			`run "flat": request 2: -2 tokens`},
		{"request/infinite prefix", RequestSeries("fig", 0, []RunSeries{{Name: "flat", Request: []float64{1}, PrefixStable: []float64{inf}}}),
			`run "flat": request 1: +Inf tokens`},
		{"occupancy/rows", Occupancy("fig", []string{"a", "b"}, []float64{1}, [][]float64{{1}}, 0), `2 regions but 1 token rows`},
		{"occupancy/columns", Occupancy("fig", []string{"a"}, []float64{1, 2}, [][]float64{{1}}, 0), `region "a": 1 values for 2 x positions`},
		{"occupancy/negative", Occupancy("fig", []string{"a"}, []float64{1, 2}, [][]float64{{1, -5}}, 0), `region "a": point 1: -5 tokens`},
		{"occupancy/x not increasing", Occupancy("fig", []string{"a"}, []float64{1, 3, nan, 2}, [][]float64{{1, 1, 1, 1}}, 0), `x 3 is 2, not after the previous 3`},
		{"occupancy/infinite x", Occupancy("fig", []string{"a"}, []float64{inf}, [][]float64{{1}}, 0), `x 0 is +Inf`},
		{"occupancy/window", Occupancy("fig", nil, nil, nil, math.Inf(1)), `window is +Inf tokens`},
		{"depth/zero depth", RecallDepth("fig", []Series{{Name: "flat", X: []float64{0}, Y: []float64{1}}}), `series "flat": point 0: x is 0; a log axis needs x > 0`},
		{"depth/length", RecallDepth("fig", []Series{{Name: "flat", X: []float64{1}}}), `series "flat": 1 x values but 0 y values`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.fig.Err()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "plots: ") {
				t.Fatalf("Err() = %v, want an error starting with %q and containing %q", err, "plots: ", tt.want)
			}
			var buf bytes.Buffer
			if got := tt.fig.WriteSVG(&buf); got != err {
				t.Errorf("WriteSVG = %v, want %v", got, err)
			}
			if got := tt.fig.WritePNG(&buf); got != err {
				t.Errorf("WritePNG = %v, want %v", got, err)
			}
			if buf.Len() != 0 {
				t.Errorf("%d bytes written for a figure with bad data", buf.Len())
			}
			dir := t.TempDir()
			if got := tt.fig.Save(filepath.Join(dir, "fig")); got != err {
				t.Errorf("Save = %v, want %v", got, err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("Save left %d files behind", len(ents))
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	for name := range goldenFigures() {
		t.Run(name, func(t *testing.T) {
			var a, b bytes.Buffer
			if err := goldenFigures()[name].WriteSVG(&a); err != nil {
				t.Fatal(err)
			}
			f := goldenFigures()[name]
			if err := f.WriteSVG(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Error("two renderings of the same data differ")
			}
			// Writing a figure must not change it: PNG in between, then SVG again.
			if err := f.WritePNG(&bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			var c bytes.Buffer
			if err := f.WriteSVG(&c); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), c.Bytes()) {
				t.Error("a second write of the same figure differs from the first")
			}
		})
	}
}

// TestLegendOrder: legend entries follow the caller's order, not the style order or any
// sorting.
func TestLegendOrder(t *testing.T) {
	order := []string{"unbounded", "regions:coder", "flat", "aaa-custom"}
	var series []Series
	for i, n := range order {
		series = append(series, Series{Name: n, X: []float64{1024, 2048}, Y: []float64{float64(10 * i), 50}})
	}
	tests := []struct {
		name string
		fig  *Figure
		want []string
	}{
		{"depth", RecallDepth("t", series), order},
		{"panels", WindowPanels("t", []Panel{{Title: "p1", Series: series[2:]}, {Title: "p2", Series: series}}),
			[]string{"flat", "aaa-custom", "unbounded", "regions:coder"}},
		{"request", RequestSeries("t", 4096, []RunSeries{{Name: "regions:coder", Request: []float64{1, 2}, PrefixStable: []float64{0, 1}}, {Name: "flat", Request: []float64{1, 2}}}),
			[]string{"regions:coder: request", "regions:coder: prefix-stable", "flat: request", "window (4K tokens)"}},
		{"occupancy", Occupancy("t", []string{"tools", "system", "chat"}, []float64{1, 2}, repeatRows(3, []float64{1, 2}), 1e5),
			[]string{"tools", "system", "chat", "window (100K tokens)"}},
		{"no data", RecallDepth("t", []Series{{Name: "flat"}, {Name: "regions:x", X: []float64{nan}, Y: []float64{1}}}),
			[]string{"flat (no data)", "regions:x (no data)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range tt.fig.legend {
				got = append(got, e.label)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("legend = %q, want %q", got, tt.want)
			}
			var svg bytes.Buffer
			if err := tt.fig.WriteSVG(&svg); err != nil {
				t.Fatal(err)
			}
			// The drawn text comes in the same order.
			at := 0
			for _, w := range tt.want {
				i := strings.Index(svg.String()[at:], ">"+w+"<")
				if i < 0 {
					t.Fatalf("legend text %q not found in order in the SVG", w)
				}
				at += i + 1
			}
		})
	}
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	f := RecallDepth("Recall", sampleDepth())
	base := filepath.Join(dir, "recall")
	if err := f.Save(base); err != nil {
		t.Fatalf("Save: %v", err)
	}
	var want bytes.Buffer
	if err := f.WriteSVG(&want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(base + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Error("saved SVG differs from WriteSVG")
	}
	png, err := os.ReadFile(base + ".png")
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("saved PNG: %v, %d bytes", err, len(png))
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %q, want only recall.svg and recall.png", names)
	}
	for _, e := range ents {
		if info, _ := e.Info(); info.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want 0644", e.Name(), info.Mode().Perm())
		}
	}

	t.Run("missing directory", func(t *testing.T) {
		missing := filepath.Join(dir, "no", "such", "dir", "fig")
		err := f.Save(missing)
		if err == nil || !strings.Contains(err.Error(), missing+".svg") {
			t.Errorf("Save into a missing directory = %v, want an error naming %s.svg", err, missing)
		}
	})
}

// TestNoDataNote: an empty plot says so, and a plot with data does not.
func TestNoDataNote(t *testing.T) {
	tests := []struct {
		name string
		fig  *Figure
		want bool
	}{
		{"depth without series", RecallDepth("t", nil), true},
		{"depth with data", RecallDepth("t", sampleDepth()), false},
		{"request with only a window", RequestSeries("t", 8192, []RunSeries{{Name: "flat"}}), true},
		{"occupancy all gaps", Occupancy("t", []string{"a"}, []float64{1, 2}, [][]float64{{nan, nan}}, 8192), true},
		{"panels, one empty", WindowPanels("t", []Panel{{Title: "a", Series: []Series{{Name: "flat", X: []float64{8192}, Y: []float64{1}}}}, {Title: "b"}}), true},
		{"panels, all with data", WindowPanels("t", samplePanels()), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var svg bytes.Buffer
			if err := tt.fig.WriteSVG(&svg); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(svg.String(), ">no data<"); got != tt.want {
				t.Errorf("\"no data\" shown = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTitleLayout(t *testing.T) {
	width := vg.Points(400)
	tests := []struct {
		name     string
		title    string
		lines    int
		size     float64 // exact, or 0 for "less than figureTitleSize"
		ellipsis bool
	}{
		{"fits", "Coder", 1, figureTitleSize, false},
		{"shrinks", strings.Repeat("cc-spotter-258c7280 (recorded) ", 2), 1, 0, false},
		{"wraps", strings.Repeat("a very long trace name ", 6), 2, wrapTitleSize, false},
		{"cuts one huge word", strings.Repeat("x", 2000), 1, minTitleSize, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, ts := titleLayout(tt.title, width)
			got := strings.Join(lines, "\n")
			if len(lines) != tt.lines {
				t.Errorf("%d lines, want %d: %q", len(lines), tt.lines, got)
			}
			if tt.size != 0 && float64(ts.Font.Size) != tt.size || tt.size == 0 && float64(ts.Font.Size) >= figureTitleSize {
				t.Errorf("size %v, want %v", ts.Font.Size, tt.size)
			}
			for _, l := range lines {
				if ts.Width(l) > width {
					t.Errorf("line %q is %v wide, over %v", l, ts.Width(l), width)
				}
			}
			if strings.HasSuffix(got, "…") != tt.ellipsis {
				t.Errorf("ellipsis = %v, want %v", strings.HasSuffix(got, "…"), tt.ellipsis)
			}
			if !tt.ellipsis && strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(tt.title), " ") {
				t.Errorf("words changed: %q", got)
			}
		})
	}
}

// TestConcurrentWrites: one figure written from several goroutines gives the same bytes
// every time (run with -race to check the locking).
func TestConcurrentWrites(t *testing.T) {
	f := RecallDepth("t", sampleDepth())
	var want bytes.Buffer
	if err := f.WriteSVG(&want); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 4 {
		wg.Go(func() {
			var got bytes.Buffer
			if err := f.WriteSVG(&got); err != nil {
				errs <- err.Error()
				return
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				errs <- "a concurrent write differs"
			}
			if err := f.WritePNG(&bytes.Buffer{}); err != nil {
				errs <- err.Error()
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

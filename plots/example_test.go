package plots_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/plots"
)

// Figure 1 of a report: metrics against the window, one line per policy. Policies keep
// their styles across figures because the style follows the series name.
func ExampleWindowPanels() {
	windows := []float64{8192, 32768, 131072, 524288, 2097152}
	fig := plots.WindowPanels("Coder workload", []plots.Panel{
		{Title: "Task retained", YLabel: "Task retained", Unit: "%", Series: []plots.Series{
			{Name: "flat", X: windows, Y: []float64{12, 30, 71, 98, 100}},
			{Name: "regions:coder", X: windows, Y: []float64{100, 100, 100, 100, 100}},
		}},
		{Title: "Cost", YLabel: "Cost", Unit: "USD per run", Series: []plots.Series{
			{Name: "flat", X: windows, Y: []float64{0.21, 0.55, 1.3, 2.2, 2.4}},
			{Name: "regions:coder", X: windows, Y: []float64{0.18, 0.35, 0.6, 0.61, 0.61}},
		}},
	})
	dir, err := os.MkdirTemp("", "plots-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := fig.Save(filepath.Join(dir, "windows")); err != nil { // windows.svg, windows.png
		log.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, n := range names {
		fmt.Println(filepath.Base(n))
	}
	// Output:
	// windows.png
	// windows.svg
}

// Figure 2: request size and the cacheable prefix per request, with the window.
func ExampleRequestSeries() {
	fig := plots.RequestSeries("flat vs regions at 8K", 8192, []plots.RunSeries{
		{Name: "flat", Request: []float64{2000, 5000, 7800, 7900, 7700}, PrefixStable: []float64{0, 2000, 5000, 1500, 1500}},
		{Name: "regions:coder", Request: []float64{2000, 4000, 5000, 5100, 5000}, PrefixStable: []float64{0, 2000, 3900, 4900, 4900}},
	})
	if err := fig.WriteSVG(io.Discard); err != nil { // or WritePNG, or Save
		log.Fatal(err)
	}
	// Bad data is reported by every write, never drawn.
	bad := plots.RequestSeries("bad", 8192, []plots.RunSeries{{Name: "flat", Request: []float64{1, -1}}})
	fmt.Println(bad.Err())
	// Output:
	// plots: "bad": run "flat": request 2: -1 tokens; want a count ≥ 0 or NaN for a gap
}

// Figure 3: region occupancy, stacked in the blueprint's order. NaN leaves a gap.
func ExampleOccupancy() {
	x := []float64{1, 2, 3, 4}
	fig := plots.Occupancy("regions:coder at 8K", []string{"system", "tools", "conversation"}, x, [][]float64{
		{1200, 1200, 1200, 1200},
		{0, 3000, 2500, 800},
		{300, 900, 1600, 2400},
	}, 8192)
	fmt.Println(fig.Err())
	// Output:
	// <nil>
}

// Figure 4: recall against the depth of the fact, in tokens (log axis).
func ExampleRecallDepth() {
	depths := []float64{1024, 4096, 16384, 65536}
	fig := plots.RecallDepth("Needle workload at 32K", []plots.Series{
		{Name: "flat", X: depths, Y: []float64{100, 100, 40, 0}},
		{Name: "regions:needle", X: depths, Y: []float64{100, 100, 95, 80}},
	})
	w, h := fig.Size()
	fmt.Printf("%.0f×%.0f pt, err %v\n", w, h, fig.Err())
	// Output:
	// 504×365 pt, err <nil>
}

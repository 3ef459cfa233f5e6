package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/internal/golden"
)

// fakeFigures lists the figures it would draw, without drawing, so that the
// report's links are tested apart from the figures themselves.
func fakeFigures(dir string, wt *WorkloadTable, slug string) ([]FigureFile, error) {
	f := []FigureFile{{Caption: "Metrics against window: " + wt.Title(), SVG: "figures/" + slug + "-windows.svg", PNG: "figures/" + slug + "-windows.png"}}
	return f, nil
}

func sweepSmall(t *testing.T) (string, []*Record) {
	t.Helper()
	dir := t.TempDir()
	if _, err := (&Sweep{Dir: dir, RunCell: fakeRun}).Run(context.Background(), smallCells()); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, recs
}

func TestReportGolden(t *testing.T) {
	dir, recs := sweepSmall(t)
	if err := WriteReport(dir, recs, ReportOptions{Figures: fakeFigures}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ReportFile, CSVFile, JSONFile} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "report", name), b, nil)
		})
	}
}

func TestReportDeterministic(t *testing.T) {
	dir1, recs := sweepSmall(t)
	dir2 := t.TempDir()
	// Records in a different order give the same report.
	rev := append([]*Record(nil), recs...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if err := WriteReport(dir1, recs, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(dir2, rev, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ReportFile, CSVFile, JSONFile} {
		a, _ := os.ReadFile(filepath.Join(dir1, name))
		b, _ := os.ReadFile(filepath.Join(dir2, name))
		if !bytes.Equal(a, b) {
			t.Errorf("%s depends on record order", name)
		}
	}
}

func TestFindings(t *testing.T) {
	_, recs := sweepSmall(t)
	tab := MakeTable(recs)
	if len(tab.Workloads) != 2 {
		t.Fatalf("%d workload tables, want 2", len(tab.Workloads))
	}
	got := strings.Join(Findings(&tab.Workloads[1]), "\n") // coder
	for _, want := range []string{
		"`regions:coder` at every window",
		"`flat` from 64K up (as low as 12.5% at 8K)",
		"Prefix stability averages",
		"At 64K, in the seed-1 run, the prompt prefix breaks (a request does not start with the whole previous one) with `flat` never; `regions:coder` never.",
		"a flat list needs",
		"Prompt-cache hit averages",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("findings lack %q:\n%s", want, got)
		}
	}
	// Findings follow the numbers: a table where flat keeps the task everywhere says so.
	for _, r := range recs {
		if r.OK() {
			r.Metrics["task_retained_pct"] = 100
		}
	}
	got = strings.Join(Findings(&MakeTable(recs).Workloads[1]), "\n")
	if !strings.Contains(got, "`flat` at every window") {
		t.Errorf("findings ignore changed numbers:\n%s", got)
	}
	// Without a region layout that ran, flat lists are held against the references.
	var flatOnly []*Record
	for _, r := range recs {
		if PolicyLayout(r.Cell.Policy) != LayoutRegions {
			flatOnly = append(flatOnly, r)
		}
	}
	got = strings.Join(Findings(&MakeTable(flatOnly).Workloads[1]), "\n")
	if want := "with the best flat policy (`flat`) against 100.0% with `unbounded`."; !strings.Contains(got, want) {
		t.Errorf("flat-only findings lack %q:\n%s", want, got)
	}
}

func TestPolicyOrder(t *testing.T) {
	ps := []string{"unbounded", "regions:coder", "flat-compact", "clairvoyant", "flat", "as-recorded", "flat-zeta", "regions:a", "flat-keep-system"}
	SortPolicies(ps)
	want := "flat,flat-keep-system,flat-compact,flat-zeta,regions:a,regions:coder,as-recorded,clairvoyant,unbounded"
	if got := strings.Join(ps, ","); got != want {
		t.Errorf("order %s, want %s", got, want)
	}
}

func TestDrawFigures(t *testing.T) {
	dir, recs := sweepSmall(t)
	if err := WriteReport(dir, recs, ReportOptions{Figures: DrawFigures}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{"chat", "coder"} {
		for _, name := range []string{"windows", "requests", "occupancy-regions-coder", "depth"} {
			for _, ext := range []string{".svg", ".png"} {
				rel := "figures/" + slug + "-" + name + ext
				st, err := os.Stat(filepath.Join(dir, rel))
				if err != nil || st.Size() == 0 {
					t.Errorf("figure %s missing or empty: %v", rel, err)
				}
				if !bytes.Contains(md, []byte("("+rel+")")) {
					t.Errorf("report does not link %s", rel)
				}
			}
		}
	}
	// The coder figure holds every policy of its legend, flat and regions side by side.
	svg, _ := os.ReadFile(filepath.Join(dir, "figures", "coder-windows.svg"))
	for _, p := range []string{"flat", "flat-compact", "regions:coder", "unbounded"} {
		if !bytes.Contains(svg, []byte(">"+p+"<")) {
			t.Errorf("coder-windows.svg has no legend entry %q", p)
		}
	}
}

func TestReportSeveralModels(t *testing.T) {
	g, err := ParseGrid([]byte(strings.Replace(smallGrid, `models   = ["m1"]`, `models   = ["m1", "m2"]`, 1)), "two.toml")
	if err != nil {
		t.Fatal(err)
	}
	cells, _ := g.Cells(ExpandOptions{})
	dir := t.TempDir()
	if _, err := (&Sweep{Dir: dir, RunCell: fakeRun}).Run(context.Background(), cells); err != nil {
		t.Fatal(err)
	}
	recs, _ := ReadRecords(dir)
	if err := WriteReport(dir, recs, ReportOptions{Figures: fakeFigures}); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	for _, want := range []string{"## coder on m1\n", "## coder on m2\n", "| coder on m2 | 8K |", "figures/coder-m2-windows.svg", "- [coder on m1](#coder-on-m1)"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
}

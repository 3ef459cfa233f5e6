package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

var benchGrid = flag.String("bench.grid", "testdata/bench.toml", "grid TOML of BenchmarkRuns (its first seed only)")

var unitsOnce sync.Once

// writeUnits writes the unit metadata lines benchstat reads: every metric is
// deterministic given the cell (assume=exact), with its direction.
func writeUnits(w io.Writer) {
	for _, m := range Metrics() {
		line := "Unit " + m.BenchUnit
		if m.Exact {
			line += " assume=exact"
		}
		if m.Dir != Neutral {
			line += " better=" + m.Dir.String()
		}
		fmt.Fprintln(w, line)
	}
}

// reportMetrics reports every metric of res through b.ReportMetric.
func reportMetrics(b *testing.B, res Result) {
	for _, m := range Metrics() {
		if v, ok := res.Metrics[m.Name]; ok {
			b.ReportMetric(v, m.BenchUnit)
		}
	}
}

func benchCells(b *testing.B) []Cell {
	data, err := os.ReadFile(*benchGrid)
	if err != nil {
		b.Fatal(err)
	}
	g, err := LoadGrid(data, *benchGrid)
	if err != nil {
		b.Fatal(err)
	}
	g.Seeds = g.Seeds[:1]
	cells, err := g.Cells(ExpandOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return cells
}

// simulateSafe turns a panic of the simulator into an error, so that one
// broken cell fails its own sub-benchmark, not the whole run.
func simulateSafe(ctx context.Context, c Cell) (res Result, events int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v%s", p, panicFrames())
		}
	}()
	return simulate(ctx, c)
}

// BenchmarkRuns runs each cell of the bench grid as a sub-benchmark named
// workload=…/policy=…/model=…/window=…; one b.Loop iteration is one whole
// run, and every metric is reported, so that
//
//	go test -run '^$' -bench Runs -count 6 ./bench > new.txt
//	benchstat -col /policy new.txt        # policies side by side
//	benchstat old.txt new.txt             # this version against another
func BenchmarkRuns(b *testing.B) {
	unitsOnce.Do(func() { writeUnits(os.Stdout) })
	ctx := context.Background()
	for _, c := range benchCells(b) {
		b.Run(c.BenchName(), func(b *testing.B) {
			if _, err := loadTrace(c); err != nil { // generate or read the trace outside the timing
				b.Fatal(err)
			}
			var res Result
			var err error
			for b.Loop() {
				if res, _, err = simulateSafe(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
			reportMetrics(b, res)
		})
	}
}

// BenchmarkEngine measures the simulator's own speed: the region engine and
// the plain flat list replaying the coder workload at windows from 8K to 2M,
// as trace events per second and nanoseconds per assembled request.
func BenchmarkEngine(b *testing.B) {
	ctx := context.Background()
	for _, pol := range []string{"flat", "regions:coder"} {
		for _, w := range []string{"8K", "32K", "128K", "200K", "1M", "2M"} {
			win, _ := ParseWindow(w)
			c := Cell{Workload: "coder", Policy: pol, Model: "claude-sonnet-5.5", WindowTokens: win, Seed: 1}
			b.Run("policy="+pol+"/window="+w, func(b *testing.B) {
				if _, err := loadTrace(c); err != nil {
					b.Fatal(err)
				}
				var events, requests int
				start := time.Now()
				for b.Loop() {
					res, n, err := simulateSafe(ctx, c)
					if err != nil {
						b.Fatal(err)
					}
					events += n
					requests += int(res.Metrics["requests"])
				}
				el := time.Since(start)
				b.ReportMetric(float64(events)/el.Seconds(), "events/s")
				if requests > 0 {
					b.ReportMetric(float64(el.Nanoseconds())/float64(requests), "ns/request")
				}
			})
		}
	}
}

// TestUnitLines checks the unit lines and the sub-benchmark names against
// the benchmark format benchstat reads (golang.org/x/perf/benchfmt): a unit
// line is "Unit <unit> key=value...", a unit has no white space, and a name
// is a slash-separated list of key=value parts.
func TestUnitLines(t *testing.T) {
	var out bytes.Buffer
	writeUnits(&out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(Metrics()) {
		t.Fatalf("%d unit lines for %d metrics", len(lines), len(Metrics()))
	}
	seen := map[string]bool{}
	for i, line := range lines {
		f := strings.Fields(line)
		m := Metrics()[i]
		if len(f) < 3 || f[0] != "Unit" || f[1] != m.BenchUnit {
			t.Errorf("line %q: want Unit %s key=value...", line, m.BenchUnit)
			continue
		}
		if seen[f[1]] {
			t.Errorf("unit %s given twice", f[1])
		}
		seen[f[1]] = true
		for _, kv := range f[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" || v == "" {
				t.Errorf("line %q: %q is not key=value", line, kv)
			}
		}
		if m.Exact && !strings.Contains(line, " assume=exact") {
			t.Errorf("line %q lacks assume=exact", line)
		}
	}
	for _, u := range []string{"task%", "recall%", "hit%", "waste%", "usd/run"} {
		if !seen[u] {
			t.Errorf("no metric reports unit %s", u)
		}
	}
	c := Cell{Workload: "cc/x", Trace: "cut", Policy: "regions:coder", Model: "claude-sonnet-5.5", WindowTokens: 200000}
	parts := strings.Split(c.BenchName(), "/")
	want := []string{"workload=cc-x@cut", "policy=regions:coder", "model=claude-sonnet-5.5", "window=200K"}
	if strings.Join(parts, " ") != strings.Join(want, " ") {
		t.Errorf("bench name %q, want %q", c.BenchName(), strings.Join(want, "/"))
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ctxsim/ctxsim/bench"
)

// sweepRun is the function that runs one cell; tests replace it.
var sweepRun bench.RunFunc = bench.Simulate

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type sweepSummary struct {
	Grid    string  `json:"grid"`
	Out     string  `json:"out"`
	Shard   string  `json:"shard,omitempty"`
	Cells   int     `json:"cells"`
	Skipped int     `json:"skipped"`
	Ran     int     `json:"ran"`
	Failed  int     `json:"failed"`
	Seconds float64 `json:"seconds"`
	Report  string  `json:"report,omitempty"`
}

// cmdSweep runs a grid over all cores, storing each finished cell at once,
// then writes the report.
func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gridPath := fs.String("grid", "", "grid TOML file (default: the embedded default grid)")
	out := fs.String("out", "results", "output directory: cells go to OUT/cells, the report to OUT")
	shardFlag := fs.String("shard", "", "run only shard k/n of the grid (0 <= k < n), e.g. $JOB_COMPLETION_INDEX/8")
	jobs := fs.Int("jobs", runtime.GOMAXPROCS(0), "cells run at the same time, each single-threaded")
	traces := fs.String("traces", "", "read recorded sessions in full from this directory instead of the embedded cuts")
	quiet := fs.Bool("quiet", false, "no progress bar")
	noReport := fs.Bool("no-report", false, "do not write the report after the sweep")
	printGrid := fs.Bool("print-grid", false, "print the embedded default grid and exit")
	dryRun := fs.Bool("dry-run", false, "list the cells that would run and exit")
	fresh := fs.Bool("fresh", false, "run every cell again, ignoring finished ones (after changing the simulator)")
	format := fs.String("format", "text", "output format: text or json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ctxsim sweep [flags]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Runs every cell of a grid (workloads × policies × models × windows × seeds) over all")
		fmt.Fprintln(stderr, "cores and writes OUT/cells/<cell>.json as each one finishes, so a rerun resumes where")
		fmt.Fprintln(stderr, "an interrupted sweep stopped. Then writes OUT/report.md, cells.csv, cells.json, figures/.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usagef("sweep: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFormat("sweep", *format); err != nil {
		return err
	}
	if *printGrid {
		_, err := stdout.Write(bench.DefaultGridSource())
		return err
	}
	if *jobs < 1 {
		return usagef("sweep: --jobs must be at least 1")
	}
	var shard bench.Shard
	if *shardFlag != "" {
		var err error
		if shard, err = bench.ParseShard(*shardFlag); err != nil {
			return usagef("sweep: %v", err)
		}
	}
	grid, gridName, err := loadSweepGrid(*gridPath)
	if err != nil {
		return err
	}
	if *traces != "" {
		if st, err := os.Stat(*traces); err != nil || !st.IsDir() {
			return usagef("sweep: --traces %s: not a directory", *traces)
		}
	}
	cells, err := grid.Cells(bench.ExpandOptions{TracesDir: *traces})
	if err != nil {
		return fmt.Errorf("sweep: %s: %w", gridName, err)
	}
	cells = shard.Select(cells)
	if *dryRun {
		for _, c := range cells {
			fmt.Fprintln(stdout, c.ID())
		}
		return nil
	}

	if *fresh {
		if err := removeCells(*out, cells); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	start := time.Now()
	var bar *progressbar.ProgressBar
	s := &bench.Sweep{Dir: *out, RunCell: sweepRun, Workers: *jobs}
	if !*quiet && isTerminal(stderr) {
		s.OnStart = func(toRun, skipped int) {
			desc := "sweep"
			if skipped > 0 {
				desc = fmt.Sprintf("sweep (%d done before)", skipped)
			}
			bar = progressbar.NewOptions(toRun,
				progressbar.OptionSetWriter(stderr),
				progressbar.OptionSetDescription(desc),
				progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }),
			)
		}
		s.OnDone = func(*bench.Record) { bar.Add(1) }
	}
	sum, runErr := s.Run(ctx, cells)
	if bar != nil {
		bar.Finish()
	}
	res := sweepSummary{Grid: gridName, Out: *out, Cells: sum.Cells, Skipped: sum.Skipped, Ran: sum.Ran, Failed: sum.Failed,
		Seconds: time.Since(start).Round(time.Millisecond).Seconds()}
	if shard.Count > 1 {
		res.Shard = shard.String()
	}
	if runErr != nil {
		return fmt.Errorf("sweep: %w (finished cells are kept in %s; rerun to resume)", runErr, *out)
	}
	if !*noReport && shard.Count <= 1 {
		recs, err := gridRecords(*out, cells)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		if err := writeReport(*out, recs, false); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		res.Report = *out + "/" + bench.ReportFile
	}
	if *format == "json" {
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "%d cells: %d ran, %d already done, %d failed, in %.1fs\n", res.Cells, res.Ran, res.Skipped, res.Failed, res.Seconds)
		if res.Report != "" {
			fmt.Fprintf(stdout, "report: %s\n", res.Report)
		} else if shard.Count > 1 {
			fmt.Fprintf(stdout, "shard %s done; join the shards with: ctxsim merge --out DIR SHARD_DIR...\n", shard)
		}
	}
	if sum.Failed > 0 {
		fmt.Fprintf(stderr, "ctxsim: sweep: %d cells failed; their errors are in the report and in %s/cells\n", sum.Failed, *out)
		return errSilent
	}
	return nil
}

func loadSweepGrid(path string) (*bench.Grid, string, error) {
	if path == "" {
		return bench.DefaultGrid(), "default", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("sweep: %w", err)
	}
	g, err := bench.LoadGrid(data, path)
	if err != nil {
		return nil, "", fmt.Errorf("sweep: %w", err)
	}
	return g, path, nil
}

// gridRecords returns the stored records of cells, so that the report after
// a sweep covers that sweep's grid even when OUT holds other cells too.
func gridRecords(dir string, cells []bench.Cell) ([]*bench.Record, error) {
	all, err := bench.ReadRecords(dir)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(cells))
	for _, c := range cells {
		want[c.ID()] = true
	}
	var recs []*bench.Record
	for _, r := range all {
		if want[r.ID] {
			recs = append(recs, r)
		}
	}
	return recs, nil
}

// removeCells deletes the stored records of cells, so that they run again.
func removeCells(dir string, cells []bench.Cell) error {
	for _, c := range cells {
		err := os.Remove(filepath.Join(dir, bench.CellsDir, c.ID()+".json"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

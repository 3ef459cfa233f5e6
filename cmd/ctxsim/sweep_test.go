package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/bench"
)

// fakeCell stands in for the simulator in command tests: deterministic,
// instant, and failing for the policy "broken".
func fakeCell(_ context.Context, c bench.Cell) (bench.Result, error) {
	if c.Policy == "broken" {
		return bench.Result{}, errors.New("no such policy")
	}
	kept := math.Min(100, float64(c.WindowTokens)/640)
	if strings.HasPrefix(c.Policy, "regions:") {
		kept = 100
	}
	return bench.Result{Metrics: map[string]float64{
		"task_retained_pct": kept, "fact_recall_pct": kept * 0.9, "cache_hit_pct": 70,
		"waste_pct": 20, "cost_usd": float64(c.WindowTokens) * 1e-6, "requests": 10,
	}}, nil
}

const cmdGrid = `
models   = ["claude-sonnet-5.5"]
windows  = ["8K", "64K"]
seeds    = [1, 2]
policies = ["flat", "unbounded"]

[[workload]]
name     = "coder"
policies = ["regions:coder"]
`

func withFakeRun(t *testing.T) {
	t.Helper()
	old := sweepRun
	sweepRun = fakeCell
	t.Cleanup(func() { sweepRun = old })
}

func writeGrid(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "grid.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSweepCommand(t *testing.T) {
	withFakeRun(t)
	dir := t.TempDir()
	grid := writeGrid(t, dir, cmdGrid)
	out := filepath.Join(dir, "results")

	stdout, stderr, code := runCmd(t, "sweep", "--grid", grid, "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "12 cells: 12 ran, 0 already done, 0 failed") {
		t.Errorf("stdout %q", stdout)
	}
	for _, f := range []string{"report.md", "cells.csv", "cells.json", "figures/coder-windows.svg", "figures/coder-windows.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("sweep did not write %s: %v", f, err)
		}
	}
	if stderr != "" {
		t.Errorf("--quiet sweep wrote to stderr: %q", stderr)
	}

	// Rerun: everything is done, and JSON output says so.
	stdout, _, code = runCmd(t, "sweep", "--grid", grid, "--out", out, "--format", "json")
	if code != 0 {
		t.Fatalf("rerun exit %d", code)
	}
	var sum sweepSummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("json output %q: %v", stdout, err)
	}
	if sum.Cells != 12 || sum.Skipped != 12 || sum.Ran != 0 {
		t.Errorf("rerun summary %+v", sum)
	}

	// --fresh runs every cell again.
	stdout, _, code = runCmd(t, "sweep", "--grid", grid, "--out", out, "--fresh", "--quiet", "--no-report", "--format", "json")
	if code != 0 {
		t.Fatalf("fresh exit %d", code)
	}
	sum = sweepSummary{}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.Ran != 12 || sum.Skipped != 0 {
		t.Errorf("fresh summary %+v (%v)", sum, err)
	}
}

func TestSweepShardsMerge(t *testing.T) {
	withFakeRun(t)
	dir := t.TempDir()
	grid := writeGrid(t, dir, cmdGrid)
	whole := filepath.Join(dir, "whole")
	if _, e, code := runCmd(t, "sweep", "--grid", grid, "--out", whole, "--quiet"); code != 0 {
		t.Fatal(e)
	}
	var shards []string
	for _, k := range []string{"0/3", "1/3", "2/3"} {
		d := filepath.Join(dir, "shard"+k[:1])
		stdout, e, code := runCmd(t, "sweep", "--grid", grid, "--out", d, "--shard", k, "--quiet")
		if code != 0 {
			t.Fatal(e)
		}
		if !strings.Contains(stdout, "ctxsim merge") {
			t.Errorf("shard output does not say how to merge: %q", stdout)
		}
		if _, err := os.Stat(filepath.Join(d, "report.md")); err == nil {
			t.Errorf("shard %s wrote a report of a partial grid", k)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(dir, "merged")
	if _, e, code := runCmd(t, append([]string{"merge", "--out", merged}, shards...)...); code != 0 {
		t.Fatal(e)
	}
	for _, f := range []string{"report.md", "cells.csv", "cells.json"} {
		a, _ := os.ReadFile(filepath.Join(whole, f))
		b, err := os.ReadFile(filepath.Join(merged, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("merged %s differs from the whole sweep's (%v)", f, err)
		}
	}
}

func TestSweepFailedCell(t *testing.T) {
	withFakeRun(t)
	dir := t.TempDir()
	grid := writeGrid(t, dir, strings.Replace(cmdGrid, `"unbounded"]`, `"unbounded", "broken"]`, 1))
	out := filepath.Join(dir, "results")
	_, stderr, code := runCmd(t, "sweep", "--grid", grid, "--out", out, "--quiet")
	if code != 1 {
		t.Fatalf("exit %d, want 1 for failed cells", code)
	}
	if !strings.Contains(stderr, "4 cells failed") {
		t.Errorf("stderr %q", stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "no such policy") {
		t.Error("report does not list the failed cells' error")
	}
}

func TestSweepUsage(t *testing.T) {
	withFakeRun(t)
	dir := t.TempDir()
	bad := writeGrid(t, dir, "seed = 3"+cmdGrid)
	runCases(t, []cmdCase{
		{"help", []string{"sweep", "-h"}, 0, "usage: ctxsim sweep"},
		{"unknown flag", []string{"sweep", "--bogus"}, 2, "flag provided but not defined"},
		{"bad shard", []string{"sweep", "--shard", "3/3"}, 2, "want k/n with 0 <= k < n"},
		{"bad format", []string{"sweep", "--format", "xml"}, 2, "--format must be text or json"},
		{"extra arg", []string{"sweep", "x"}, 2, `unexpected argument "x"`},
		{"unknown grid key", []string{"sweep", "--grid", bad, "--out", dir}, 1, "grid.toml:1: seed: unknown key"},
		{"missing grid", []string{"sweep", "--grid", filepath.Join(dir, "nope.toml")}, 1, "no such file"},
		{"report help", []string{"report", "-h"}, 0, "usage: ctxsim report"},
		{"report empty", []string{"report", "--out", dir}, 1, "no cells in"},
		{"merge no args", []string{"merge"}, 2, "name at least one"},
		{"merge not a sweep", []string{"merge", "--out", filepath.Join(dir, "m"), dir}, 1, "not a sweep output"},
	})
}

func TestSweepPrintGridAndDryRun(t *testing.T) {
	stdout, _, code := runCmd(t, "sweep", "--print-grid")
	if code != 0 || !strings.Contains(stdout, `windows  = ["8K", "16K", "32K", "64K", "128K", "200K", "272K", "1M", "2M"]`) {
		t.Errorf("--print-grid: exit %d, %q", code, stdout)
	}
	dir := t.TempDir()
	stdout, _, code = runCmd(t, "sweep", "--grid", writeGrid(t, dir, cmdGrid), "--dry-run", "--shard", "1/2")
	if code != 0 || len(strings.Fields(stdout)) != 6 {
		t.Errorf("--dry-run of shard 1/2: exit %d, %d cells:\n%s", code, len(strings.Fields(stdout)), stdout)
	}
}

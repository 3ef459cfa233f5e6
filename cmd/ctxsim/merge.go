package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/ctxsim/ctxsim/bench"
)

// cmdMerge joins the cells of sharded sweeps into one directory and writes
// its report.
func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "results", "directory to merge into (its cells are kept and joined too)")
	noReport := fs.Bool("no-report", false, "do not write the report after merging")
	format := fs.String("format", "text", "output format: text or json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ctxsim merge [--out DIR] [--no-report] SHARD_DIR...")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Joins the cells of sweep output directories (for example the shards of one grid run with")
		fmt.Fprintln(stderr, "--shard k/n) into DIR/cells, then writes DIR's report. A cell found in two inputs must")
		fmt.Fprintln(stderr, "be identical in both.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() == 0 {
		return usagef("merge: name at least one sweep output directory")
	}
	if err := checkFormat("merge", *format); err != nil {
		return err
	}
	inputs := append([]string{}, fs.Args()...)
	if recs, err := bench.ReadRecords(*out); err == nil && len(recs) > 0 {
		inputs = append([]string{*out}, inputs...)
	}
	n, err := bench.Merge(*out, inputs...)
	if err != nil {
		return err
	}
	if !*noReport {
		recs, err := bench.ReadRecords(*out)
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if err := writeReport(*out, recs, false); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	}
	if *format == "json" {
		return writeJSON(stdout, map[string]any{"out": *out, "cells": n})
	}
	fmt.Fprintf(stdout, "%d cells in %s\n", n, filepath.Join(*out, bench.CellsDir))
	return nil
}

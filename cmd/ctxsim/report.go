package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/bench"
)

// cmdReport writes report.md, cells.csv, cells.json and figures from the
// finished cells of a sweep directory.
func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("out", "results", "sweep output directory: reads OUT/cells, writes the report to OUT")
	noFigures := fs.Bool("no-figures", false, "write the tables, CSV and JSON only")
	format := fs.String("format", "text", "output format: text or json")
	readme := fs.String("readme", "", "also rewrite the generated blocks (headline table, metric definitions) of this README `file`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ctxsim report [--out DIR] [--no-figures] [--readme FILE] [--format text|json]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Writes DIR/report.md, cells.csv, cells.json and DIR/figures/ from every cell in DIR/cells.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usagef("report: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFormat("report", *format); err != nil {
		return err
	}
	recs, err := bench.ReadRecords(*dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if len(recs) == 0 {
		return fmt.Errorf("report: no cells in %s (run ctxsim sweep first)", filepath.Join(*dir, bench.CellsDir))
	}
	if err := bench.CheckVersions(recs); err != nil {
		return fmt.Errorf("report: %s: %w", filepath.Join(*dir, bench.CellsDir), err)
	}
	if err := writeReport(*dir, recs, *noFigures); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	failed := 0
	for _, r := range recs {
		if !r.OK() {
			failed++
		}
	}
	path := filepath.Join(*dir, bench.ReportFile)
	if *readme != "" {
		if err := updateReadme(*readme, path); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if *format == "json" {
		return writeJSON(stdout, map[string]any{"report": path, "cells": len(recs), "failed": failed})
	}
	fmt.Fprintf(stdout, "%d cells (%d failed): %s\n", len(recs), failed, path)
	return nil
}

// updateReadme rewrites the generated blocks of the README at path from the
// report just written.
func updateReadme(path, reportPath string) error {
	readme, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	report, err := os.ReadFile(reportPath)
	if err != nil {
		return err
	}
	out, err := bench.UpdateReadme(readme, report)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}

// writeReport writes the report with figures unless noFigures.
func writeReport(dir string, recs []*bench.Record, noFigures bool) error {
	opt := bench.ReportOptions{}
	if !noFigures {
		opt.Figures = bench.DrawFigures
	}
	return bench.WriteReport(dir, recs, opt)
}

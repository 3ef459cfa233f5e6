package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/bench"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/workloads"
)

// cmdInspect prints the exact request a policy would send at one step of a
// trace, block by block, as the reference runtime's `lev test` does.
func cmdInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tracePath := fs.String("trace", "", "trace `file`: canonical, or any recorded format (detected)")
	workload := fs.String("workload", "", "synthetic workload `name` ("+strings.Join(workloads.Names(), ", ")+")")
	seed := fs.Uint64("seed", 1, "synthetic workload seed")
	policy := fs.String("policy", "", "policy, e.g. flat or regions:coder")
	blueprint := fs.String("blueprint", "", "agent.leviath `file` to run as the region policy (instead of --policy)")
	model := fs.String("model", "claude-sonnet-5.5", "model profile `name` (see ctxsim models)")
	windowFlag := fs.String("window", "", "context window, e.g. 32K or 200000 (default: the model's)")
	step := fs.Int("step", 0, "request number to print, from 1 (0: the last request)")
	full := fs.Bool("full", false, "print each block's whole content, not a one-line preview")
	format := fs.String("format", "text", "output format: text or json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ctxsim inspect (--policy P | --blueprint FILE) (--trace FILE | --workload NAME) [--step N] [flags]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Replays the trace through the policy and prints request N exactly as it would be sent:")
		fmt.Fprintln(stderr, "block by block, with its region, tokens and cache breakpoint, and where the common")
		fmt.Fprintln(stderr, "prefix with the previous request (what a prompt cache can reuse) ends.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usagef("inspect: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFormat("inspect", *format); err != nil {
		return err
	}
	switch {
	case (*policy == "") == (*blueprint == ""):
		return usagef("inspect: give exactly one of --policy and --blueprint")
	case (*tracePath == "") == (*workload == ""):
		return usagef("inspect: give exactly one of --trace and --workload")
	case *step < 0:
		return usagef("inspect: --step %d: want a request number >= 1, or 0 for the last", *step)
	}
	pol := *policy
	if *blueprint != "" {
		if _, err := os.Stat(*blueprint); err != nil {
			return fmt.Errorf("inspect: --blueprint: %w", err)
		}
		pol = "regions:" + *blueprint
	}
	if _, err := sim.ParsePolicy(pol); err != nil {
		return usagef("inspect: --policy: %v", err)
	}
	prof, err := sim.LookupProfile(*model)
	if err != nil {
		return usagef("inspect: --model: %v", err)
	}
	window := prof.Window
	if *windowFlag != "" {
		if window, err = bench.ParseWindow(*windowFlag); err != nil {
			return usagef("inspect: --window: %v", err)
		}
	}
	var src sim.Source
	name := *workload
	if *tracePath != "" {
		t, err := workloads.OpenTrace(*tracePath, workloads.ImportOptions{})
		if err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		defer t.Close()
		src, name = t, *tracePath
	} else {
		r, err := workloads.Source(*workload, *seed, "")
		if err != nil {
			return usagef("inspect: --workload: %v", err)
		}
		src = r
	}
	ins, err := bench.Inspect(ctx, src, sim.Config{Policy: pol, Model: prof, Window: window, Seed: *seed}, *step)
	if err != nil {
		return fmt.Errorf("inspect: %s: %w", name, err)
	}
	ins.Policy, ins.Model, ins.Window = pol, prof.Name, window
	if *format == "json" {
		return writeJSON(stdout, ins)
	}
	printInspection(stdout, ins, name, *full)
	return nil
}

func printInspection(w io.Writer, ins *bench.Inspection, name string, full bool) {
	fmt.Fprintf(w, "request %d of %s: policy %s, model %s, window %s\n", ins.Step, name, ins.Policy, ins.Model, bench.FormatWindow(ins.Window))
	fmt.Fprintf(w, "%d blocks, %d tokens; common prefix with request %d: %d tokens; cache read %d tokens\n",
		len(ins.Blocks), ins.Tokens, ins.Step-1, ins.StableTokens, ins.CacheReadTokens)
	if len(ins.Regions) > 0 {
		var parts []string
		for _, r := range ins.Regions {
			parts = append(parts, fmt.Sprintf("%s %d", r.Name, r.Tokens))
		}
		fmt.Fprintf(w, "regions (tokens): %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	// Column widths over all rows, so previews can sit between them.
	wr, wk, wt := len("region"), len("kind"), len("tokens")
	for _, b := range ins.Blocks {
		wr = max(wr, len(b.Region))
		wk = max(wk, len(b.Kind))
		wt = max(wt, len(strconv.Itoa(b.Tokens)))
	}
	wi := len(strconv.Itoa(len(ins.Blocks)))
	fmt.Fprintf(w, "%*s  %-*s  %-*s  %*s  %-5s  %s\n", wi, "#", wr, "region", wk, "kind", wt, "tokens", "cache", "id")
	marker := func() {
		if ins.PrefixTokensIntoBlock > 0 {
			fmt.Fprintf(w, "---- common prefix ends %d tokens into block %d (%d tokens in all) ----\n", ins.PrefixTokensIntoBlock, ins.PrefixEndsBlock, ins.StableTokens)
		} else {
			fmt.Fprintf(w, "---- common prefix ends here (%d tokens) ----\n", ins.StableTokens)
		}
	}
	for _, b := range ins.Blocks {
		if b.Index == ins.PrefixEndsBlock {
			marker()
		}
		region, cache := b.Region, b.Cache
		if region == "" {
			region = "-"
		}
		if cache == "" {
			cache = "-"
		}
		fmt.Fprintf(w, "%*d  %-*s  %-*s  %*d  %-5s  %s\n", wi, b.Index, wr, region, wk, b.Kind, wt, b.Tokens, cache, b.ID)
		if content := preview(b, full); content != "" {
			for _, line := range strings.Split(content, "\n") {
				fmt.Fprintf(w, "%*s  | %s\n", wi, "", line)
			}
		}
	}
	if ins.PrefixEndsBlock == len(ins.Blocks) {
		marker()
	}
}

// preview is a block's content: a quoted first line, or all of it with full.
func preview(b bench.InspectedBlock, full bool) string {
	var s string
	switch {
	case b.Text == "" && b.Size > 0:
		s = fmt.Sprintf("(%d bytes elided", b.Size)
		if len(b.Facts) > 0 {
			s += "; facts " + strings.Join(b.Facts, ", ")
		}
		return s + ")"
	case full:
		return b.Text
	}
	line, _, _ := strings.Cut(strings.TrimLeft(b.Text, " \t\r\n"), "\n")
	if r := []rune(line); len(r) > 96 {
		line = string(r[:96]) + "…"
	}
	return strconv.Quote(line)
}

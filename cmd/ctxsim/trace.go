package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/ctxsim/ctxsim/workloads"
	"github.com/ctxsim/ctxsim/workloads/importers"
)

func cmdTrace(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "stats" {
		fmt.Fprintln(stderr, "usage: ctxsim trace stats [--format-out text|json] [import flags] FILE...")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return nil
		}
		return usagef("trace: want the subcommand stats")
	}
	fs := flag.NewFlagSet("trace stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("format-out", "json", "output: json or text")
	var f importFlags
	f.register(fs)
	if err := parseFlags(fs, args[1:]); err != nil {
		return helpOK(err)
	}
	if *out != "json" && *out != "text" {
		return usagef("trace stats: --format-out %q: want text or json", *out)
	}
	if fs.NArg() == 0 {
		return usagef("trace stats: want FILE")
	}
	opt, err := f.options(stderr)
	if err != nil {
		return err
	}
	for _, path := range fs.Args() {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := workloads.TraceStats(path, opt)
		if err != nil {
			return err
		}
		if *out == "json" {
			b, err := json.Marshal(c)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\n", b)
			continue
		}
		printCounts(stdout, path, &c)
	}
	return nil
}

func printCounts(w io.Writer, path string, c *importers.Counts) {
	fmt.Fprintf(w, "%s\n", path)
	rows := []struct {
		k string
		v any
	}{
		{"format", c.Format}, {"events", c.Events}, {"system events", c.SystemEvents}, {"user messages", c.UserMessages},
		{"assistant turns", c.AssistantTurns}, {"tool calls", c.ToolCalls}, {"tool results", c.ToolResults},
		{"compactions", c.Compactions}, {"usage records", c.UsageRecords}, {"probes", c.Probes},
		{"first time", c.FirstTime}, {"last time", c.LastTime},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-16s %v\n", r.k, r.v)
	}
}

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ctxsim/ctxsim/sim"
)

func cmdModels(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("models", flag.ContinueOnError)
	fs.SetOutput(stderr)
	extra := fs.String("models", "", "also list the profiles of this TOML `file`")
	format := fs.String("format", "text", "output format: text or json")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usagef("models: unexpected argument %q", fs.Arg(0))
	}
	if *format != "text" && *format != "json" {
		return usagef("models: --format %q: want text or json", *format)
	}
	ps := sim.Profiles()
	if *extra != "" {
		more, err := sim.LoadProfiles(*extra)
		if err != nil {
			return fmt.Errorf("models: --models: %w", err)
		}
		ps = append(ps, more...)
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ps)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "name\tvendor\twindow\ttokenizer\tcache\tin $/M\tout $/M\tread $/M\twrite5m $/M\tdate\t")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%g\t%g\t%g\t%g\t%s\t\n", p.Name, p.Vendor, p.Window, p.Tokenizer, p.Cache, p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.Date)
	}
	return tw.Flush()
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/workloads"
)

// runOutput is the JSON shape of `ctxsim run --format json`.
type runOutput struct {
	Workload string      `json:"workload"`
	Policy   string      `json:"policy"`
	Model    string      `json:"model"`
	Window   int         `json:"window"`
	Seed     uint64      `json:"seed"`
	Metrics  sim.Metrics `json:"metrics"`
	Warnings []string    `json:"warnings,omitempty"`
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tracePath := fs.String("trace", "", "trace `file` to replay: a canonical trace or a recorded session (any ctxsim convert format)")
	workload := fs.String("workload", "", "built-in workload `name` ("+strings.Join(sim.BuiltinWorkloads(), ", ")+")")
	policy := fs.String("policy", "", "policy, e.g. flat, flat-compact(threshold=150000), regions:coder ("+strings.Join(sim.Policies(), ", ")+")")
	model := fs.String("model", "claude-sonnet-5.5", "model profile `name` (see ctxsim models)")
	models := fs.String("models", "", "extra model profiles from a TOML `file`")
	window := fs.Int("window", 0, "context window in tokens (0 = the model's)")
	seed := fs.Uint64("seed", 1, "workload seed")
	format := fs.String("format", "text", "output format: text or json")
	noRefetch := fs.Bool("no-refetch", false, "do not re-issue tool calls whose results were evicted")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usagef("run: %v", err)
	}
	if fs.NArg() > 0 {
		return usagef("run: unexpected argument %q", fs.Arg(0))
	}
	if (*tracePath == "") == (*workload == "") {
		return usagef("run: give exactly one of --trace FILE or --workload NAME")
	}
	if *policy == "" {
		return usagef("run: --policy is required (%s)", strings.Join(sim.Policies(), ", "))
	}
	if _, err := sim.ParsePolicy(*policy); err != nil {
		return usagef("run: --policy: %v", err)
	}
	if *format != "text" && *format != "json" {
		return usagef("run: --format %q: want text or json", *format)
	}
	if *window < 0 {
		return usagef("run: --window %d: want a positive number of tokens", *window)
	}
	prof, err := findProfile(*model, *models)
	if err != nil {
		return err
	}

	var src sim.Source
	switch {
	case *tracePath != "":
		// A canonical trace, or any recorded session format (detected).
		t, err := workloads.OpenTrace(*tracePath, workloads.ImportOptions{
			Warn: func(err error) { fmt.Fprintln(stderr, "ctxsim: warning:", err) },
		})
		if err != nil {
			return fmt.Errorf("run: --trace: %w", err)
		}
		defer t.Close()
		src = t
	default:
		s, err := sim.BuiltinWorkload(*workload, *seed)
		if err != nil {
			return usagef("run: --workload: %v", err)
		}
		src = s
	}
	res, err := sim.Run(ctx, src, sim.Config{Policy: *policy, Model: prof, Window: *window, Seed: *seed, NoRefetch: *noRefetch})
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	name := res.Workload
	if name == "" {
		name = *workload
		if *tracePath != "" {
			name = *tracePath
		}
	}
	out := runOutput{Workload: name, Policy: *policy, Model: prof.Name, Window: res.Window, Seed: *seed, Metrics: res.Metrics, Warnings: res.Warnings}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "workload %s  policy %s  model %s  window %d  seed %d\n", out.Workload, out.Policy, out.Model, out.Window, out.Seed)
	for _, d := range sim.MetricDefs() {
		v := res.Metrics.Get(d.Key)
		s := "n/a"
		if !math.IsNaN(v) {
			s = fmt.Sprintf("%.6g", v)
		}
		fmt.Fprintf(stdout, "  %-26s %14s %s\n", d.Key, s, d.Unit)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	return nil
}

// findProfile looks a model up in the embedded table, then in the extra file.
func findProfile(name, extra string) (sim.Profile, error) {
	if extra != "" {
		ps, err := sim.LoadProfiles(extra)
		if err != nil {
			return sim.Profile{}, fmt.Errorf("--models: %w", err)
		}
		for _, p := range ps {
			if p.Name == name {
				return p, nil
			}
		}
	}
	p, err := sim.LookupProfile(name)
	if err != nil {
		return p, usagef("--model: %v", err)
	}
	return p, nil
}

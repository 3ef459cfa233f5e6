package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/bench"
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
	// DeadByRegion is as in a sweep's cells (region layouts only).
	DeadByRegion []bench.RegionDead `json:"dead_by_region,omitempty"`
	Warnings     []string           `json:"warnings,omitempty"`
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tracePath := fs.String("trace", "", "trace `file` to replay: a canonical trace or a recorded session (any ctxsim convert format)")
	workload := fs.String("workload", "", "synthetic workload `name` ("+strings.Join(workloads.Names(), ", ")+")")
	params := fs.String("params", "", "workload parameters from a TOML `file` (default: the workload's embedded defaults)")
	policy := fs.String("policy", "", "policy, e.g. flat, flat-compact(threshold=150000), regions:coder ("+strings.Join(sim.Policies(), ", ")+")")
	model := fs.String("model", "claude-sonnet-5.5", "model profile `name` (see ctxsim models)")
	models := fs.String("models", "", "extra model profiles from a TOML `file`")
	window := fs.Int("window", 0, "context window in tokens (0 = the model's)")
	seed := fs.Uint64("seed", 1, "workload seed")
	format := fs.String("format", "text", "output format: text or json")
	noRefetch := fs.Bool("no-refetch", false, "do not re-issue tool calls whose results were evicted")
	series := fs.String("series", "", "also write the per-request series (CSV) to `file`")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usagef("run: unexpected argument %q", fs.Arg(0))
	}
	if *params != "" && *workload == "" {
		return usagef("run: --params needs --workload")
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
		if !slices.Contains(workloads.Names(), *workload) {
			return usagef("run: --workload %q: want one of %s", *workload, strings.Join(workloads.Names(), ", "))
		}
		s, err := workloads.Source(*workload, *seed, *params)
		if err != nil {
			return fmt.Errorf("run: --workload %s: %w", *workload, err)
		}
		src = s
	}
	cfg := sim.Config{Policy: *policy, Model: prof, Window: *window, Seed: *seed, NoRefetch: *noRefetch}
	var sw *seriesWriter
	if *series != "" {
		f, err := os.Create(*series)
		if err != nil {
			return fmt.Errorf("run: --series: %w", err)
		}
		defer f.Close()
		sw = newSeriesWriter(f)
		cfg.Series = sw
	}
	res, err := sim.Run(ctx, src, cfg)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if sw != nil {
		if err := sw.close(); err != nil {
			return fmt.Errorf("run: --series %s: %w", *series, err)
		}
	}
	name := res.Workload
	if name == "" {
		name = *workload
		if *tracePath != "" {
			name = *tracePath
		}
	}
	out := runOutput{Workload: name, Policy: *policy, Model: prof.Name, Window: res.Window, Seed: *seed, Metrics: res.Metrics, Warnings: res.Warnings}
	for _, d := range res.DeadByRegion {
		out.DeadByRegion = append(out.DeadByRegion, bench.RegionDead{Region: d.Name, Tokens: d.Tokens})
	}
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
	if len(res.RecallByDepth) > 0 {
		fmt.Fprintln(stdout, "  fact recall by depth (tokens since the fact arrived):")
		for _, b := range res.RecallByDepth {
			fmt.Fprintf(stdout, "    <= %-10d %3d/%-3d\n", b.UpTo, b.Hits, b.Probes)
		}
	}
	if len(res.DeadByRegion) > 0 {
		fmt.Fprintln(stdout, "  dead tokens by region:")
		for _, d := range res.DeadByRegion {
			name := d.Name
			if name == "" {
				name = "(no region)"
			}
			fmt.Fprintf(stdout, "    %-24s %12d\n", name, d.Tokens)
		}
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	return nil
}

// seriesWriter streams one CSV row per request: the per-request series of
// the figures (request size, common prefix, cache reads, region occupancy).
type seriesWriter struct {
	w   *csv.Writer
	err error
}

func newSeriesWriter(w io.Writer) *seriesWriter {
	s := &seriesWriter{w: csv.NewWriter(w)}
	s.err = s.w.Write([]string{"request", "time_s", "request_tokens", "stable_tokens", "cache_read_tokens", "regions"})
	return s
}

func (s *seriesWriter) Request(r sim.RequestSample) {
	if s.err != nil {
		return
	}
	regions := make([]string, len(r.Regions))
	for i, rt := range r.Regions {
		regions[i] = fmt.Sprintf("%s=%d", rt.Name, rt.Tokens)
	}
	s.err = s.w.Write([]string{strconv.Itoa(r.Index), strconv.FormatFloat(r.Time, 'f', 3, 64), strconv.Itoa(r.RequestTokens),
		strconv.Itoa(r.StableTokens), strconv.Itoa(r.CacheReadTokens), strings.Join(regions, ";")})
}

func (s *seriesWriter) close() error {
	s.w.Flush()
	if s.err != nil {
		return s.err
	}
	return s.w.Error()
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

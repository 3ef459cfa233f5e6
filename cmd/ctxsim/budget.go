package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/bench"
	"github.com/ctxsim/ctxsim/blueprints"
	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/workloads"
)

// budgetWorkloads is the synthetic workload each real blueprint suits.
var budgetWorkloads = map[string]string{"coder": "coder", "deep-researcher": "researcher", "log-analyzer": "log-analyzer"}

type budgetOutput struct {
	Blueprint string              `json:"blueprint"`
	Model     string              `json:"model"`
	Window    int                 `json:"window_tokens"`
	Workloads []string            `json:"workloads"`
	Seeds     []uint64            `json:"seeds"`
	Budgets   map[string]string   `json:"budgets"` // recommended, for the tuned regions
	Result    *bench.BudgetResult `json:"result"`
	Lines     []string            `json:"lines"` // the blueprint lines that change
}

// cmdBudget recommends region budgets for a blueprint on a model: the shares
// of its largest regions that give the best fact recall at a cost ceiling.
func cmdBudget(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("budget", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bpFlag := fs.String("blueprint", "", "agent.leviath `file`, or the name of an embedded blueprint ("+strings.Join(blueprints.Names(), ", ")+")")
	model := fs.String("model", "claude-sonnet-5.5", "model profile `name` (see ctxsim models)")
	windowFlag := fs.String("window", "", "context window, e.g. 200K (default: the model's)")
	wlFlag := fs.String("workload", "", "synthetic workloads to evaluate on, comma-separated (default: the one the blueprint suits, else coder)")
	seedsFlag := fs.String("seeds", "1,2", "workload seeds, comma-separated")
	ceiling := fs.Float64("ceiling", 0, "cost ceiling in USD per run (default: the cost with the blueprint's own budgets)")
	regionsFlag := fs.String("regions", "", "regions to tune, comma-separated (default: the 4 largest non-pinned percentage budgets)")
	rounds := fs.Int("rounds", 3, "search rounds")
	format := fs.String("format", "text", "output format: text or json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ctxsim budget --blueprint FILE|NAME [--model M] [--window N] [--ceiling USD] [flags]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Searches the budget shares of a blueprint's largest regions for the best fact recall on")
		fmt.Fprintln(stderr, "a model at a cost ceiling, keeping only layouts that validate, and prints the recommended")
		fmt.Fprintln(stderr, "[context.regions] lines with the before and after figures.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usagef("budget: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFormat("budget", *format); err != nil {
		return err
	}
	if *bpFlag == "" {
		return usagef("budget: --blueprint is required")
	}
	if *ceiling < 0 || *rounds < 1 {
		return usagef("budget: --ceiling must be >= 0 and --rounds >= 1")
	}
	prof, err := sim.LookupProfile(*model)
	if err != nil {
		return usagef("budget: --model: %v", err)
	}
	window := prof.Window
	if *windowFlag != "" {
		if window, err = bench.ParseWindow(*windowFlag); err != nil {
			return usagef("budget: --window: %v", err)
		}
	}
	seeds, err := parseSeeds(*seedsFlag)
	if err != nil {
		return usagef("budget: --seeds: %v", err)
	}
	src, dir, name, err := readBlueprint(*bpFlag)
	if err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	bp, err := engine.ParseBlueprint(name, src, dir)
	if err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	wls := splitList(*wlFlag)
	if len(wls) == 0 {
		w, ok := budgetWorkloads[strings.TrimSuffix(filepath.Base(name), ".leviath")]
		if !ok {
			w = "coder"
		}
		wls = []string{w}
	}
	known := map[string]bool{}
	for _, n := range workloads.Names() {
		known[n] = true
	}
	var cells []bench.Cell
	for _, w := range wls {
		if !known[w] {
			return usagef("budget: --workload %q: want one of %s", w, strings.Join(workloads.Names(), ", "))
		}
		for _, s := range seeds {
			cells = append(cells, bench.Cell{Workload: w, Model: prof.Name, WindowTokens: window, Seed: s})
		}
	}
	search := &bench.BudgetSearch{Blueprint: bp, Window: window, Regions: splitList(*regionsFlag), CeilingUSD: *ceiling,
		Rounds: *rounds, Eval: bench.SimEvaluator(src, dir, cells)}
	res, err := search.Run(ctx)
	if err != nil {
		return err
	}
	out := budgetOutput{Blueprint: name, Model: prof.Name, Window: window, Workloads: wls, Seeds: seeds,
		Budgets: res.After.Budgets(), Result: res}
	changed := map[string]string{}
	for r, v := range res.After.Budgets() {
		if res.Before.Shares[r] != res.After.Shares[r] {
			changed[r] = v
		}
	}
	if len(changed) > 0 {
		text, err := bench.RewriteBudgets(src, changed)
		if err != nil {
			return fmt.Errorf("budget: %w", err)
		}
		a, b := strings.Split(string(src), "\n"), strings.Split(string(text), "\n")
		for i := range a {
			if i < len(b) && a[i] != b[i] {
				out.Lines = append(out.Lines, strings.TrimSpace(b[i]))
			}
		}
	}
	if *format == "json" {
		return writeJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "%s on %s at %s, evaluated on %s (seeds %s); ceiling $%.4f per run\n",
		name, prof.Name, bench.FormatWindow(window), strings.Join(wls, ", "), *seedsFlag, res.CeilingUSD)
	fmt.Fprintf(stdout, "%d layouts evaluated, %d refused by validation\n\n", res.Evaluations, res.Rejected)
	fmt.Fprintf(stdout, "%-28s %10s %10s\n", "", "before", "after")
	fmt.Fprintf(stdout, "%-28s %10.1f %10.1f\n", "fact recall (%)", res.Before.Recall, res.After.Recall)
	fmt.Fprintf(stdout, "%-28s %10.1f %10.1f\n", "task retained (%)", res.Before.Task, res.After.Task)
	fmt.Fprintf(stdout, "%-28s %10.4f %10.4f\n", "cost (USD per run)", res.Before.Cost, res.After.Cost)
	fmt.Fprintf(stdout, "%-28s %10.1f %10.1f\n", "token waste (%)", res.Before.Waste, res.After.Waste)
	for _, r := range sortedNames(res.After.Shares) {
		fmt.Fprintf(stdout, "%-28s %9g%% %9g%%\n", r+" budget", res.Before.Shares[r], res.After.Shares[r])
	}
	// Where the dead tokens sat, per run: what the new budgets left unused.
	for _, r := range sortedNames(res.After.Shares) {
		fmt.Fprintf(stdout, "%-28s %10.0f %10.0f\n", r+" dead tokens", res.Before.Dead[r], res.After.Dead[r])
	}
	fmt.Fprintln(stdout)
	if len(out.Lines) == 0 {
		fmt.Fprintln(stdout, "The blueprint's own budgets are the best found; nothing to change.")
		return nil
	}
	fmt.Fprintln(stdout, "Recommended [context.regions] lines:")
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "[context.regions]")
	for _, l := range out.Lines {
		fmt.Fprintln(stdout, l)
	}
	return nil
}

// readBlueprint reads a blueprint file, or an embedded one by name.
func readBlueprint(arg string) (src []byte, dir, name string, err error) {
	if _, statErr := os.Stat(arg); statErr == nil {
		src, err = os.ReadFile(arg)
		return src, filepath.Dir(arg), arg, err
	}
	src, err = blueprints.Source(arg)
	if err != nil {
		return nil, "", "", fmt.Errorf("blueprint %q: not a file, and %w", arg, err)
	}
	return src, "", arg + ".leviath", nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, p := range splitList(s) {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seed %q: want a non-negative integer", p)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("want at least one seed")
	}
	return out, nil
}

func sortedNames(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

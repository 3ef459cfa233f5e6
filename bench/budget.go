package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/engine"
)

// RewriteBudgets returns the blueprint text src with the budgets of the
// named regions replaced, in every [context.regions] table that declares
// them (the global layout and any stage's), whether a region is written as an
// inline table (name = { kind = …, budget = "25%" }) or as its own
// [context.regions.name] table. Everything else is kept byte for byte. A
// region that is never found is an error.
func RewriteBudgets(src []byte, budgets map[string]string) ([]byte, error) {
	header := regexp.MustCompile(`^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$`)
	budgetKV := regexp.MustCompile(`(\bbudget\s*=\s*)("[^"]*"|[0-9_]+)`)
	found := map[string]int{}
	lines := strings.SplitAfter(string(src), "\n")
	table := ""
	for i, line := range lines {
		if m := header.FindStringSubmatch(line); m != nil && !strings.HasPrefix(strings.TrimSpace(line), "[[") {
			table = strings.ReplaceAll(m[1], " ", "")
			continue
		}
		name := ""
		switch {
		case strings.HasSuffix(table, "context.regions"):
			key, rest, ok := strings.Cut(line, "=")
			key = strings.Trim(strings.TrimSpace(key), `"`)
			if !ok || !strings.HasPrefix(strings.TrimSpace(rest), "{") {
				continue
			}
			name = key
		case strings.Contains(table, "context.regions."):
			name = strings.Trim(table[strings.LastIndex(table, "context.regions.")+len("context.regions."):], `"`)
			if !budgetKV.MatchString(strings.SplitN(line, "#", 2)[0]) || !strings.HasPrefix(strings.TrimSpace(line), "budget") {
				continue
			}
		default:
			continue
		}
		v, ok := budgets[name]
		if !ok {
			continue
		}
		if !budgetKV.MatchString(line) {
			continue
		}
		lit := v
		if strings.HasSuffix(v, "%") {
			lit = strconv.Quote(v)
		}
		lines[i] = budgetKV.ReplaceAllString(line, "${1}"+strings.ReplaceAll(lit, "$", "$$"))
		found[name]++
	}
	var missing []string
	for name := range budgets {
		if found[name] == 0 {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return nil, fmt.Errorf("no budget key for region %s in any [context.regions] table", strings.Join(missing, ", "))
	}
	return []byte(strings.Join(lines, "")), nil
}

// BudgetScore is what one assignment of budgets measured, averaged over the
// evaluation runs.
type BudgetScore struct {
	Recall float64 `json:"recall_pct"`        // mean fact recall (%)
	Cost   float64 `json:"cost_usd"`          // mean cost of a run (USD)
	Task   float64 `json:"task_retained_pct"` // mean task retention (%)
	Waste  float64 `json:"waste_pct"`         // mean token waste (%)
	// Dead is the mean dead tokens of a run per region (see
	// Result.DeadByRegion): where the budgets let content sit unused.
	Dead map[string]float64 `json:"dead_tokens,omitempty"`
}

// BudgetCandidate is one assignment of budget shares and what it measured.
type BudgetCandidate struct {
	// Shares are the tuned regions' budgets as percentages of the window.
	Shares map[string]float64 `json:"shares"`
	BudgetScore
}

// Budgets returns the candidate's budgets in the form Blueprint.WithBudgets
// and RewriteBudgets take ("12.5%").
func (c BudgetCandidate) Budgets() map[string]string {
	out := map[string]string{}
	for r, p := range c.Shares {
		out[r] = strconv.FormatFloat(p, 'f', -1, 64) + "%"
	}
	return out
}

// BudgetEvaluator measures one assignment of budgets. It must be
// deterministic.
type BudgetEvaluator func(ctx context.Context, budgets map[string]string) (BudgetScore, error)

// BudgetSearch looks for the region budget shares with the best fact recall
// at a cost ceiling, by local search: each round tries moving a part of one
// tuned region's share to another (or dropping it), keeping the single best
// change, until no change helps or the rounds run out. The tuned regions'
// total share never grows. Candidates that fail the blueprint's validation at
// the window are skipped.
type BudgetSearch struct {
	Blueprint *engine.Blueprint
	Window    int
	// Regions are the regions to tune; empty means TunableRegions.
	Regions []string
	// CeilingUSD bounds the mean cost of a run; 0 means the cost of the
	// blueprint's own budgets.
	CeilingUSD float64
	// Steps are the parts of a region's share moved at a time; empty means
	// a quarter and a half.
	Steps  []float64
	Rounds int // 0 means 3
	Eval   BudgetEvaluator
	// OnCandidate, when set, sees every evaluated candidate.
	OnCandidate func(c BudgetCandidate, accepted bool)
}

// BudgetResult is the outcome of a search.
type BudgetResult struct {
	Before      BudgetCandidate `json:"before"`
	After       BudgetCandidate `json:"after"`
	CeilingUSD  float64         `json:"ceiling_usd"`
	Evaluations int             `json:"evaluations"`
	Rejected    int             `json:"rejected"` // candidates the blueprint's validation refused
}

// TunableRegions returns the regions whose budget is a share of the window
// and whose content changes during a run (every kind but pinned), largest
// first, at most n.
func TunableRegions(bp *engine.Blueprint, n int) []string {
	type rs struct {
		name string
		f    float64
	}
	var all []rs
	for _, d := range bp.RegionDefs {
		if d.Budget.Percent && d.Kind != engine.KindPinned {
			all = append(all, rs{d.Name, d.Budget.Fraction})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].f > all[j].f })
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].name)
	}
	return out
}

// Run searches.
func (s *BudgetSearch) Run(ctx context.Context) (*BudgetResult, error) {
	if s.Blueprint == nil || s.Eval == nil || s.Window <= 0 {
		return nil, errors.New("budget: want a blueprint, a window and an evaluator")
	}
	regions := s.Regions
	if len(regions) == 0 {
		regions = TunableRegions(s.Blueprint, 4)
	}
	if len(regions) == 0 {
		return nil, errors.New("budget: the blueprint has no region with a percentage budget to tune")
	}
	start := map[string]float64{}
	for _, name := range regions {
		d := findRegion(s.Blueprint, name)
		if d == nil {
			return nil, fmt.Errorf("budget: no region %q in the blueprint", name)
		}
		if !d.Budget.Percent {
			return nil, fmt.Errorf("budget: region %q has an absolute budget (%s); only percentage budgets are tuned", name, d.Budget)
		}
		start[name] = roundShare(d.Budget.Fraction * 100)
	}
	steps := s.Steps
	if len(steps) == 0 {
		steps = []float64{0.25, 0.5}
	}
	rounds := s.Rounds
	if rounds <= 0 {
		rounds = 3
	}
	res := &BudgetResult{}
	seen := map[string]bool{}
	eval := func(shares map[string]float64) (BudgetCandidate, bool, error) {
		c := BudgetCandidate{Shares: shares}
		key := fmt.Sprint(sortedShares(shares))
		if seen[key] {
			return c, false, nil
		}
		seen[key] = true
		bp, err := s.Blueprint.WithBudgets(c.Budgets())
		if err != nil {
			res.Rejected++
			return c, false, nil
		}
		if rep := bp.Validate(s.Window); !rep.OK() {
			res.Rejected++
			return c, false, nil
		}
		res.Evaluations++
		c.BudgetScore, err = s.Eval(ctx, c.Budgets())
		return c, err == nil, err
	}
	before, ok, err := eval(start)
	if err != nil {
		return nil, fmt.Errorf("budget: the blueprint's own budgets: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("budget: the blueprint does not validate at %s", FormatWindow(s.Window))
	}
	res.Before, res.After = before, before
	res.CeilingUSD = s.CeilingUSD
	if res.CeilingUSD == 0 {
		res.CeilingUSD = before.Cost
	}
	better := func(a, b BudgetCandidate) bool { // a better than b
		if a.Cost > res.CeilingUSD*(1+1e-9) {
			return false
		}
		if b.Cost > res.CeilingUSD*(1+1e-9) {
			return true
		}
		if math.Abs(a.Recall-b.Recall) > 1e-9 {
			return a.Recall > b.Recall
		}
		if math.Abs(a.Task-b.Task) > 1e-9 {
			return a.Task > b.Task
		}
		return a.Cost < b.Cost-1e-12
	}
	for range rounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		best := res.After
		for _, shares := range moves(res.After.Shares, regions, steps) {
			c, ok, err := eval(shares)
			if err != nil {
				return nil, fmt.Errorf("budget: %s: %w", describeShares(shares), err)
			}
			if !ok {
				continue
			}
			acc := better(c, best)
			if acc {
				best = c
			}
			if s.OnCandidate != nil {
				s.OnCandidate(c, acc)
			}
		}
		if fmt.Sprint(sortedShares(best.Shares)) == fmt.Sprint(sortedShares(res.After.Shares)) {
			break
		}
		res.After = best
	}
	return res, nil
}

func findRegion(bp *engine.Blueprint, name string) *engine.RegionDef {
	for _, d := range bp.RegionDefs {
		if d.Name == name {
			return d
		}
	}
	for _, st := range bp.StageDefs {
		for _, d := range st.Regions {
			if d.Name == name {
				return d
			}
		}
	}
	return nil
}

// moves lists the candidates one step from shares: a part (each of steps)
// of one region's share moved to another region, or dropped (which saves
// tokens and money). The tuned regions' total never grows: budgets are
// ceilings that may sum past 100%, but a blueprint's headroom is its
// author's choice, so the search redistributes it and does not inflate it.
func moves(shares map[string]float64, regions []string, steps []float64) []map[string]float64 {
	var out []map[string]float64
	for _, a := range regions {
		for _, f := range steps {
			d := roundShare(shares[a] * f)
			if d <= 0 || d >= shares[a] {
				continue
			}
			for _, b := range regions {
				if b == a {
					continue
				}
				c := copyShares(shares)
				c[a] -= d
				c[b] += d
				out = append(out, c)
			}
			c := copyShares(shares)
			c[a] -= d
			out = append(out, c)
		}
	}
	return out
}

// roundShare keeps shares to half a percent, so candidates stay readable
// and the search does not chase noise.
func roundShare(p float64) float64 { return math.Round(p*2) / 2 }

func copyShares(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedShares(m map[string]float64) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s=%g", k, m[k]))
	}
	return out
}

func describeShares(m map[string]float64) string { return strings.Join(sortedShares(m), ", ") }

// SimEvaluator returns a BudgetEvaluator that runs the blueprint whose text
// is src (from directory dir, where its scripts and seed files resolve; "" for
// an embedded blueprint) through the simulator on cells, whose Policy it
// sets, and averages their fact recall, cost, task retention, waste and dead
// tokens by region. Each candidate is written as a temporary blueprint file
// in dir (or the system's temporary directory) and removed after its runs.
func SimEvaluator(src []byte, dir string, cells []Cell) BudgetEvaluator {
	return func(ctx context.Context, budgets map[string]string) (BudgetScore, error) {
		text, err := RewriteBudgets(src, budgets)
		if err != nil {
			return BudgetScore{}, err
		}
		tmpDir := dir
		if tmpDir == "" {
			tmpDir = os.TempDir()
		}
		f, err := os.CreateTemp(tmpDir, ".ctxsim-budget-*.leviath")
		if err != nil {
			return BudgetScore{}, err
		}
		defer os.Remove(f.Name())
		_, err = f.Write(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return BudgetScore{}, err
		}
		sc := BudgetScore{Dead: map[string]float64{}}
		n, nr := 0, 0
		for _, c := range cells {
			c.Policy = "regions:" + f.Name()
			res, err := Simulate(ctx, c)
			if err != nil {
				return BudgetScore{}, fmt.Errorf("%s at %s: %w", c.Workload, FormatWindow(c.WindowTokens), err)
			}
			if v, ok := res.Metrics["fact_recall_pct"]; ok {
				sc.Recall += v
				nr++
			}
			sc.Cost += res.Metrics["cost_usd"]
			sc.Task += res.Metrics["task_retained_pct"]
			sc.Waste += res.Metrics["waste_pct"]
			for _, d := range res.DeadByRegion {
				sc.Dead[d.Region] += float64(d.Tokens)
			}
			n++
		}
		if n == 0 {
			return BudgetScore{}, errors.New("no runs to evaluate")
		}
		if nr > 0 {
			sc.Recall /= float64(nr)
		}
		sc.Cost /= float64(n)
		sc.Task /= float64(n)
		sc.Waste /= float64(n)
		for r := range sc.Dead {
			sc.Dead[r] /= float64(n)
		}
		return sc, nil
	}
}

// ParseShare reads a budget share "12.5%" as 12.5.
func ParseShare(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || !strings.HasSuffix(s, "%") {
		return 0, fmt.Errorf("share %q: want a percentage such as 12.5%%", s)
	}
	return v, nil
}

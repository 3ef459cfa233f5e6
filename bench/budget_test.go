package bench

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/blueprints"
	"github.com/ctxsim/ctxsim/engine"
)

func coderBlueprint(t *testing.T) ([]byte, *engine.Blueprint) {
	t.Helper()
	src, err := blueprints.Source("coder")
	if err != nil {
		t.Fatal(err)
	}
	bp, err := engine.ParseBlueprint("coder.leviath", src, "")
	if err != nil {
		t.Fatal(err)
	}
	return src, bp
}

func TestRewriteBudgets(t *testing.T) {
	src, bp := coderBlueprint(t)
	budgets := map[string]string{"codebase": "30%", "conversation": "12.5%"}
	out, err := RewriteBudgets(src, budgets)
	if err != nil {
		t.Fatal(err)
	}
	got, err := engine.ParseBlueprint("coder.leviath", out, "")
	if err != nil {
		t.Fatalf("rewritten blueprint does not load: %v", err)
	}
	want, err := bp.WithBudgets(budgets)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want.RegionDefs {
		g := findRegion(got, w.Name)
		if g == nil || g.Budget != w.Budget {
			t.Errorf("region %s: budget %+v, want %+v", w.Name, g.Budget, w.Budget)
		}
	}
	changed := 0
	a, b := strings.Split(string(src), "\n"), strings.Split(string(out), "\n")
	if len(a) != len(b) {
		t.Fatalf("%d lines became %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			changed++
		}
	}
	if changed != 2 {
		t.Errorf("%d lines changed, want 2", changed)
	}

	table := []byte("[agent]\nname = \"x\"\n\n[context.regions.notes]\nkind = \"sliding_window\"\nbudget = \"10%\"  # notes\n\n[context.regions.log]\nkind = \"clearable\"\nbudget = 4000\n")
	out, err = RewriteBudgets(table, map[string]string{"notes": "20%", "log": "8000"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "budget = \"20%\"  # notes\n"; !strings.Contains(string(out), want) || !strings.Contains(string(out), "budget = 8000\n") {
		t.Errorf("table form:\n%s", out)
	}
	if _, err := RewriteBudgets(src, map[string]string{"nope": "5%"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing region: %v", err)
	}
}

func TestBudgetSearch(t *testing.T) {
	_, bp := coderBlueprint(t)
	regions := TunableRegions(bp, 2)
	if len(regions) != 2 {
		t.Fatalf("tunable regions %v", regions)
	}
	// A made-up response: recall peaks when the first region holds 50%,
	// and every share point costs money.
	eval := func(_ context.Context, b map[string]string) (BudgetScore, error) {
		var shares []float64
		for _, r := range regions {
			v, err := ParseShare(b[r])
			if err != nil {
				return BudgetScore{}, err
			}
			shares = append(shares, v)
		}
		recall := 100 - math.Abs(shares[0]-50) - math.Abs(shares[1]-10)/4
		cost := 0.01 * (shares[0] + shares[1])
		return BudgetScore{Recall: recall, Cost: cost, Task: 100}, nil
	}
	var seen int
	s := &BudgetSearch{Blueprint: bp, Window: 200000, Regions: regions, Eval: eval, CeilingUSD: 1,
		OnCandidate: func(BudgetCandidate, bool) { seen++ }}
	res, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.After.Recall <= res.Before.Recall {
		t.Errorf("search did not improve recall: before %+v after %+v", res.Before, res.After)
	}
	if res.After.Cost > res.CeilingUSD {
		t.Errorf("after costs %v over the ceiling %v", res.After.Cost, res.CeilingUSD)
	}
	if seen == 0 || res.Evaluations != seen+1 {
		t.Errorf("%d evaluations, %d candidates reported", res.Evaluations, seen)
	}
	again, _ := (&BudgetSearch{Blueprint: bp, Window: 200000, Regions: regions, Eval: eval, CeilingUSD: 1}).Run(context.Background())
	if describeShares(again.After.Shares) != describeShares(res.After.Shares) {
		t.Errorf("search not deterministic: %v then %v", res.After.Shares, again.After.Shares)
	}
	// The default ceiling is the blueprint's own cost: no candidate may cost more.
	res, err = (&BudgetSearch{Blueprint: bp, Window: 200000, Regions: regions, Eval: eval}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.After.Cost > res.Before.Cost+1e-12 {
		t.Errorf("default ceiling: after costs %v, before %v", res.After.Cost, res.Before.Cost)
	}
	if _, err := (&BudgetSearch{Blueprint: bp, Window: 200000, Regions: []string{"task"}, Eval: eval}).Run(context.Background()); err == nil {
		t.Error("tuning a region that the evaluator cannot read: no error")
	}
}

func FuzzRewriteBudgets(f *testing.F) {
	src, _ := blueprints.Source("coder")
	f.Add(src, "codebase", "30%")
	f.Add([]byte("[context.regions.notes]\nbudget = \"10%\"\n"), "notes", "20%")
	f.Add([]byte("[context.regions]\nx = { budget = 5 }\n[[stages]]\n"), "x", "7")
	f.Fuzz(func(t *testing.T, src []byte, region, budget string) {
		out, err := RewriteBudgets(src, map[string]string{region: budget})
		if err != nil {
			return
		}
		// Only budget values change: the line count stays.
		if strings.Count(string(out), "\n") != strings.Count(string(src), "\n") {
			t.Fatalf("line count changed:\n%q\n%q", src, out)
		}
	})
}

// SimEvaluator's score is the mean over its cells of what each run
// measured, dead tokens by region included.
func TestSimEvaluator(t *testing.T) {
	src, _ := coderBlueprint(t)
	cells := []Cell{
		{Workload: "coder", Model: "claude-sonnet-5.5", WindowTokens: 32000, Seed: 1},
		{Workload: "needle", Model: "claude-sonnet-5.5", WindowTokens: 16000, Seed: 2},
	}
	got, err := SimEvaluator(src, "", cells)(context.Background(), map[string]string{"codebase": "25%"})
	if err != nil {
		t.Fatal(err)
	}
	var want BudgetScore
	want.Dead = map[string]float64{}
	for _, c := range cells {
		c.Policy = "regions:coder"
		res, err := Simulate(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		want.Recall += res.Metrics["fact_recall_pct"] / 2
		want.Cost += res.Metrics["cost_usd"] / 2
		want.Task += res.Metrics["task_retained_pct"] / 2
		want.Waste += res.Metrics["waste_pct"] / 2
		for _, d := range res.DeadByRegion {
			want.Dead[d.Region] += float64(d.Tokens) / 2
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	if !near(got.Recall, want.Recall) || !near(got.Cost, want.Cost) || !near(got.Task, want.Task) || !near(got.Waste, want.Waste) {
		t.Errorf("score %+v, want %+v", got, want)
	}
	if len(got.Dead) != len(want.Dead) || want.Dead["codebase"] == 0 {
		t.Fatalf("dead tokens %v, want %v", got.Dead, want.Dead)
	}
	for r, v := range want.Dead {
		if !near(got.Dead[r], v) {
			t.Errorf("dead tokens in %q: %v, want %v", r, got.Dead[r], v)
		}
	}
}

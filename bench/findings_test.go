package bench

import (
	"strings"
	"testing"
)

// hand builds one successful record of workload "w" by hand.
func hand(policy string, window int, seed uint64, m map[string]float64) *Record {
	return &Record{
		ID:     policy + "/" + FormatWindow(window),
		Cell:   Cell{Workload: "w", Policy: policy, Model: "m", WindowTokens: window, Seed: seed},
		Result: Result{Metrics: m},
	}
}

// handTable is one workload of hand-made cells: metrics[policy][window].
func handTable(t *testing.T, cells map[string]map[int]map[string]float64) *WorkloadTable {
	t.Helper()
	var recs []*Record
	for p, byWin := range cells {
		for w, m := range byWin {
			recs = append(recs, hand(p, w, 1, m))
		}
	}
	tab := MakeTable(recs)
	if len(tab.Workloads) != 1 {
		t.Fatalf("%d workload tables, want 1", len(tab.Workloads))
	}
	return &tab.Workloads[0]
}

func TestFindingsHandMade(t *testing.T) {
	type mm = map[string]float64
	// over is a cell whose every request exceeded the window: a provider
	// refuses all of them, so its perfect prefix and zero waste are no win.
	over := func(task float64) mm {
		return mm{"task_retained_pct": task, "fact_recall_pct": 0, "prefix_stability_pct": 100, "cache_hit_pct": 99,
			"waste_pct": 0, "cost_usd": 0.5, "requests": 10, "over_window_requests": 10}
	}
	fits := func(task, recall, prefix, cost float64) mm {
		return mm{"task_retained_pct": task, "fact_recall_pct": recall, "prefix_stability_pct": prefix, "cache_hit_pct": prefix,
			"waste_pct": 50, "cost_usd": cost, "requests": 10, "over_window_requests": 0}
	}
	tests := []struct {
		name   string
		cells  map[string]map[int]map[string]float64
		want   []string
		reject []string
	}{
		{
			name: "overflowing cells are named and left out of comparisons",
			cells: map[string]map[int]map[string]float64{
				"flat":          {8000: fits(10, 40, 50, 1), 32000: fits(100, 60, 60, 2), 64000: fits(100, 80, 70, 3)},
				"regions:coder": {8000: over(0), 32000: fits(100, 50, 80, 4), 64000: fits(100, 70, 90, 6)},
			},
			want: []string{
				"`regions:coder` sends every request over the window at 8K",
				"At 32K, fact recall is 50.0% with `regions:coder` against 60.0% with the best flat policy (`flat`); here the flat list recalls more.",
				"Prefix stability averages 85.0% over every window but 8K with `regions:coder` and 65.0% with `flat`",
				"At 32K a run costs $4.000 with `regions:coder` and $2.000 with `flat` (2.00×)",
			},
			reject: []string{"At 8K, fact recall", "100.0% against", "At 8K a run costs"},
		},
		{
			name: "a missing cell at the largest window does not hide where the task stays",
			cells: map[string]map[int]map[string]float64{
				"flat":          {8000: fits(10, 40, 50, 1), 32000: fits(100, 60, 60, 2), 64000: fits(100, 80, 70, 3)},
				"regions:coder": {8000: fits(100, 45, 60, 1), 32000: fits(100, 65, 70, 2), 64000: fits(100, 85, 80, 3), 128000: fits(100, 90, 90, 4)},
			},
			want: []string{
				"`flat` from 32K up (as low as 10.0% at 8K)",
				"`regions:coder` at every window",
				// averages compare like with like: only the windows both ran at
				"Prefix stability averages 70.0% over every window but 128K with `regions:coder` and 60.0% with `flat`",
				"at 64K a run costs $3.000 with `regions:coder` and $3.000 with `flat` (1.00×)",
			},
			reject: []string{"at no window", "at 128K a run costs"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(Findings(handTable(t, tc.cells)), "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("findings lack %q:\n%s", w, got)
				}
			}
			for _, r := range tc.reject {
				if strings.Contains(got, r) {
					t.Errorf("findings say %q:\n%s", r, got)
				}
			}
		})
	}
}

func TestBreakFindingNamesSeed(t *testing.T) {
	var recs []*Record
	for seed := uint64(1); seed <= 3; seed++ {
		for _, p := range []string{"flat", "regions:coder"} {
			r := hand(p, 32000, seed, map[string]float64{"prefix_stability_pct": 50})
			r.Cell.Series = seed == 2
			if seed == 2 {
				r.Series = &Series{RequestTokens: []int{10, 20, 30}, PrefixTokens: []int{0, 10, 5}}
			}
			recs = append(recs, r)
		}
	}
	wt := &MakeTable(recs).Workloads[0]
	got := strings.Join(Findings(wt), "\n")
	want := "At 32K, in the seed-2 run, the prompt prefix breaks (a request does not start with the whole previous one) with `flat` on 50% of requests, first at request 3"
	if !strings.Contains(got, want) {
		t.Errorf("findings lack %q:\n%s", want, got)
	}
}

func TestFindingsSayWhenRecallIsAbsent(t *testing.T) {
	m := func(v float64) map[string]float64 {
		return map[string]float64{"task_retained_pct": 100, "prefix_stability_pct": v, "requests": 4, "over_window_requests": 0}
	}
	wt := handTable(t, map[string]map[int]map[string]float64{
		"flat":          {8000: m(50), 32000: m(60)},
		"regions:coder": {8000: m(70), 32000: m(80)},
	})
	got := strings.Join(Findings(wt), "\n")
	if want := "No cell reports fact or reference recall, so recall is not compared."; !strings.Contains(got, want) {
		t.Errorf("findings lack %q:\n%s", want, got)
	}
}

func TestHeadlineMarksOverflow(t *testing.T) {
	ok := map[string]float64{"task_retained_pct": 50, "cost_usd": 1, "requests": 4, "over_window_requests": 1}
	over := map[string]float64{"task_retained_pct": 0, "cost_usd": 0.5, "requests": 4, "over_window_requests": 4}
	recs := []*Record{hand("flat", 8000, 1, ok), hand("regions:coder", 8000, 1, over), hand("unbounded", 8000, 1, over)}
	md := string(Markdown(MakeTable(recs), recs, nil, ""))
	for _, want := range []string{
		"| w | 8K | `flat` | `regions:coder` | 50.0 | 0.0 † |",
		"| 1.000 | 0.500 † |",
		"† every request of the run went over the window",
		"| flat | `flat` | 50.0 |",
		"| regions | `regions:coder` | 0.0 † |",
		// unbounded ignores the window by design: its numbers are the bound
		"| reference | `unbounded` | 0.0 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestRecallCatchUpIsWhereFlatStays(t *testing.T) {
	m := func(recall float64) map[string]float64 {
		return map[string]float64{"fact_recall_pct": recall, "requests": 4, "over_window_requests": 0}
	}
	tests := []struct {
		name      string
		flat      map[int]float64
		want      string
		forbidden string
	}{
		{"monotonic", map[int]float64{8000: 20, 16000: 40, 32000: 60, 64000: 80},
			"; a flat list needs 32K to do as well.", ""},
		{"reaches, falls back, recovers", map[int]float64{8000: 20, 16000: 55, 32000: 40, 64000: 80},
			"; a flat list does as well only from 64K up (it reaches it at 16K but falls back at 32K).", "needs 16K"},
		{"reaches, then falls back for good", map[int]float64{8000: 20, 16000: 55, 32000: 40, 64000: 45},
			"; no flat policy stays as good up to the largest window (one reaches it at 16K but falls back at 32K).", "needs 16K"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cells := map[string]map[int]map[string]float64{"flat": {}, "regions:coder": {}}
			for w, v := range tc.flat {
				cells["flat"][w] = m(v)
				cells["regions:coder"][w] = m(50)
			}
			got := strings.Join(Findings(handTable(t, cells)), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("findings lack %q:\n%s", tc.want, got)
			}
			if tc.forbidden != "" && strings.Contains(got, tc.forbidden) {
				t.Errorf("findings say %q:\n%s", tc.forbidden, got)
			}
		})
	}
}

func TestFindingsNamePartialOverflow(t *testing.T) {
	m := func(over float64) map[string]float64 {
		return map[string]float64{"task_retained_pct": 100, "prefix_stability_pct": 50, "requests": 10, "over_window_requests": over}
	}
	wt := handTable(t, map[string]map[int]map[string]float64{
		"flat":          {8000: m(3), 32000: m(1), 64000: m(0)},
		"regions:coder": {8000: m(0), 32000: m(0), 64000: m(0)},
		"unbounded":     {8000: m(5), 32000: m(5), 64000: m(5)},
	})
	got := strings.Join(Findings(wt), "\n")
	want := "Some requests go over the window (a provider would refuse those) with `flat` at 8K (30%), 32K (10%); the numbers count them as served."
	if !strings.Contains(got, want) {
		t.Errorf("findings lack %q:\n%s", want, got)
	}
	if strings.Contains(got, "`regions:coder` at 8K") || strings.Contains(got, "unbounded` at") {
		t.Errorf("findings name a policy that fits or a reference:\n%s", got)
	}
}

func TestWasteMixFinding(t *testing.T) {
	waste := func(dead, rep, ref float64) map[string]float64 {
		return map[string]float64{"waste_pct": dead + rep + ref, "waste_dead_pct": dead, "waste_reprefill_pct": rep,
			"waste_refetch_pct": ref, "requests": 10, "over_window_requests": 0}
	}
	over := waste(0, 0, 0)
	over["over_window_requests"] = 10
	wt := handTable(t, map[string]map[int]map[string]float64{
		"flat":          {8000: waste(50, 10, 20), 32000: waste(60, 20, 10), 64000: waste(1, 1, 1)},
		"regions:coder": {8000: waste(80, 10, 0), 32000: waste(90, 20, 2), 64000: over},
	})
	got := strings.Join(Findings(wt), "\n")
	want := "Of the tokens sent, `regions:coder` wastes 85.0% as dead content (resent, never used by a probe), 15.0% as re-prefill (sent again and missed by the cache) and 1.0% as refetch; `flat` 55.0%, 15.0% and 15.0% (means over every window but 64K)."
	if !strings.Contains(got, want) {
		t.Errorf("findings lack\n%s\ngot:\n%s", want, got)
	}

	// A window missing a part is left out; with none left, no sentence
	// rather than zeros.
	partial := waste(50, 10, 20)
	delete(partial, "waste_dead_pct")
	wt = handTable(t, map[string]map[int]map[string]float64{
		"flat":          {8000: partial, 32000: waste(60, 20, 10)},
		"regions:coder": {8000: waste(80, 10, 0), 32000: waste(90, 20, 2)},
	})
	if got := strings.Join(Findings(wt), "\n"); !strings.Contains(got, "(means over every window but 8K)") {
		t.Errorf("a window missing a part is not left out:\n%s", got)
	}
	wt = handTable(t, map[string]map[int]map[string]float64{
		"flat":          {8000: partial},
		"regions:coder": {8000: waste(80, 10, 0)},
	})
	if got := strings.Join(Findings(wt), "\n"); strings.Contains(got, "Of the tokens sent") {
		t.Errorf("a sentence without numbers:\n%s", got)
	}
}

// The dead tokens' split by region is given as each window's shares,
// averaged, so that a large window does not outweigh the rest; the engine's
// region-less blocks are named as such, small regions are summed.
func TestDeadRegionFinding(t *testing.T) {
	m := func() map[string]float64 {
		return map[string]float64{"waste_pct": 50, "requests": 10, "over_window_requests": 0}
	}
	wt := handTable(t, map[string]map[int]map[string]float64{
		"flat":          {8000: m(), 32000: m(), 64000: m()},
		"regions:coder": {8000: m(), 32000: m(), 64000: m()},
	})
	set := func(w int, d ...RegionDead) { wt.Cells["regions:coder"][w].Runs[0].DeadByRegion = d }
	set(8000, RegionDead{"codebase", 60}, RegionDead{"conversation", 40})
	set(32000, RegionDead{"", 1}, RegionDead{"codebase", 7_990}, RegionDead{"conversation", 1_000}, RegionDead{"scratch", 1_000}, RegionDead{"tiny", 9})
	// 64K has no dead tokens: it is left out, not counted as zero shares.
	want := "Of `regions:coder`'s dead tokens, 70% in `codebase`, 25% in `conversation`, 5% in `scratch` (mean shares over every window but 64K)."
	if got := deadRegionFinding(wt, "regions:coder"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := strings.Join(Findings(wt), "\n"); !strings.Contains(got, want) {
		t.Errorf("Findings lack the dead-region sentence:\n%s", got)
	}
	set(8000, RegionDead{"", 50}, RegionDead{"codebase", 50})
	set(32000)
	if got, want := deadRegionFinding(wt, "regions:coder"), "Of `regions:coder`'s dead tokens, 50% in blocks outside any region, 50% in `codebase` (mean shares over every window but 32K, 64K)."; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	set(8000)
	if got := deadRegionFinding(wt, "regions:coder"); got != "" {
		t.Errorf("no dead tokens, got %q", got)
	}
}

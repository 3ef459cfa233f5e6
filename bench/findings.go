package bench

import (
	"fmt"
	"math"
	"strings"
)

// Findings computes the "what this shows" sentences of one workload table
// from its numbers: where each layout keeps the task, how recall compares
// at the smallest window and from which window the flat list catches up,
// and how prefix caching and cost compare. Nothing in them is written by
// hand; a sentence whose numbers are missing is left out.
func Findings(wt *WorkloadTable) []string {
	var out []string
	if len(wt.Windows) == 0 {
		return []string{"No finished cells."}
	}
	flat := wt.policiesOf(LayoutFlat)
	regions := wt.policiesOf(LayoutRegions)
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	add(taskFinding(wt, append(append([]string(nil), flat...), regions...)))
	rm := wt.recallMetric()
	switch {
	case len(flat) > 0 && len(regions) > 0:
		add(recallFinding(wt, rm, flat, regions))
		add(meanFinding(wt, "prefix_stability_pct", "Prefix stability", flat, regions))
		add(breakFinding(wt, []string{flat[0], regions[0]}))
		add(meanFinding(wt, "cache_hit_pct", "Prompt-cache hit", flat, regions))
		add(meanFinding(wt, "waste_pct", "Token waste", flat, regions))
		add(costFinding(wt, flat, regions))
	case len(flat) > 0:
		add(boundFinding(wt, rm, flat))
	}
	if len(out) == 0 {
		out = append(out, "The finished cells report none of the compared metrics.")
	}
	return out
}

const full = 99.95 // a percentage that prints as 100.0

// taskFinding says, per policy, from which window up the task stays in every
// request, and how low it fell below that.
func taskFinding(wt *WorkloadTable, pols []string) string {
	const m = "task_retained_pct"
	var parts []string
	for _, p := range pols {
		from := 0
		for i := len(wt.Windows) - 1; i >= 0; i-- {
			v, ok := wt.at(p, wt.Windows[i], m)
			if !ok || v < full {
				break
			}
			from = wt.Windows[i]
		}
		lowW, low, any := 0, 0.0, false
		for _, w := range wt.Windows {
			if v, ok := wt.at(p, w, m); ok && (!any || v < low) {
				lowW, low, any = w, v, true
			}
		}
		switch {
		case !any:
			continue
		case from == wt.Windows[0]:
			parts = append(parts, fmt.Sprintf("`%s` at every window", p))
		case from == 0:
			parts = append(parts, fmt.Sprintf("`%s` at no window (as low as %s%% at %s)", p, formatValue(m, low), FormatWindow(lowW)))
		default:
			parts = append(parts, fmt.Sprintf("`%s` from %s up (as low as %s%% at %s)", p, FormatWindow(from), formatValue(m, low), FormatWindow(lowW)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "The task stays in every request with " + strings.Join(parts, "; ") + "."
}

// best returns the policy with the best mean of metric at window among pols.
func best(wt *WorkloadTable, metric string, window int, pols []string, higher bool) (string, float64, bool) {
	bp, bv, found := "", 0.0, false
	for _, p := range pols {
		v, ok := wt.at(p, window, metric)
		if !ok {
			continue
		}
		if !found || (higher && v > bv) || (!higher && v < bv) {
			bp, bv, found = p, v, true
		}
	}
	return bp, bv, found
}

func recallFinding(wt *WorkloadTable, metric string, flat, regions []string) string {
	small := wt.Windows[0]
	rp, rv, ok1 := best(wt, metric, small, regions, true)
	fp, fv, ok2 := best(wt, metric, small, flat, true)
	if !ok1 || !ok2 {
		return ""
	}
	label := "fact recall"
	if metric == "reference_recall_pct" {
		label = "reference recall"
	}
	s := fmt.Sprintf("At %s, %s is %s%% with `%s` against %s%% with the best flat policy (`%s`)",
		FormatWindow(small), label, formatValue(metric, rv), rp, formatValue(metric, fv), fp)
	switch {
	case rv > fv+0.05:
		catch := 0
		for _, w := range wt.Windows {
			if _, v, ok := best(wt, metric, w, flat, true); ok && v >= rv-0.05 {
				catch = w
				break
			}
		}
		if catch != 0 {
			s += fmt.Sprintf("; a flat list needs %s to do as well", FormatWindow(catch))
		} else {
			s += "; no flat policy does as well at any window of the grid"
		}
	case fv > rv+0.05:
		s += "; here the flat list recalls more"
	default:
		s += "; they are level"
	}
	return s + "."
}

// meanFinding compares a metric's mean over windows between the first flat
// policy and the first region layout.
func meanFinding(wt *WorkloadTable, metric, label string, flat, regions []string) string {
	f, r := flat[0], regions[0]
	fm, fn := meanOver(wt, f, metric)
	rmean, rn := meanOver(wt, r, metric)
	if fn == 0 || rn == 0 {
		return ""
	}
	s := fmt.Sprintf("%s averages %s%% over the windows with `%s` and %s%% with `%s`", label,
		formatValue(metric, rmean), r, formatValue(metric, fm), f)
	// the window where they differ most
	gw, gap := 0, -1.0
	for _, w := range wt.Windows {
		a, ok1 := wt.at(f, w, metric)
		b, ok2 := wt.at(r, w, metric)
		if ok1 && ok2 && math.Abs(a-b) > gap {
			gw, gap = w, math.Abs(a-b)
		}
	}
	if gw != 0 && gap >= 0.05 {
		a, _ := wt.at(f, gw, metric)
		b, _ := wt.at(r, gw, metric)
		s += fmt.Sprintf("; the widest gap is at %s (%s%% against %s%%)", FormatWindow(gw), formatValue(metric, b), formatValue(metric, a))
	}
	return s + "."
}

func meanOver(wt *WorkloadTable, p, metric string) (float64, int) {
	sum, n := 0.0, 0
	for _, w := range wt.Windows {
		if v, ok := wt.at(p, w, metric); ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

func costFinding(wt *WorkloadTable, flat, regions []string) string {
	f, r := flat[0], regions[0]
	var parts []string
	for _, w := range []int{wt.Windows[0], wt.Windows[len(wt.Windows)-1]} {
		a, ok1 := wt.at(f, w, "cost_usd")
		b, ok2 := wt.at(r, w, "cost_usd")
		if !ok1 || !ok2 {
			continue
		}
		s := fmt.Sprintf("at %s a run costs $%s with `%s` and $%s with `%s`", FormatWindow(w), formatValue("cost_usd", b), r, formatValue("cost_usd", a), f)
		if a > 0 {
			s += fmt.Sprintf(" (%.2f×)", b/a)
		}
		parts = append(parts, s)
		if len(wt.Windows) == 1 {
			break
		}
	}
	if len(parts) == 0 {
		return ""
	}
	out := strings.Join(parts, "; ")
	return strings.ToUpper(out[:1]) + out[1:] + "."
}

// breakFinding says, from the per-request series at the series window, how
// often each policy's request failed to start with the whole previous
// request (its prompt prefix broke, so a cache could not reuse it all), and
// where that first happened.
func breakFinding(wt *WorkloadTable, pols []string) string {
	if wt.SeriesWindow == 0 {
		return ""
	}
	var parts []string
	for _, p := range pols {
		s := seriesRun(wt, p, wt.SeriesWindow)
		if s == nil || len(s.RequestTokens) < 2 || len(s.PrefixTokens) != len(s.RequestTokens) {
			continue
		}
		breaks, first := 0, 0
		for i := 1; i < len(s.RequestTokens); i++ {
			if s.PrefixTokens[i] < s.RequestTokens[i-1] {
				breaks++
				if first == 0 {
					first = i + 1
				}
			}
		}
		share := 100 * float64(breaks) / float64(len(s.RequestTokens)-1)
		if breaks == 0 {
			parts = append(parts, fmt.Sprintf("`%s` never", p))
			continue
		}
		parts = append(parts, fmt.Sprintf("`%s` on %.0f%% of requests, first at request %d", p, share, first))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("At %s, the prompt prefix breaks (a request does not start with the whole previous one) with %s.",
		FormatWindow(wt.SeriesWindow), strings.Join(parts, "; "))
}

// boundFinding compares the best flat policy with the references when the
// table has no region layout to compare with: how far eviction-only policies
// fall short of the clairvoyant bound and of an unbounded window.
func boundFinding(wt *WorkloadTable, metric string, flat []string) string {
	small := wt.Windows[0]
	fp, fv, ok := best(wt, metric, small, flat, true)
	if !ok {
		return ""
	}
	label := "fact recall"
	if metric == "reference_recall_pct" {
		label = "reference recall"
	}
	s := fmt.Sprintf("At %s, %s is %s%% with the best flat policy (`%s`)", FormatWindow(small), label, formatValue(metric, fv), fp)
	var refs []string
	for _, r := range []string{"clairvoyant", "unbounded"} {
		if v, ok := wt.at(r, small, metric); ok {
			refs = append(refs, fmt.Sprintf("%s%% with `%s`", formatValue(metric, v), r))
		}
	}
	if len(refs) > 0 {
		s += " against " + strings.Join(refs, " and ")
	}
	return s + "."
}

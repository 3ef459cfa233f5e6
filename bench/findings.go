package bench

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
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
	add(overflowFinding(wt, append(append([]string(nil), flat...), regions...)))
	add(partialOverflowFinding(wt, append(append([]string(nil), flat...), regions...)))
	rm := wt.recallMetric()
	if !wt.has(rm) && (len(flat) > 0 || len(regions) > 0) {
		// Say so rather than leave the reader to wonder why recall is missing.
		add("No cell reports fact or reference recall, so recall is not compared.")
	}
	switch {
	case len(flat) > 0 && len(regions) > 0:
		add(recallFinding(wt, rm, flat, regions))
		add(meanFinding(wt, "prefix_stability_pct", "Prefix stability", flat, regions))
		add(breakFinding(wt, []string{flat[0], regions[0]}))
		add(meanFinding(wt, "cache_hit_pct", "Prompt-cache hit", flat, regions))
		add(meanFinding(wt, "waste_pct", "Token waste", flat, regions))
		add(wasteMixFinding(wt, flat[0], regions[0]))
		add(deadRegionFinding(wt, regions[0]))
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
		// A window without numbers (not in the grid, or failed) neither
		// keeps nor loses the task: it is skipped, not taken for a loss.
		from := 0
		for i := len(wt.Windows) - 1; i >= 0; i-- {
			v, ok := wt.at(p, wt.Windows[i], m)
			if !ok {
				continue
			}
			if v < full {
				break
			}
			from = wt.Windows[i]
		}
		lowW, low, any, first, missing := 0, 0.0, false, 0, false
		for _, w := range wt.Windows {
			v, ok := wt.at(p, w, m)
			if !ok {
				missing = true
				continue
			}
			if first == 0 {
				first = w
			}
			if !any || v < low {
				lowW, low, any = w, v, true
			}
		}
		switch {
		case !any:
			continue
		case from == first && missing:
			parts = append(parts, fmt.Sprintf("`%s` at every window with numbers", p))
		case from == first:
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

// overflows reports whether every request of the cell went over the window.
// A provider refuses such requests, so the cell's prefix stability, cache
// hits, waste and cost describe requests that were never served: a
// comparison must not cite them. References are exempt: unbounded and
// as-recorded ignore the window by design.
func (wt *WorkloadTable) overflows(p string, window int) bool {
	if PolicyLayout(p) == LayoutReference {
		return false
	}
	n, ok1 := wt.at(p, window, "requests")
	over, ok2 := wt.at(p, window, "over_window_requests")
	return ok1 && ok2 && n > 0 && over >= n
}

// fit is at for comparisons: no number for a cell that overflowed.
func (wt *WorkloadTable) fit(p string, window int, metric string) (float64, bool) {
	if wt.overflows(p, window) {
		return 0, false
	}
	return wt.at(p, window, metric)
}

// overflowFinding names the cells whose every request went over the window,
// which the comparisons after it leave out.
func overflowFinding(wt *WorkloadTable, pols []string) string {
	var parts []string
	for _, p := range pols {
		var ws []int
		for _, w := range wt.Windows {
			if wt.overflows(p, w) {
				ws = append(ws, w)
			}
		}
		if len(ws) > 0 {
			parts = append(parts, fmt.Sprintf("`%s` sends every request over the window at %s", p, windowList(ws)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + " (a provider would refuse them all), so the comparisons below leave those cells out."
}

// partialOverflowFinding names the cells where some, not all, requests went
// over the window: their numbers stand, but count refused requests as served.
func partialOverflowFinding(wt *WorkloadTable, pols []string) string {
	var parts []string
	for _, p := range pols {
		var ws []string
		for _, w := range wt.Windows {
			n, ok1 := wt.at(p, w, "requests")
			over, ok2 := wt.at(p, w, "over_window_requests")
			if ok1 && ok2 && over > 0 && over < n {
				ws = append(ws, fmt.Sprintf("%s (%.0f%%)", FormatWindow(w), 100*over/n))
			}
		}
		if len(ws) > 0 {
			parts = append(parts, fmt.Sprintf("`%s` at %s", p, strings.Join(ws, ", ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Some requests go over the window (a provider would refuse those) with " + strings.Join(parts, "; ") + "; the numbers count them as served."
}

// commonWindows returns the windows at which both a and b have a number of
// metric from a cell that did not overflow.
func commonWindows(wt *WorkloadTable, metric, a, b string) []int {
	var ws []int
	for _, w := range wt.Windows {
		_, ok1 := wt.fit(a, w, metric)
		_, ok2 := wt.fit(b, w, metric)
		if ok1 && ok2 {
			ws = append(ws, w)
		}
	}
	return ws
}

// best returns the policy with the best mean of metric at window among pols,
// leaving out cells that overflowed.
func best(wt *WorkloadTable, metric string, window int, pols []string, higher bool) (string, float64, bool) {
	bp, bv, found := "", 0.0, false
	for _, p := range pols {
		v, ok := wt.fit(p, window, metric)
		if !ok {
			continue
		}
		if !found || (higher && v > bv) || (!higher && v < bv) {
			bp, bv, found = p, v, true
		}
	}
	return bp, bv, found
}

// recallFinding compares recall at the smallest window where both layouts
// have a number, and says from which window a flat list catches up.
func recallFinding(wt *WorkloadTable, metric string, flat, regions []string) string {
	si := -1
	var rp, fp string
	var rv, fv float64
	for i, w := range wt.Windows {
		var ok1, ok2 bool
		rp, rv, ok1 = best(wt, metric, w, regions, true)
		fp, fv, ok2 = best(wt, metric, w, flat, true)
		if ok1 && ok2 {
			si = i
			break
		}
	}
	if si < 0 {
		return ""
	}
	label := "fact recall"
	if metric == "reference_recall_pct" {
		label = "reference recall"
	}
	s := fmt.Sprintf("At %s, %s is %s%% with `%s` against %s%% with the best flat policy (`%s`)",
		FormatWindow(wt.Windows[si]), label, formatValue(metric, rv), rp, formatValue(metric, fv), fp)
	switch {
	case rv > fv+0.05:
		// Recall need not grow with the window: "needs W" must mean from W
		// up, so find where the best flat policy first reaches the region
		// layout, where it first falls back after that, and from where it
		// stays as good.
		reach, fall, from := 0, 0, 0
		for _, w := range wt.Windows[si+1:] {
			_, v, ok := best(wt, metric, w, flat, true)
			if !ok {
				continue
			}
			if v >= rv-0.05 {
				if reach == 0 {
					reach = w
				}
				if from == 0 {
					from = w
				}
			} else {
				if reach != 0 && fall == 0 {
					fall = w
				}
				from = 0
			}
		}
		switch {
		case reach == 0:
			s += "; no flat policy does as well at any window of the grid"
		case from == reach:
			s += fmt.Sprintf("; a flat list needs %s to do as well", FormatWindow(from))
		case from != 0:
			s += fmt.Sprintf("; a flat list does as well only from %s up (it reaches it at %s but falls back at %s)",
				FormatWindow(from), FormatWindow(reach), FormatWindow(fall))
		default:
			s += fmt.Sprintf("; no flat policy stays as good up to the largest window (one reaches it at %s but falls back at %s)",
				FormatWindow(reach), FormatWindow(fall))
		}
	case fv > rv+0.05:
		s += "; here the flat list recalls more"
	default:
		s += "; they are level"
	}
	return s + "."
}

// meanFinding compares a metric's mean between the first flat policy and the
// first region layout, over the windows where both have a number: a mean
// over different windows would compare unlike things.
func meanFinding(wt *WorkloadTable, metric, label string, flat, regions []string) string {
	f, r := flat[0], regions[0]
	ws := commonWindows(wt, metric, f, r)
	if len(ws) == 0 {
		return ""
	}
	var fm, rmean float64
	for _, w := range ws {
		a, _ := wt.at(f, w, metric)
		b, _ := wt.at(r, w, metric)
		fm += a / float64(len(ws))
		rmean += b / float64(len(ws))
	}
	s := fmt.Sprintf("%s averages %s%% %s with `%s` and %s%% with `%s`", label,
		formatValue(metric, rmean), windowsPhrase(wt, ws), r, formatValue(metric, fm), f)
	// the window where they differ most
	gw, gap := 0, -1.0
	for _, w := range ws {
		a, _ := wt.at(f, w, metric)
		b, _ := wt.at(r, w, metric)
		if math.Abs(a-b) > gap {
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

// wasteMixFinding splits the waste of both layouts into its parts (means
// over the windows both have numbers at): a layout can waste more because it
// resends content no probe uses, or because its cache misses, and the reader
// needs to know which.
func wasteMixFinding(wt *WorkloadTable, f, r string) string {
	parts := []string{"waste_dead_pct", "waste_reprefill_pct", "waste_refetch_pct"}
	var ws []int
	for _, w := range commonWindows(wt, parts[0], f, r) {
		ok := true
		for _, m := range parts[1:] {
			_, ok1 := wt.fit(f, w, m)
			_, ok2 := wt.fit(r, w, m)
			ok = ok && ok1 && ok2
		}
		if ok {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return ""
	}
	mean := func(p, m string) string {
		s := 0.0
		for _, w := range ws {
			v, _ := wt.at(p, w, m)
			s += v
		}
		return formatValue(m, s/float64(len(ws)))
	}
	return fmt.Sprintf("Of the tokens sent, `%s` wastes %s%% as dead content (resent, never used by a probe), %s%% as re-prefill (sent again and missed by the cache) and %s%% as refetch; `%s` %s%%, %s%% and %s%% (means %s).",
		r, mean(r, parts[0]), mean(r, parts[1]), mean(r, parts[2]),
		f, mean(f, parts[0]), mean(f, parts[1]), mean(f, parts[2]), windowsPhrase(wt, ws))
}

// deadRegionFinding says which regions of a region layout held its dead
// tokens: the budgets a blueprint author would look at first. Each window's
// shares weigh the same, whatever its token count.
func deadRegionFinding(wt *WorkloadTable, r string) string {
	shares := map[string]float64{}
	var ws []int
	for _, w := range wt.Windows {
		agg := wt.Cells[r][w]
		if agg == nil || wt.overflows(r, w) {
			continue
		}
		sums, total := map[string]int{}, 0
		for _, run := range agg.Runs {
			if run.OK() {
				for _, d := range run.DeadByRegion {
					sums[d.Region] += d.Tokens
					total += d.Tokens
				}
			}
		}
		if total == 0 {
			continue
		}
		for n, t := range sums {
			shares[n] += float64(t) / float64(total)
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(shares))
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(shares[b], shares[a]) })
	var parts []string
	rest := 0.0
	for i, n := range names {
		share := 100 * shares[n] / float64(len(ws))
		if i >= 3 || share < 1 {
			rest += share
			continue
		}
		name := "`" + n + "`"
		if n == "" {
			name = "blocks outside any region"
		}
		parts = append(parts, fmt.Sprintf("%.0f%% in %s", share, name))
	}
	if rest >= 0.5 {
		parts = append(parts, fmt.Sprintf("%.0f%% elsewhere", rest))
	}
	return fmt.Sprintf("Of `%s`'s dead tokens, %s (mean shares %s).", r, strings.Join(parts, ", "), windowsPhrase(wt, ws))
}

// windowsPhrase is "over the windows", or which were left out.
func windowsPhrase(wt *WorkloadTable, ws []int) string {
	if len(ws) == len(wt.Windows) {
		return "over the windows"
	}
	var left []int
	for _, w := range wt.Windows {
		if !slices.Contains(ws, w) {
			left = append(left, w)
		}
	}
	return "over every window but " + windowList(left)
}

// costFinding compares the cost of a run at the smallest and the largest
// window where both layouts have a number.
func costFinding(wt *WorkloadTable, flat, regions []string) string {
	f, r := flat[0], regions[0]
	ws := commonWindows(wt, "cost_usd", f, r)
	if len(ws) == 0 {
		return ""
	}
	if len(ws) > 1 {
		ws = []int{ws[0], ws[len(ws)-1]}
	}
	var parts []string
	for _, w := range ws {
		a, _ := wt.at(f, w, "cost_usd")
		b, _ := wt.at(r, w, "cost_usd")
		s := fmt.Sprintf("at %s a run costs $%s with `%s` and $%s with `%s`", FormatWindow(w), formatValue("cost_usd", b), r, formatValue("cost_usd", a), f)
		if a > 0 {
			s += fmt.Sprintf(" (%.2f×)", b/a)
		}
		parts = append(parts, s)
	}
	out := strings.Join(parts, "; ")
	return strings.ToUpper(out[:1]) + out[1:] + "."
}

// breakFinding says, from the per-request series at the series window, how
// often each policy's request failed to start with the whole previous
// request (its prompt prefix broke, so a cache could not reuse it all), and
// where that first happened. A series is one run's, not a mean over seeds,
// so the sentence names the seed when a cell ran more than one.
func breakFinding(wt *WorkloadTable, pols []string) string {
	w := wt.SeriesWindow
	if w == 0 {
		return ""
	}
	type brk struct {
		pol                 string
		seed                uint64
		breaks, first, reqs int
	}
	var bs []brk
	several := false
	for _, p := range pols {
		r := seriesRecord(wt, p, w)
		if r == nil || wt.overflows(p, w) {
			continue
		}
		s := r.Series
		if len(s.RequestTokens) < 2 || len(s.PrefixTokens) != len(s.RequestTokens) {
			continue
		}
		b := brk{pol: p, seed: r.Cell.Seed, reqs: len(s.RequestTokens)}
		for i := 1; i < len(s.RequestTokens); i++ {
			if s.PrefixTokens[i] < s.RequestTokens[i-1] {
				b.breaks++
				if b.first == 0 {
					b.first = i + 1
				}
			}
		}
		bs = append(bs, b)
		several = several || len(wt.Cells[p][w].Runs) > 1
	}
	if len(bs) == 0 {
		return ""
	}
	at := FormatWindow(w)
	oneSeed := true
	for _, b := range bs {
		oneSeed = oneSeed && b.seed == bs[0].seed
	}
	if several && oneSeed {
		at += fmt.Sprintf(", in the seed-%d run", bs[0].seed)
	}
	var parts []string
	for _, b := range bs {
		name := fmt.Sprintf("`%s`", b.pol)
		if several && !oneSeed {
			name += fmt.Sprintf(" (seed %d)", b.seed)
		}
		if b.breaks == 0 {
			parts = append(parts, name+" never")
			continue
		}
		share := 100 * float64(b.breaks) / float64(b.reqs-1)
		parts = append(parts, fmt.Sprintf("%s on %.0f%% of requests, first at request %d", name, share, b.first))
	}
	return fmt.Sprintf("At %s, the prompt prefix breaks (a request does not start with the whole previous one) with %s.",
		at, strings.Join(parts, "; "))
}

// seriesRecord returns the run of a cell that recorded the per-request
// series, or nil.
func seriesRecord(wt *WorkloadTable, pol string, window int) *Record {
	a := wt.Cells[pol][window]
	if a == nil {
		return nil
	}
	for _, r := range a.Runs {
		if r.OK() && r.Series != nil {
			return r
		}
	}
	return nil
}

// boundFinding compares the best flat policy with the references when the
// table has no region layout to compare with: how far eviction-only policies
// fall short of the clairvoyant bound and of an unbounded window.
func boundFinding(wt *WorkloadTable, metric string, flat []string) string {
	var (
		fp  string
		fv  float64
		ok  bool
		win int
	)
	for _, w := range wt.Windows {
		if fp, fv, ok = best(wt, metric, w, flat, true); ok {
			win = w
			break
		}
	}
	if !ok {
		return ""
	}
	label := "fact recall"
	if metric == "reference_recall_pct" {
		label = "reference recall"
	}
	s := fmt.Sprintf("At %s, %s is %s%% with the best flat policy (`%s`)", FormatWindow(win), label, formatValue(metric, fv), fp)
	var refs []string
	for _, r := range []string{"clairvoyant", "unbounded"} {
		if v, ok := wt.fit(r, win, metric); ok {
			refs = append(refs, fmt.Sprintf("%s%% with `%s`", formatValue(metric, v), r))
		}
	}
	if len(refs) > 0 {
		s += " against " + strings.Join(refs, " and ")
	}
	return s + "."
}

package engine

import (
	"fmt"
	"sort"
	"strings"
)

// summarize calls the summariser on entries joined by blank lines and
// records the call. joined is that text, built only for a summariser other
// than Extractive: Extractive reads the entries' cached scored lines.
func (c *Context) summarize(region string, entries []*entry, joined func() string, budget, inTokens int) (string, error) {
	var s string
	var err error
	if _, ok := c.sum.(Extractive); ok {
		s, err = c.extractive(region, entries, max(budget, 1))
	} else {
		// Another summariser reads the content as written, runs of filler out.
		s, err = c.sum.Summarize(SummaryRequest{Region: region, Content: ExpandFiller(joined()), MaxTokens: max(budget, 1), Counter: c.counter})
	}
	if err != nil {
		c.emit(Event{Kind: EventSummarize, Region: region, InputTokens: inTokens, Message: "summariser failed: " + err.Error()})
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		c.emit(Event{Kind: EventSummarize, Region: region, InputTokens: inTokens, Message: "summariser returned an empty summary"})
		return "", fmt.Errorf("empty summary")
	}
	out := 0
	if _, ok := c.counter.(BytesPerFour); ok {
		// Its length serves summaryEntry too: the summary is counted once
		// (and Extractive worked it out as it wrote it).
		n := c.sumSc.madeLen
		if c.sumSc.madeText != s || n < 0 {
			n = TextLen(s)
		}
		out = lenTokens(n)
		c.sumSc.sumText, c.sumSc.sumSize = s, n
	} else {
		out = c.counter.Count(s)
	}
	c.emit(Event{Kind: EventSummarize, Region: region, InputTokens: inTokens, OutputTokens: out})
	return s, nil
}

// history is the first compact_history region naming r as its source.
func (c *Context) history(r *region) *region {
	for _, h := range c.regions {
		if h.kind == KindCompactHistory && h.def.SourceRegion == r.name && h != r {
			return h
		}
	}
	return nil
}

// compact summarises a region (D2, D10): the summary goes to its paired
// compact_history, else stays as the region's first entry; the raw entries
// are cleared. A failing summariser leaves the region untouched (D9).
func (c *Context) compact(r *region, why string) bool {
	if len(r.entries) == 0 {
		return false
	}
	h := c.history(r)
	budget := c.bp.Compaction.MaxSummaryTokens
	if h != nil {
		budget = min(budget, h.max)
	} else {
		room := r.max
		if r.kind == KindCompacting && r.threshold > 0 {
			room = min(r.threshold, r.max)
		}
		budget = min(budget, max(room/2, 1))
	}
	in := r.tokens
	n := len(r.entries)
	sum, err := c.summarize(r.name, r.entries, r.joined, budget, in)
	if err != nil {
		c.warn(r.name, fmt.Sprintf("%s: region left as it was: %v", why, err))
		return false
	}
	gone := r.entries
	c.total -= r.clearAll()
	c.release(r, gone)
	se := c.summaryEntry(sum)
	out := se.tokens // appendHistory may let go of se
	if h != nil {
		c.appendHistory(h, se)
	} else {
		if se.tokens > r.max {
			c.emit(Event{Kind: EventDrop, Region: r.name, Tokens: se.tokens, Message: "summary larger than the region; dropped"})
		} else {
			c.stampEntry(se)
			r.appendEntry(se)
			c.total += se.tokens
		}
	}
	c.emit(Event{Kind: EventCompact, Region: r.name, Tokens: in, Entries: n, InputTokens: in, OutputTokens: out, Message: why})
	return true
}

// appendHistory adds a summary to a compact_history; when it is full its
// summaries are folded into one (D3), and if even that cannot fit the
// oldest summaries drop off, recorded as an event.
func (c *Context) appendHistory(h *region, se *entry) {
	if h.tokens+se.tokens <= h.max {
		c.stampEntry(se)
		h.appendEntry(se)
		c.total += se.tokens
		return
	}
	joined := func() string {
		all := h.joined()
		if all != "" {
			all += "\n\n"
		}
		return all + se.content
	}
	in := h.tokens + se.tokens
	c.sumSc.ents = append(append(c.sumSc.ents[:0], h.entries...), se)
	if h.def.Volatility == VolatilityGrows {
		// The folded summary is written where h's first chunk will be
		// (renderChunked takes it there): a chunk slab is h's alone.
		c.sumSc.into, c.sumSc.intoHead = &h.rend.text, labelled(h, "")
	}
	folded, err := c.summarize(h.name, c.sumSc.ents, joined, min(c.bp.Compaction.MaxSummaryTokens, h.max), in)
	c.sumSc.into, c.sumSc.intoHead = nil, ""
	clear(c.sumSc.ents)
	if err == nil {
		fe := c.summaryEntry(folded)
		if fe.tokens <= h.max {
			n := len(h.entries)
			gone := h.entries
			c.total -= h.clearAll()
			// The folded summaries and se are let go of: their entries and
			// lines serve the next summaries.
			c.release(h, gone)
			c.forget(h, se)
			c.free = append(c.free, se)
			c.stampEntry(fe)
			h.appendEntry(fe)
			c.total += fe.tokens
			if sc := &c.sumSc; fe.content == folded && len(fe.lines) == len(sc.at) {
				// Where its lines start in it, for the next fold to copy
				// them in runs.
				sc.fold.text = fe.content
				sc.fold.at, sc.at = sc.at, sc.fold.at[:0]
				sc.fold.counted, sc.madeCounts = sc.madeCounts, sc.fold.counted
			}
			c.emit(Event{Kind: EventRecompact, Region: h.name, Tokens: in, Entries: n + 1, InputTokens: in, OutputTokens: fe.tokens, Message: "compact_history full: summaries folded into one"})
			return
		}
	}
	for h.tokens+se.tokens > h.max && len(h.entries) > 0 {
		gone := h.removeOldest()
		t := 0
		for _, e := range gone {
			t += e.tokens
		}
		c.total -= t
		c.emit(Event{Kind: EventDrop, Region: h.name, Tokens: t, Entries: len(gone), Message: "compact_history full: oldest summary dropped"})
	}
	if se.tokens > h.max {
		c.emit(Event{Kind: EventDrop, Region: h.name, Tokens: se.tokens, Entries: 1, Message: "summary larger than the compact_history region; dropped"})
		return
	}
	c.stampEntry(se)
	h.appendEntry(se)
	c.total += se.tokens
}

// customOverflow asks a non-persistent custom region's on_overflow which
// entries to drop; a failing or short answer is made up oldest-first (seed
// 001) when fallback is set. It returns the tokens freed.
func (c *Context) customOverflow(r *region, needed int, fallback bool) int {
	freed := 0
	if r.script != nil {
		if _, ok := r.script.HasHook("on_overflow"); ok {
			sc := c.scriptCtx(r)
			sc.NeededTokens = needed
			drop, err := r.script.OnOverflow(sc)
			c.scriptOutput(r, "on_overflow")
			valid := err == nil
			for _, i := range drop {
				if i < 0 || i >= len(r.entries) {
					valid = false
				}
			}
			if !valid {
				msg := fmt.Sprintf("on_overflow returned invalid indices %v", drop)
				if err != nil {
					msg = "on_overflow failed: " + err.Error()
				}
				c.warn(r.name, msg+"; oldest-first eviction runs")
			} else {
				sort.Sort(sort.Reverse(sort.IntSlice(drop)))
				last := -1
				for _, i := range drop {
					if i == last {
						continue
					}
					last = i
					gone := r.removeRange(i, 1)
					freed += gone[0].tokens
					c.evicted(r, gone, "on_overflow")
				}
			}
		}
	}
	if fallback {
		for freed < needed && len(r.entries) > 0 {
			gone := r.removeOldest()
			for _, e := range gone {
				freed += e.tokens
			}
			c.evicted(r, gone, "oldest-first after on_overflow")
		}
	}
	return freed
}

// maybeEvict is the window-level cascade (ENGINE.md §4 with D1 and D5). It
// runs whenever usage reaches the trigger, with or without [compaction].
func (c *Context) maybeEvict() {
	if float64(c.total+c.shortfall) < c.opt.EvictAt*float64(c.opt.Window) {
		return
	}
	c.evict(int(c.opt.EvictFree * float64(c.opt.Window)))
}

// evict frees tokens until target tokens of the window are free (try_evict).
func (c *Context) evict(target int) {
	w := c.opt.Window
	met := func() bool { return w-c.total-c.shortfall >= target }
	exempt := func(r *region) bool {
		return r.def.Admission == AdmissionReject || r.pinnedLike() || r.kind == KindChecklist
	}

	if len(c.bp.EvictionOrder) > 0 {
		// D5: the layout's order, each region by its kind.
		for _, n := range c.bp.EvictionOrder {
			r := c.byName[n]
			if r == nil || exempt(r) {
				continue
			}
			switch r.kind {
			case KindClearable:
				if len(r.entries) > 0 {
					c.clearRegion(r, "window cascade")
				}
			case KindCompacting:
				c.compact(r, "window cascade")
			case KindCustom:
				c.customOverflow(r, max(target-(w-c.total-c.shortfall), 0), true)
			default:
				for !met() && len(r.entries) > 0 {
					c.evictOldest(r, "window cascade")
				}
			}
			if met() {
				return
			}
		}
		c.pinnedCheck()
		return
	}

	// Phase 1: clearable regions, wiped whole.
	for _, r := range c.regions {
		if r.kind == KindClearable && !exempt(r) && len(r.entries) > 0 {
			c.clearRegion(r, "window cascade")
			if met() {
				return
			}
		}
	}
	// Phase 1.5: non-persistent custom regions' on_overflow.
	for _, r := range c.regions {
		if r.kind == KindCustom && !exempt(r) && len(r.entries) > 0 && r.script != nil {
			if _, ok := r.script.HasHook("on_overflow"); ok {
				c.customOverflow(r, target-(w-c.total-c.shortfall), false)
				if met() {
					return
				}
			}
		}
	}
	// Phase 2: temporary and non-persistent custom, round robin, oldest first.
	for {
		evicted := false
		for _, r := range c.regions {
			if (r.kind == KindTemporary || r.kind == KindCustom) && !exempt(r) && len(r.entries) > 0 {
				c.evictOldest(r, "window cascade")
				evicted = true
				if met() {
					return
				}
			}
		}
		if !evicted {
			break
		}
	}
	// Phase 3: compacting regions are summarised, those over their
	// threshold first.
	for pass := 0; pass < 2; pass++ {
		for _, r := range c.regions {
			if r.kind == KindCompacting && len(r.entries) > 0 && (pass == 1 || r.tokens > r.threshold) {
				c.compact(r, "window cascade")
				if met() {
					return
				}
			}
		}
	}
	// Sliding windows, pinned-like regions and checklists are never touched
	// (ENGINE.md §4, conformance case 42).
	c.pinnedCheck()
}

func (c *Context) pinnedCheck() {
	p := 0
	for _, r := range c.regions {
		if r.kind == KindPinned || r.kind == KindCompactHistory || r.persistentCustom() {
			p += r.tokens
		}
	}
	if p > c.opt.Window {
		c.warn("", fmt.Sprintf("Pinned regions (%d) exceed total budget (%d)", p, c.opt.Window))
	} else if c.opt.Window-c.total < int(c.opt.EvictFree*float64(c.opt.Window)) {
		c.warn("", "window cascade could not free its target: nothing evictable is left")
	}
}

// summaryEntry makes the entry of a summary: if the Extractive summariser
// made it, with its lines already scanned, for when it is folded.
func (c *Context) summaryEntry(sum string) *entry {
	sc := &c.sumSc
	size := -1
	if sc.sumText == sum {
		size = sc.sumSize
	}
	e := c.newSizedEntry(EntryText, sum, size)
	if sc.made != nil && sc.madeText == sum {
		e.lines, e.scanned, e.summarised = sc.made, true, true
	}
	sc.made, sc.madeText, sc.sumText = nil, "", ""
	return e
}

// extractive is Extractive.Summarize over entries joined by blank lines.
// An entry summarised a second time (a summary folded into the next) keeps
// its scanned, scored lines, so the summaries are not scored at every fold;
// the rest, summarised once and cleared, are scanned into a reused buffer.
// A line an earlier entry has is left out there (pick would skip it): it is
// not scored, and pick need not look for repeats.
func (c *Context) extractive(region string, entries []*entry, maxTokens int) (string, error) {
	sc := &c.sumSc
	counter := c.counter
	if counter == nil {
		counter = BytesPerFour{}
	}
	buf, starts := sc.lines[:0], sc.starts[:0]
	var src string // the folded summary, if its lines' starts are known
	var srcAt []int32
	all := true
	for _, e := range entries {
		if !e.scanned && e.summarised {
			e.lines, e.scanned = sc.scanLines(e.content, counter, &sc.scanSeen, nil), true
			sc.scanSeen.reset()
		}
		all = all && e.scanned
	}
	if all && len(entries) > 0 {
		// A fold: the first entry (the folded summary, the most lines)
		// has no repeats and comes first, so its lines are taken as they
		// are, and only the later entries' lines are looked for in it.
		f := entries[0]
		if f.content == sc.fold.text && len(f.lines) == len(sc.fold.at) {
			src, srcAt = f.content, sc.fold.at
		}
		// f leaves when the summary is stored: its lines, where they are,
		// start buf, and buf's room serves the summary's (lineRoom), most
		// of the lines of the last. Should f stay, it is scanned again.
		if cap(f.lines) > 0 {
			if cap(buf) > 0 && len(sc.rooms) < maxLineRooms {
				sc.rooms = append(sc.rooms, buf)
			}
			buf = f.lines
		} else {
			buf = append(buf, f.lines...)
		}
		f.lines, f.scanned = nil, false
		buf, starts = sc.foldLines(buf, starts, entries)
	} else {
		for _, e := range entries {
			starts = append(starts, int32(len(buf)))
			if e.scanned {
				buf = sc.seen.appendNew(buf, e.lines)
			} else {
				buf = sc.scanLines(e.content, counter, &sc.seen, buf)
			}
		}
		sc.seen.reset()
	}
	for _, e := range entries {
		e.summarised = true
	}
	s, err := sc.pick(region, maxTokens, counter, buf, starts, true, src, srcAt)
	// Emptied so that the buffers hold no content between calls.
	clear(buf)
	sc.lines, sc.starts = buf, starts
	return s, err
}

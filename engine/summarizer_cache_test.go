package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// The engine's Extractive path reads entries' cached scored lines; it must
// give the summary Extractive.Summarize gives for the entries joined by
// blank lines, including when the entries are summarised again.
func TestExtractiveEntriesMatchJoined(t *testing.T) {
	cases := []struct {
		name     string
		contents []string
		budget   int
	}{
		{"one entry", []string{"error: open a.go\nplain line\n\nsecond block_x 42"}, 40},
		{"repeats across entries", []string{"same line\nfix the bug", "same line\nother", "\n\nsame line\nafter repeat"}, 30},
		{"repeat carries block start", []string{"a b c\n\ndup\nnext line", "dup"}, 100},
		{"empty and blank entries", []string{"", "\n\n", "x_y first", "trailing\n", "\nlead blank"}, 50},
		{"long line", []string{strings.Repeat("word_", 200) + "\nshort"}, 500},
		{"tight budget", []string{"a very long informative error line with path/to/file.go and more_words"}, 12},
		{"crlf and tabs", []string{"\tone_two\r\n  three.go  \r\n\r\nfour"}, 60},
		{"nothing", []string{"", "  \n\t"}, 50},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Context{counter: BytesPerFour{}}
			var ents []*entry
			for _, s := range tc.contents {
				ents = append(ents, &entry{content: s})
			}
			want, wantErr := Extractive{}.Summarize(SummaryRequest{Region: "r", Content: strings.Join(tc.contents, "\n\n"), MaxTokens: tc.budget, Counter: BytesPerFour{}})
			for pass := range 3 { // the second pass fills the cache, the third reads it
				got, err := c.extractive("r", ents, tc.budget)
				if got != want || (err == nil) != (wantErr == nil) {
					t.Fatalf("pass %d: got %q, %v; want %q, %v", pass, got, err, want, wantErr)
				}
			}
		})
	}
}

// The same with random entries of repeated lines and blank lines, some of
// them with their lines kept from an earlier summary and some not.
func TestExtractiveMixedEntriesMatchJoined(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lines := []string{"", "", "dup", "dup", "error here", "x_y 1", "plain", "more plain", "Fix it", strings.Repeat("~", 450), strings.Repeat("~", 500), "a/b.go", "c.d"}
	for trial := range 3000 {
		c := &Context{counter: BytesPerFour{}}
		var ents []*entry
		var contents []string
		for range 1 + rng.IntN(5) {
			var parts []string
			for range rng.IntN(8) {
				parts = append(parts, lines[rng.IntN(len(lines))])
			}
			e := &entry{content: strings.Join(parts, "\n")}
			if rng.IntN(2) == 0 {
				for range 2 { // the second keeps its lines
					c.extractive("r", []*entry{e}, 1000)
				}
			}
			ents = append(ents, e)
			contents = append(contents, e.content)
		}
		budget := 6 + rng.IntN(40)
		want, wantErr := Extractive{}.Summarize(SummaryRequest{Region: "r", Content: strings.Join(contents, "\n\n"), MaxTokens: budget, Counter: BytesPerFour{}})
		got, err := c.extractive("r", ents, budget)
		// Summarize encodes runs of filler; these entries hold them written out.
		if ExpandFiller(got) != ExpandFiller(want) || (err == nil) != (wantErr == nil) {
			t.Fatalf("trial %d %q: got %q, %v; want %q, %v", trial, contents, got, err, want, wantErr)
		}
	}
}

// A summary's entry takes the lines pick made for it; they must be the
// lines scanLines finds in the summary's text.
func TestSummaryLinesMatchScan(t *testing.T) {
	long := strings.Repeat("~", 900)
	cases := [][]string{
		{"error: open a.go\nplain line\n\nsecond block_x 42"},
		{long + "\nvalue-1-ab\n" + strings.Repeat("~", 901), long + "\nvalue-2-cd\n" + long},
		{"[summary of r]\nfix it\n" + strings.Repeat("x_y ", 150), "[summary of r]\nfix it"},
		{strings.Repeat("~", 400) + "…\n" + strings.Repeat("~", 401) + "\nerror " + strings.Repeat("é", 300)},
		{"same\nsame\n\nsame", strings.Repeat("ab", 300) + "\n" + strings.Repeat("ab", 301)},
	}
	made := 0
	for i, contents := range cases {
		for _, budget := range []int{8, 30, 120, 2000} {
			c := &Context{counter: BytesPerFour{}}
			var ents []*entry
			for _, s := range contents {
				ents = append(ents, &entry{content: s})
			}
			s, err := c.extractive("r", ents, budget)
			if err != nil {
				continue
			}
			if c.sumSc.madeText == s && c.sumSc.madeLen != TextLen(s) {
				t.Errorf("case %d budget %d: pick wrote %d bytes (written out), TextLen %d", i, budget, c.sumSc.madeLen, TextLen(s))
			}
			e := c.summaryEntry(s)
			var sc sumScratch
			want := sc.scanLines(s, BytesPerFour{}, &sc.scanSeen, nil)
			if e.scanned {
				made++
			}
			if e.scanned && !slices.Equal(e.lines, want) {
				t.Errorf("case %d budget %d: summary %q\nmade  %+v\nscan  %+v", i, budget, s, e.lines, want)
			}
		}
	}
	if made < 10 {
		t.Errorf("only %d summaries came with their lines", made)
	}
}

// A fold takes the folded summary's lines by score class and copies them in
// runs (pick's src); it must fold as the line-by-line path does. Two windows
// take the same summaries, the second never told where a folded summary's
// lines start.
func TestFoldByClassMatchesLineByLine(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	facts := []string{"value-%d-%x", "fact-%d-%x", "plain words", "[summary of h]", "[summary of r]", "note: %d %d", "end…", "a" + strings.Repeat("𝄞", 200), "a" + strings.Repeat("𝄞", 99) + "…"}
	text := func() string {
		var parts []string
		for range 1 + r.IntN(4) {
			a, _ := fillerText(r)
			parts = append(parts, a)
			for range r.IntN(4) {
				f := facts[r.IntN(len(facts))]
				if strings.Contains(f, "%") {
					f = fmt.Sprintf(f, r.IntN(50), r.IntN(1<<12))
				}
				parts = append(parts, f)
			}
		}
		return strings.Join(parts, "\n")
	}
	fast, counted := 0, 0
	for trial := range 600 {
		maxTokens := 60 + r.IntN(600)
		hmax := maxTokens + r.IntN(maxTokens)
		var cs [2]*Context
		var hs [2]*region
		for k := range cs {
			cs[k] = &Context{counter: BytesPerFour{}, sum: Extractive{}, bp: &Blueprint{Compaction: CompactionConfig{MaxSummaryTokens: maxTokens}}}
			hs[k] = &region{def: &RegionDef{}, name: "h", kind: KindCompactHistory, max: hmax, dirtyFrom: -1, changedFrom: -1}
		}
		for step := range 12 {
			var contents []string
			for range 1 + r.IntN(5) {
				contents = append(contents, text())
			}
			budget := 20 + r.IntN(300)
			raw := r.IntN(4) == 0
			var got [2]string
			for k, c := range cs {
				var ents []*entry
				for _, s := range contents {
					ents = append(ents, c.newEntry(EntryText, s))
				}
				if k == 0 && c.sumSc.fold.text != "" && len(hs[k].entries) > 0 && hs[k].entries[0].content == c.sumSc.fold.text {
					fast++
				}
				if raw {
					// Not a summary: a fold scans its lines, long ones
					// uncut.
					e := c.newEntry(EntryText, contents[0]+"\na"+strings.Repeat("𝄞", 200))
					e.summarised = true
					c.appendHistory(hs[k], e)
				} else {
					s, err := c.extractive("r", ents, budget)
					if err != nil {
						break
					}
					c.appendHistory(hs[k], c.summaryEntry(s))
				}
				if k == 1 {
					c.sumSc.fold.text = "" // line by line
				}
				if fk := &c.sumSc.fold.counted; k == 0 && fk.ok && c.sumSc.fold.text != "" {
					// The counts the fold worked out are count's.
					e := hs[k].entries[0]
					if e.content != c.sumSc.fold.text {
						t.Fatalf("trial %d step %d: the folded summary is not the history's first entry", trial, step)
					}
					var fc foldClasses
					fc.flags = make([]uint8, len(e.lines))
					fc.scores = make([]byte, len(e.lines))
					if !fc.count(e.lines, c.sumSc.fold.at, fk.header) || fc.tokens != fk.tokens || fc.bytes != fk.bytes || fc.n != fk.n || !slices.Equal(fc.flags[1:], fk.flags[1:]) || !slices.Equal(fc.scores, fk.scores) {
						t.Fatalf("trial %d step %d: the fold's counts differ from count's:\n%v\n%v\n%v %v\n%v %v", trial, step, fc, *fk, fc.flags, fk.flags, fc.scores, fk.scores)
					}
					counted++
				}
				var sb strings.Builder
				for _, e := range hs[k].entries {
					if n := c.counter.Count(e.content); e.tokens != n {
						t.Fatalf("trial %d step %d: entry of %d tokens counts %d: %q", trial, step, e.tokens, n, e.content)
					}
					fmt.Fprintf(&sb, "%d %q\n", e.tokens, e.content)
					for _, l := range e.lines {
						fmt.Fprintf(&sb, "  %+v\n", l)
						if !within(l.key, e.content) {
							t.Fatalf("trial %d step %d: line %q is not in its entry's text: it keeps another alive", trial, step, l.key)
						}
					}
				}
				for _, ev := range c.Drain() {
					fmt.Fprintf(&sb, "%+v\n", ev)
				}
				got[k] = sb.String()
			}
			if got[0] != got[1] {
				a, b := nearFirstDifference(got[0], got[1])
				t.Fatalf("trial %d step %d: by class\n%.1500s\nline by line\n%.1500s", trial, step, a, b)
			}
		}
	}
	if fast < 500 {
		t.Errorf("only %d folds took their lines by class", fast)
	}
	if counted < 400 {
		t.Errorf("only %d folds had their lines counted by the fold before", counted)
	}
}

// within reports whether s is in the bytes of text (not merely equal to
// some of them).
func within(s, text string) bool {
	if s == "" {
		return true
	}
	p, t := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(text)))
	return t <= p && p+uintptr(len(s)) <= t+uintptr(len(text))
}

// seenSet finds run lines of FillerByte by their length, others by their
// text: it must find the repeats a set of texts, runs taken for what they
// stand for, finds.
func TestSeenSetMatchesTexts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	line := func() string {
		n := []int{9, 16, 17, 400, 401, 4095, maxFillBit - 1, maxFillBit, maxFillBit + 1}[r.IntN(9)] + r.IntN(3)
		switch r.IntN(5) {
		case 0:
			return string(AppendFiller(nil, n))
		case 1:
			return strings.Repeat("~", n)
		case 2:
			return strings.Repeat("=", n)
		case 3:
			return fmt.Sprintf("line %d", r.IntN(20))
		}
		return string(AppendFiller(nil, 16+r.IntN(40)))
	}
	var set seenSet
	for trial := range 200 {
		want := map[string]bool{}
		for range r.IntN(300) {
			l := line()
			rl := runLine(l)
			key := l
			if rl.n > 0 {
				key = fmt.Sprint(rl)
			}
			h := lineHash(l, rl)
			var got bool
			if rl.n > 0 && r.IntN(2) == 0 {
				got = set.addRun(rl, l, h)
			} else {
				got = set.add(l, h, rl.n > 0)
			}
			if got != !want[key] {
				t.Fatalf("trial %d: add(%.20q) = %v, seen before: %v", trial, l, got, want[key])
			}
			want[key] = true
		}
		set.reset()
	}
}

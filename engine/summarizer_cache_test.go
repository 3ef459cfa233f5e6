package engine

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
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

package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// lineScore's ASCII fast path scores every line as its definition, scoreSlow,
// does.
func TestLineScoreMatchesDefinition(t *testing.T) {
	lines := []string{
		"",
		"plain words only",
		"error: open config/app.yaml: permission denied",
		"ERROR in LoadConfig(path) at src/main.go:42",
		"value-12-abc",
		"max_retries = 7f3a9c21",
		"see docs/ and README.md. then x.",
		"a.b ab. abc. abcd. /x/ ./a",
		"Decision: we must FIX the TODO because the result was found; note the summary, conclusion, important fatal panic exception warning",
		"\tfoo_bar\tBazQux\v1\f2\r3",
		"{\"path\":\"src/file1.go\"} [x_y] (Ab) 'cD' `e_f`",
		"~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
		"naïve café über_alles Ärger",
		"\u212Aelvin error",
		"x\u00a0y_z\u0085w.go",
		strings.Repeat("~", 5000),
		strings.Repeat("/", 100),
		strings.Repeat(".", 100),
		strings.Repeat("_", 100),
		strings.Repeat("A", 100),
		strings.Repeat("7", 100),
		strings.Repeat("\xc3", 100),
		"AAA", "////", "....",
		strings.Repeat("~", 400) + "…",
		"naïve_café Über ÄrgerX ß/ü.go ١٢٣ x\u3000Ab\u2028c_d",
		"FİX the ERROR", "\u212aey",
		"e\u0301rror: fail…", "\xff\xfe error",
		"~~~~~~~~~~x_y", "-----------Abc", "===========/a.go", "~~~~~~~~~~~~~.", "#########\u212aey error",
		"~~~~~~~~~~~~ ok", "~~~~~~~~~~~~\xffA", "%%%%%%%%%%%%9", "~~~~~xy",
	}
	for i, l := range lines {
		t.Run(fmt.Sprintf("%d:%.20q", i, l), func(t *testing.T) {
			if got, _ := lineScore(l, nil); got != scoreSlow(l) {
				t.Errorf("lineScore(%q) = %d, definition says %d", l, got, scoreSlow(l))
			}
		})
	}
}

// Random ASCII lines of the informative words (whole, cut, in any case)
// and the bytes that split or classify fields score as the definition.
func TestLineScoreASCII(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := append([]string{" ", ".", "/", "_", "7", "A", "x", "\t", ",", "(", "`", "~", "..."}, informative...)
	for range 20000 {
		var b []byte
		for range rng.IntN(12) {
			p := pieces[rng.IntN(len(pieces))]
			p = p[:1+rng.IntN(len(p))]
			for _, c := range []byte(p) {
				if rng.IntN(4) == 0 && 'a' <= c && c <= 'z' {
					c -= 'a' - 'A'
				}
				b = append(b, c)
			}
		}
		if l := string(b); l != "" {
			if got, _ := lineScore(l, nil); got != scoreSlow(l) {
				t.Fatalf("lineScore(%q) = %d, definition says %d", l, got, scoreSlow(l))
			}
		}
	}
}

func FuzzLineScore(f *testing.F) {
	for _, s := range []string{"error: x_y at a/b.go:3", "Found it.", "abc. d.e", "\u212Aey"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, l string) {
		if got, _ := lineScore(l, nil); got != scoreSlow(l) {
			t.Errorf("lineScore(%q) = %d, definition says %d", l, got, scoreSlow(l))
		}
	})
}

// BenchmarkExtractive summarises a region of tool output, notes and elided
// content's filler, about 160 KB.
func BenchmarkExtractive(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 160_000; i++ {
		fmt.Fprintf(&sb, "Reading src/pkg%d/file%d.go.\n", i%7, i)
		fmt.Fprintf(&sb, "<tool_use id=\"c%d\" name=\"read_file\">{\"path\":\"src/file%d.go\"}</tool_use>\n", i, i)
		fmt.Fprintf(&sb, "remember fact-%d-%x and the value of max_retries\n", i, i*7919)
		sb.WriteString(strings.Repeat("~", 1000+i%500))
		sb.WriteString("\nerror: TestParse failed because the lexer dropped a token\n\n")
	}
	req := SummaryRequest{Region: "codebase", Content: sb.String(), MaxTokens: 2000}
	b.SetBytes(int64(len(req.Content)))
	for b.Loop() {
		if _, err := (Extractive{}).Summarize(req); err != nil {
			b.Fatal(err)
		}
	}
}

// lineScore's fast path for non-ASCII lines assumes only the characters of
// lowersToASCII have an ASCII lower case.
func TestLowersToASCII(t *testing.T) {
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); l < utf8.RuneSelf && !strings.ContainsRune(lowersToASCII, r) {
			t.Errorf("%U lowers to %q: add it to lowersToASCII", r, l)
		}
	}
}

// sortByScore orders as sorting by score, highest first, then by index.
func TestSortByScore(t *testing.T) {
	for n := 0; n < 200; n++ {
		cands := make([]sumLine, n)
		for i := range cands {
			cands[i].score = int32((i*7919 + n*31) % 17)
			if n%50 == 3 && i == n/2 {
				cands[i].score = 40 // past the range counted: sorted instead
			}
		}
		want := make([]int32, n)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortFunc(want, func(a, b int32) int {
			if sa, sb := cands[a].score, cands[b].score; sa != sb {
				return int(sb - sa)
			}
			return int(a - b)
		})
		if got := sortByScore(nil, cands); !slices.Equal(got, want) {
			t.Fatalf("n=%d: got %v, want %v", n, got, want)
		}
	}
}

// scanLines takes a line that needs no trimming and is no run without
// TrimSpace, runLine and lineScore's checks: each line it keeps must be as
// the definition makes it, whatever its ends and bytes.
func TestScanLinesPlainLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "b", "7", "_", "/", ".", " ", "\t", "\r", "\v", "é", "\u00a0", "\u0085", "\u3000", "~", "error", "x_y", "\xff", string(AppendFiller(nil, 100))}
	for trial := range 3000 {
		var raws []string
		for range 1 + rng.IntN(6) {
			var b strings.Builder
			switch rng.IntN(4) {
			case 0: // one byte repeated, or nearly
				b.WriteString(strings.Repeat(pieces[rng.IntN(4)], 7+rng.IntN(4)))
			case 1:
				b.WriteString("value-" + fmt.Sprint(trial))
			}
			for range rng.IntN(6) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			raws = append(raws, b.String())
		}
		content := strings.Join(raws, "\n")
		var sc sumScratch
		got := sc.scanLines(content, BytesPerFour{}, &sc.scanSeen, nil)
		seen := map[string]bool{}
		var want []sumLine
		for _, raw := range strings.Split(content, "\n") {
			line := raw
			if _, ok := fillerLine(raw); !ok {
				line = strings.TrimSpace(raw)
			}
			id := line // runs are alike by byte and length
			if rl := runLine(line); rl.n > 0 {
				id = fmt.Sprint(rl)
			}
			if line == "" || seen[id] {
				continue
			}
			seen[id] = true
			tokens := -1 // a cut line's are not checked
			if TextLen(line) <= maxLineBytes {
				tokens = (TextLen(line) + 1 + 3) / 4
			}
			want = append(want, sumLine{key: line, score: int32(scoreSlow(ExpandFiller(line))), tokens: int32(tokens)})
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d lines, want %d", content, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if w.tokens < 0 {
				w.tokens = g.tokens
			}
			if g.key != w.key || g.score != w.score || g.tokens != w.tokens || g.run != (runLine(w.key).n > 0) {
				t.Fatalf("%q: line %d is %q score %d tokens %d run %v; want %q score %d tokens %d run %v", content, i, g.key, g.score, g.tokens, g.run, w.key, w.score, w.tokens, runLine(w.key).n > 0)
			}
		}
	}
}

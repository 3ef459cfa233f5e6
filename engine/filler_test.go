package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFillerEncoding(t *testing.T) {
	for n := 0; n < 70000; n += 1 + n/7 {
		enc := string(AppendFiller([]byte("a"), n)) + "b"
		want := "a" + strings.Repeat("~", n) + "b"
		if got := ExpandFiller(enc); got != want {
			t.Fatalf("n=%d: expands to %q", n, got)
		}
		if TextLen(enc) != len(want) || runeCount(enc) != len(want) {
			t.Fatalf("n=%d: TextLen %d, runeCount %d, want %d", n, TextLen(enc), runeCount(enc), len(want))
		}
		if n >= MinFillerRun {
			if at, k, size := NextFiller(enc); at != 1 || k != n || size != len(enc)-2 {
				t.Fatalf("n=%d: NextFiller = %d, %d, %d", n, at, k, size)
			}
		} else if HasFiller(enc) {
			t.Fatalf("n=%d: short run encoded", n)
		}
	}
}

// FuzzFiller: the decoder never panics, agrees with itself on any input,
// and cuts of a text with runs are cuts of the expanded text.
func FuzzFiller(f *testing.F) {
	f.Add("abc", 20, 5, 3)
	f.Add("\xff\x81\x80\xff", 400, 0, 401)
	f.Add("é\xff", 16, 1, 17)
	f.Fuzz(func(t *testing.T, s string, n, at, cut int) {
		if TextLen(s) > 1<<20 {
			return // an encoded run may stand for more bytes than a test can write out
		}
		// Any input: TextLen and runeCount agree with the expansion.
		x := ExpandFiller(s)
		if TextLen(s) != len(x) || runeCount(s) != utf8.RuneCountInString(x) {
			t.Fatalf("%q: TextLen %d, runeCount %d, expanded %q", s, TextLen(s), runeCount(s), x)
		}
		if HasFiller(x) {
			if _, _, size := NextFiller(x); size > 0 {
				t.Fatalf("%q expands to a text with a run", s)
			}
		}
		// A text with a run: its cuts expand to the expanded text's cuts.
		if strings.IndexByte(s, runMark) >= 0 || strings.Contains(s, "~") {
			return
		}
		n = n%5000 + 5000
		at = min(max(at, 0), len(s))
		cut = min(max(cut%(len(s)+n+2), 0), len(s)+n+1)
		enc := string(AppendFiller([]byte(s[:at]), n)) + s[at:]
		lit := s[:at] + strings.Repeat("~", n) + s[at:]
		if got := ExpandFiller(enc); got != lit {
			t.Fatalf("expands to %q", got)
		}
		if got, want := ExpandFiller(truncateChars(enc, cut)), truncateChars(lit, cut); got != want {
			t.Fatalf("truncateChars(%d) = %q, want %q", cut, got, want)
		}
		if got, want := ExpandFiller(truncateUTF8(enc, cut)), truncateUTF8(lit, cut); got != want {
			t.Fatalf("truncateUTF8(%d) = %q, want %q", cut, got, want)
		}
		if a, b := lineScoreOf(enc), lineScoreOf(lit); a != b {
			t.Fatalf("lineScore %d, want %d", a, b)
		}
	})
}

func lineScoreOf(s string) int {
	n, _ := lineScore(strings.TrimSpace(s), nil)
	return n
}

// fillerText is random content with runs of filler: encoded, and written out.
func fillerText(r *rand.Rand) (enc, lit string) {
	var a, b []byte
	words := []string{"error", "path/to/file.go", "the_ident", "CamelCase", "42", "x", "é—✓", "fixed because", "note:", "port = 8443"}
	for k := 1 + r.IntN(8); k > 0; k-- {
		switch r.IntN(6) {
		case 0, 1:
			var n int
			switch r.IntN(5) {
			case 0:
				n = r.IntN(24)
			case 1:
				n = 390 + r.IntN(20)
			case 2:
				n = 150 + r.IntN(20)
			case 3:
				n = 310 + r.IntN(100)
			default:
				n = r.IntN(5000)
			}
			a = AppendFiller(a, n)
			b = append(b, strings.Repeat("~", n)...)
			// Never two runs in a row: a run is all of its filler.
			sep := []string{"\n", " ", "x", "\n\n", "…"}[r.IntN(5)]
			a, b = append(a, sep...), append(b, sep...)
		case 2:
			w := words[r.IntN(len(words))]
			for range r.IntN(40) {
				w += " " + words[r.IntN(len(words))]
			}
			a, b = append(a, w...), append(b, w...)
		case 3:
			a, b = append(a, '\n'), append(b, '\n')
		default:
			f := fmt.Sprintf("\nfact-%d = %d\n", r.IntN(30), r.IntN(1000))
			a, b = append(a, f...), append(b, f...)
		}
	}
	return string(a), string(b)
}

// TestFillerDifferential runs random operations on two Contexts, one given
// content with encoded runs of filler, one the same content written out:
// every request, expanded, every event and every tool answer are the same.
func TestFillerDifferential(t *testing.T) {
	bps := map[string]*Blueprint{}
	fz, err := ParseBlueprint("fuzz.leviath", []byte(fuzzLayout), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bps["fuzz"] = fz
	for _, p := range realBlueprintPaths(t) {
		bp, err := LoadBlueprint(p)
		if err != nil {
			t.Fatal(err)
		}
		bps[p[strings.LastIndexByte(p, '/')+1:]] = bp
	}
	regions := []string{"task", "notes", "sources", "scratch", "code", "hist", "files", "todos", "decisions", "conversation", "codebase"}
	tools := []string{"read_file", "bash", "grep", "web_fetch", "write_file"}
	for name, bp := range bps {
		for _, window := range []int{1000, 8192, 32768} {
			for seed := range uint64(6) {
				t.Run(fmt.Sprintf("%s/%d/%d", name, window, seed), func(t *testing.T) {
					r := rand.New(rand.NewPCG(seed, uint64(window)))
					var cs [2]*Context
					for i := range cs {
						opt := Options{Window: window, Task: "the task"}
						if seed%2 == 1 {
							opt.Counter = wordCounter{}
						}
						if seed%3 == 2 {
							opt.Summarizer = writtenOut{t}
						}
						c, err := New(bp, opt)
						if err != nil {
							t.Skip(err)
						}
						c.literalRuns = i == 1
						cs[i] = c
					}
					var pending []ToolCall
					for op := range 300 {
						enc, lit := fillerText(r)
						k, arg := r.IntN(12), r.IntN(1000)
						var out [2]string
						for i, c := range cs {
							body := enc
							if i == 1 {
								body = lit
							}
							reg := regions[arg%len(regions)]
							switch k {
							case 0:
								c.AddUser(body)
							case 1:
								if i == 0 {
									tc := ToolCall{ID: fmt.Sprint("c", op), Name: tools[arg%len(tools)], Args: json.RawMessage(`{"path":"f.go"}`)}
									pending = append(pending, tc)
								}
								c.AddAssistant(body, pending[len(pending)-1:])
							case 2, 3, 4:
								if len(pending) > 0 {
									tc := pending[0]
									rt, err := c.AddToolResult(ToolResult{CallID: tc.ID, Tool: tc.Name, Content: body})
									out[i] = fmt.Sprintf("%v %s %v %d %s %v", err, rt.Region, rt.Outcome, rt.Tokens, ExpandFiller(rt.Pointer), rt.File)
									if i == 1 {
										pending = pending[1:]
									}
								}
							case 5:
								out[i] = fmt.Sprint(c.Write(reg, body))
							case 6:
								// JSON has no invalid UTF-8: a model's calls write runs out.
								args, _ := json.Marshal(map[string]string{"region": reg, "content": lit, "key": fmt.Sprint("k", arg%4)})
								s, err := c.CallTool([]string{"context_write", "context_append"}[arg%2], args)
								out[i] = fmt.Sprint(s, err)
							case 7:
								args, _ := json.Marshal(map[string]any{"region": reg, "key": fmt.Sprint("k", arg%4)})
								s, err := c.CallTool("context_read", args)
								out[i] = fmt.Sprint(s, err)
							case 8:
								c.evict(arg * 4)
							default:
								out[i] = requestText(c.Assemble())
							}
							for _, e := range c.Drain() {
								out[i] += fmt.Sprintf("\n%+v", e)
							}
							out[i] += entryLines(c)
							if err := c.CheckInvariants(); err != nil {
								t.Fatalf("op %d (%d): %v", op, k, err)
							}
						}
						if out[0] != out[1] {
							a, b := nearFirstDifference(out[0], out[1])
							t.Fatalf("op %d (%d): encoded runs give\n%.600s\nwritten out\n%.600s", op, k, a, b)
						}
					}
				})
			}
		}
	}
}

// requestText is everything a request says, its texts expanded, but the
// hashes (the encoded texts hash otherwise).
func requestText(req *Request) string {
	var sb strings.Builder
	blk := func(b Block) {
		b.Text, b.Hash = ExpandFiller(b.Text), 0
		fmt.Fprintf(&sb, "%+v\n", b)
	}
	for _, b := range req.System {
		blk(b)
	}
	for _, m := range req.Messages {
		for _, b := range m.Blocks {
			blk(b)
		}
		fmt.Fprintf(&sb, "%v\n", m.Role)
	}
	fmt.Fprintf(&sb, "%d\n", req.Tokens)
	return sb.String()
}

// The Extractive summariser scans, scores and picks the lines of content
// with encoded runs as those of the content written out.
func TestFillerSummaryLines(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	line := func(l sumLine) string {
		return fmt.Sprintf("%d %d %v %v %v %q", l.score, l.tokens, l.first, l.run, int(l.cut) < len(l.key), ExpandFiller(l.text()))
	}
	for i := range 3000 {
		var enc, lit []string
		for range 1 + r.IntN(6) {
			a, b := fillerText(r)
			enc, lit = append(enc, a), append(lit, b)
		}
		var out [2][]string
		budget := 50 + r.IntN(400)
		for k, content := range [][]string{enc, lit} {
			var sc sumScratch
			buf, starts := scanTexts(&sc, content)
			for _, l := range buf {
				out[k] = append(out[k], line(l))
			}
			s, err := sc.pick("r", budget, BytesPerFour{}, buf, starts, true, "", nil)
			out[k] = append(out[k], ExpandFiller(s), fmt.Sprint(err))
			for _, l := range sc.made {
				out[k] = append(out[k], line(l))
			}
			if sc.made != nil {
				again := sc.scanLines(s, BytesPerFour{}, &sc.scanSeen, nil)
				sc.scanSeen.reset()
				var a, b []string
				for _, l := range again {
					a = append(a, line(l))
				}
				for _, l := range sc.made {
					b = append(b, line(l))
				}
				if strings.Join(a, "\n") != strings.Join(b, "\n") {
					t.Fatalf("case %d (%d): summary lines\n%s\nscanned again\n%s", i, k, strings.Join(b, "\n"), strings.Join(a, "\n"))
				}
			}
		}
		if a, b := strings.Join(out[0], "\n"), strings.Join(out[1], "\n"); a != b {
			a, b = nearFirstDifference(a, b)
			t.Fatalf("case %d: encoded\n%.800s\nwritten out\n%.800s", i, a, b)
		}
	}
}

// Summaries folded into one (their lines kept from when they were made)
// fold alike, encoded or written out.
func TestFillerSummaryFold(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	line := func(l sumLine) string {
		return fmt.Sprintf("%d %d %v %v %v %q", l.score, l.tokens, l.first, l.run, int(l.cut) < len(l.key), ExpandFiller(l.text()))
	}
	for i := range 2000 {
		var contents [2][][]string
		for range 2 + r.IntN(3) {
			var enc, lit []string
			for range 1 + r.IntN(4) {
				a, b := fillerText(r)
				enc, lit = append(enc, a), append(lit, b)
			}
			contents[0], contents[1] = append(contents[0], enc), append(contents[1], lit)
		}
		budgets := []int{100 + r.IntN(400), 100 + r.IntN(400), 100 + r.IntN(400), 100 + r.IntN(400), 100 + r.IntN(400)}
		var out [2][]string
		for k := range contents {
			var sc sumScratch
			var sums [][]sumLine
			for j, content := range contents[k] {
				buf, starts := scanTexts(&sc, content)
				s, _ := sc.pick("r", budgets[j], BytesPerFour{}, buf, starts, true, "", nil)
				out[k] = append(out[k], ExpandFiller(s))
				sums = append(sums, sc.made)
			}
			var buf []sumLine
			var starts []int32
			for _, ls := range sums {
				starts = append(starts, int32(len(buf)))
				buf = sc.seen.appendNew(buf, ls)
			}
			sc.seen.reset()
			s, _ := sc.pick("h", budgets[4], BytesPerFour{}, buf, starts, true, "", nil)
			out[k] = append(out[k], ExpandFiller(s))
			for _, l := range sc.made {
				out[k] = append(out[k], line(l))
			}
		}
		if a, b := strings.Join(out[0], "\n"), strings.Join(out[1], "\n"); a != b {
			a, b = nearFirstDifference(a, b)
			t.Fatalf("case %d: encoded\n%.800s\nwritten out\n%.800s", i, a, b)
		}
	}
}

// entryLines is what the entries of c's regions keep of their scanned lines.
func entryLines(c *Context) string {
	var sb strings.Builder
	seen := map[string]int{}
	for _, r := range c.regions {
		for _, e := range r.entries {
			for _, l := range e.lines {
				k := l.key
				if l.run {
					b, n := runOf(k)
					k = fmt.Sprint("run", b, n)
				}
				if _, ok := seen[k]; !ok {
					seen[k] = len(seen)
				}
				fmt.Fprintf(&sb, "%s: %d %d %d %v %v %v %q\n", r.name, seen[k], l.score, l.tokens, l.first, l.run, int(l.cut) < len(l.key), ExpandFiller(l.text()))
			}
		}
	}
	return sb.String()
}

// wordCounter counts the words and bytes of text expanded, unlike BytesPerFour.
type wordCounter struct{}

func (wordCounter) Count(text string) int {
	x := ExpandFiller(text)
	return len(strings.Fields(x)) + len(x)/7
}

func TestFillerLong(t *testing.T) {
	for _, n := range []int{1<<30 - 1, 1 << 30, 1<<36 + 5, 1<<60 - 1} {
		enc := string(AppendFiller(nil, n))
		if k, size := FillerAt(enc); k != n || size != len(enc) {
			t.Errorf("run of %d: reads %d, %d", n, k, size)
		}
	}
}

// writtenOut is the Extractive summariser, checking that it is given
// content with its runs of filler written out.
type writtenOut struct{ t *testing.T }

func (w writtenOut) Summarize(req SummaryRequest) (string, error) {
	if at, _, _ := NextFiller(req.Content); at >= 0 {
		w.t.Errorf("summariser given an encoded run: %.100q", req.Content)
	}
	return Extractive{}.Summarize(req)
}

// nearFirstDifference returns a and b from a little before where they
// first differ, so that a failure shows the difference, not a long prefix.
func nearFirstDifference(a, b string) (string, string) {
	d := 0
	for d < min(len(a), len(b)) && a[d] == b[d] {
		d++
	}
	d = max(d-300, 0)
	return a[d:], b[d:]
}

// scanTexts scans texts as extractive scans entries summarised once: their
// lines in one buffer, where each text's start, repeats left out.
func scanTexts(sc *sumScratch, texts []string) ([]sumLine, []int32) {
	var buf []sumLine
	var starts []int32
	for _, c := range texts {
		starts = append(starts, int32(len(buf)))
		buf = sc.scanLines(c, BytesPerFour{}, &sc.seen, buf)
	}
	sc.seen.reset()
	return buf, starts
}

// TestParseRun: parseRun's two-digit shortcut agrees with the general
// path on encodings, their cuts and their corruptions.
func TestParseRun(t *testing.T) {
	bytes := []byte{0x00, 0x01, '~', 0x7f, 0x80, 0x81, 0xbf, 0xc0, 0xfe, 0xff}
	var cases []string
	for n := 0; n < 1<<60; n = n*3 + 1 {
		enc := AppendFiller(nil, n)
		for _, tail := range []string{"", "\n", "abcdefgh", "\xff\x81\x80\xff"} {
			s := string(enc) + tail
			for cut := 0; cut <= len(s); cut++ {
				cases = append(cases, s[:cut])
			}
			for i := 0; i < len(s) && i < 13; i++ {
				for _, b := range bytes {
					m := []byte(s)
					m[i] = b
					cases = append(cases, string(m))
				}
			}
		}
	}
	for _, s := range cases {
		n, size := parseRun(s)
		wn, wsize := parseRunDigits(s)
		if n != wn || size != wsize {
			t.Fatalf("parseRun(%q) = %d, %d; want %d, %d", s, n, size, wn, wsize)
		}
	}
}

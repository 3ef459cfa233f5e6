package sim

import (
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// prose is n distinct lines of uninformative text (no identifiers, numbers
// or keywords the extractive summariser favours).
func prose(n int) []string {
	words := []string{"the", "river", "bends", "slowly", "past", "quiet", "hills", "and", "green", "meadows"}
	lines := make([]string, n)
	for i := range lines {
		var sb strings.Builder
		for j := 0; j < 8; j++ {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[(i*7+j*(i%5+1))%len(words)])
		}
		sb.WriteString(strings.Repeat(" and so on", i%13)) // distinct lines
		sb.WriteString(strings.Repeat(" again", i/13))
		lines[i] = sb.String()
	}
	return lines
}

// withMiddle is prose with line inserted halfway.
func withMiddle(n int, line string) string {
	l := prose(n)
	l = append(l[:n/2], append([]string{line}, l[n/2:]...)...)
	return strings.Join(l, "\n")
}

// A fact survives flat-compact's summary only when the extractive summariser
// keeps its line, whatever the block's fact list says: a fact buried in a
// long uninformative block is lost, an error line naming identifiers is kept.
// (The old summariser copied every listed fact into the summary, so fact
// recall after compaction was 100 % by construction.)
func TestSummarizeKeepsOnlyWhatTheSummariserKeeps(t *testing.T) {
	door := trace.Fact{ID: "door", Text: "the door at the end is painted blue"}
	boom := trace.Fact{ID: "boom", Text: "error: LoadConfig failed: open config/app_settings.yaml: permission denied"}
	knob := trace.Fact{ID: "knob", Text: "max_retries = 7f3a9c21"}
	cases := []struct {
		name   string
		blocks func(e *env) []*Block
		max    int
		kept   []trace.Fact
		lost   []trace.Fact
	}{
		{"buried fact lost", func(e *env) []*Block {
			return []*Block{e.newBlock(BlockToolResult, "r1", withMiddle(400, door.Text), 0, []trace.Fact{door})}
		}, 300, nil, []trace.Fact{door}},
		{"error line kept", func(e *env) []*Block {
			return []*Block{e.newBlock(BlockToolResult, "r1", withMiddle(400, boom.Text), 0, []trace.Fact{boom})}
		}, 300, []trace.Fact{boom}, nil},
		{"error kept, buried fact lost, same summary", func(e *env) []*Block {
			return []*Block{
				e.newBlock(BlockToolResult, "r1", withMiddle(400, door.Text), 0, []trace.Fact{door}),
				e.newBlock(BlockToolResult, "r2", withMiddle(400, boom.Text), 0, []trace.Fact{boom}),
			}
		}, 300, []trace.Fact{boom}, []trace.Fact{door}},
		{"elided content summarised through its stand-in", func(e *env) []*Block {
			return []*Block{e.newBlock(BlockToolResult, "r1", "", 6000, []trace.Fact{knob})}
		}, 2000, []trace.Fact{knob}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := testEnv(t, 200000)
			blocks := tc.blocks(e)
			in := 0
			for _, b := range blocks {
				in += b.Tokens
			}
			sum := summarize(e, blocks, tc.max)
			if len(sum.Facts) != 0 {
				t.Errorf("summary lists facts %v; it may only hold them in its text", sum.Facts)
			}
			if sum.Tokens > tc.max+1 {
				t.Errorf("summary is %d tokens, over the %d cap", sum.Tokens, tc.max)
			}
			for _, f := range tc.kept {
				if !sum.Has(&trace.Probe{Fact: f.ID, Text: f.Text}) {
					t.Errorf("fact %q lost; summary:\n%s", f.ID, sum.Text)
				}
			}
			for _, f := range tc.lost {
				if sum.Has(&trace.Probe{Fact: f.ID, Text: f.Text}) {
					t.Errorf("fact %q kept; the summariser should have dropped its line", f.ID)
				}
			}
			if e.sumIn != in || e.sumOut != sum.Tokens {
				t.Errorf("charged %d in, %d out; want %d and %d", e.sumIn, e.sumOut, in, sum.Tokens)
			}
		})
	}
}

// flat-compact and the region policy run one summariser on one text: the
// summary is the engine's Extractive summary of the blocks' content joined as
// the engine joins a region's entries, elided content as the region policy's
// stand-in.
func TestSummarizeIsTheEnginesSummariser(t *testing.T) {
	e := testEnv(t, 200000)
	f := trace.Fact{ID: "k", Text: "cache_ttl = 5m"}
	ev := trace.Event{Kind: trace.KindToolResult, ID: "r2", Size: 3000, Facts: []trace.Fact{f}}
	blocks := []*Block{
		e.newBlock(BlockUser, "u1", "please fix TestParse in parser/lex.go", 0, nil),
		e.eventBlock(&ev),
		e.newBlock(BlockAssistant, "a1", "Found it: the lexer drops the last token.", 0, nil),
	}
	want, err := engine.Extractive{}.Summarize(engine.SummaryRequest{
		Region:    summaryRegion,
		Content:   blocks[0].Text + "\n\n" + standIn(ev.Size, ev.Facts, false) + "\n\n" + blocks[2].Text,
		MaxTokens: 1000, Counter: tokenCounter{e.tok},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(e, blocks, 1000).Text; got != want {
		t.Errorf("summary\n%s\nwant the engine's\n%s", got, want)
	}
}

func TestFillerRun(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 127, 128, 191, 1000, 4095, 4096, 4097, 8191, 8192, 9000, 12289, 20000} {
		for _, tail := range []string{"", "x", "~x~"} {
			s := strings.Repeat("~", n) + tail
			want := n
			if tail == "~x~" {
				want++
			}
			if got := fillerRun(s); got != want {
				t.Errorf("fillerRun(%d×~ + %q) = %d, want %d", n, tail, got, want)
			}
		}
	}
}

// A stand-in with encoded runs is the one written out, encoded.
func TestStandInEncoded(t *testing.T) {
	for size := 0; size <= 9000; size += 1 + size/50 {
		for _, facts := range [][]trace.Fact{nil, {{ID: "f", Text: "port = 8443"}}} {
			enc, lit := standIn(size, facts, false), standIn(size, facts, true)
			if engine.ExpandFiller(enc) != lit || len(enc) != standInLen(size, facts, false) || len(lit) != standInLen(size, facts, true) {
				t.Fatalf("size %d: stand-in %q, written out %.40q", size, enc, lit)
			}
			var sb strings.Builder
			writeStandIn(&sb, size, facts, false)
			if sb.String() != enc {
				t.Fatalf("size %d: writeStandIn %q, want %q", size, sb.String(), enc)
			}
		}
	}
}

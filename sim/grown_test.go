package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// oddTokenizer counts in a way that is neither additive nor bytes/N, so a
// resumed count only matches if segments are counted exactly as countText
// counts them.
type oddTokenizer struct{}

func (oddTokenizer) Name() string          { return "odd" }
func (oddTokenizer) Count(text string) int { return len(strings.Fields(text)) + len(text)%3 }
func (oddTokenizer) CountBytes(n int) int  { return n/7 + 1 }

// A region's open chunk grows by appending to one buffer (or is copied):
// counting each version with grownCount (which resumes at the last segment)
// gives exactly countSigned's figure and signature, with filler runs that
// start, continue and end at the seams between appends.
func TestGrownCountMatchesCountText(t *testing.T) {
	pieces := []string{"", "plain text ", "~", "~~~~~~~~", strings.Repeat("~", 16), strings.Repeat("~", 300), "\n\nnext entry", string(engine.AppendFiller(nil, 40)), "x", "~~~~~~~~~~~~~~~ fifteen", strings.Repeat("long line ", 60)}
	toks := []Tokenizer{oddTokenizer{}}
	for _, name := range []string{"bytes/4", "bytes/3.5"} {
		tok, err := NewTokenizer(name)
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	for _, tok := range toks {
		t.Run(tok.Name(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(tok.Name()))))
			for trial := range 200 {
				var b strings.Builder
				var g grownCount
				for step := range 12 {
					b.WriteString(pieces[rng.IntN(len(pieces))])
					text := b.String()
					if step%3 == 2 {
						text = strings.Clone(text) // an extension in other bytes
					}
					checkGrownCount(t, &g, tok, text, trial, step)
				}
				// A different text (not an extension) is counted afresh.
				other := strings.Repeat("~", 40) + "tail"
				if got, sig, _ := g.count(tok, other); got != countText(tok, other) || sig != sigOf(other) {
					t.Fatalf("unrelated text: %d, want %d", got, countText(tok, other))
				}
				if got, _, _ := g.count(tok, ""); got != countText(tok, "") {
					t.Fatalf("empty text: %d", got)
				}
			}
		})
	}
}

// A region's chunks as the engine writes them (a heading, then entries of
// elided content, "\n\n" apart: runs of filler around fact lines), with
// stray 0xFF bytes and runs written out now and then: counting each
// version with grownCount (whose bytes/N fast path signs them in one pass
// and reuses a heading's trigrams) gives countSigned's figure, signature and
// size, for bytes/N and BPE tokenizers.
func TestGrownCountChunks(t *testing.T) {
	toks := []Tokenizer{oddTokenizer{}}
	for _, name := range []string{"bytes/4", "bytes/3.5", "o200k_base"} {
		tok, err := NewTokenizer(name)
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	heads := []string{"[codebase]:\n", "[codebase continued]:\n", "[codebase continued]:\n", "[codebase]:x\n", "x", "[codebase continued]:\n\xff", ""}
	odd := []string{"\xff", "\xff\x80\xff", "~~~", strings.Repeat("~", 20), "\xff\x81\xff", "\xff\xa0", "y"}
	for _, tok := range toks {
		t.Run(tok.Name(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(len(tok.Name()))))
			var g grownCount
			for trial := range 300 {
				buf := []byte(heads[rng.IntN(len(heads))])
				for step := range 6 {
					if step > 0 && rng.IntN(5) == 0 {
						// Another chunk that starts alike (a shared heading and more).
						buf = buf[:rng.IntN(len(buf)+1)]
					}
					if step > 0 {
						buf = append(buf, "\n\n"...)
					}
					var facts []trace.Fact
					for range rng.IntN(3) {
						facts = append(facts, trace.Fact{Text: fmt.Sprintf("value-%d-%x", rng.IntN(500), rng.Uint32())})
					}
					buf = appendStandIn(buf, rng.IntN(9000), facts, rng.IntN(30) == 0)
					if rng.IntN(8) == 0 {
						buf = append(buf, odd[rng.IntN(len(odd))]...)
					}
					text := string(buf)
					checkGrownCount(t, &g, tok, text, trial, step)
				}
			}
		})
	}
}

// checkGrownCount counts text, the next version of g's, and checks the count,
// signature and written-out size against counting it whole.
func checkGrownCount(t *testing.T, g *grownCount, tok Tokenizer, text string, trial, step int) {
	t.Helper()
	old := g.text
	got, sig, ok := g.count(tok, text)
	// The region policy reads grew as extendsText's answer when it is set.
	if grew := len(old) > 0 && len(text) > len(old) && text[:len(old)] == old; g.grew != grew || grew && !extendsText(old, text) {
		t.Fatalf("trial %d step %d: grew %v, want %v, text %q after %q", trial, step, g.grew, grew, text, old)
	}
	want, wantSig, wantOK := countSigned(tok, text)
	if got != want || sig != wantSig || ok != wantOK {
		t.Fatalf("trial %d step %d: grown count %d, %v, countSigned %d, %v, text %q", trial, step, got, ok, want, wantOK, text)
	}
	if g.size() != engine.TextLen(text) {
		t.Fatalf("trial %d step %d: grown size %d, want %d, text %q", trial, step, g.size(), engine.TextLen(text), text)
	}
}

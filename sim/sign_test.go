package sim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// signText skips runs of filler yet gives sigOf's signature, and a grown
// text's signature is its prefix's plus the trigrams from the seam on.
func TestSignTextIsSigOf(t *testing.T) {
	run := strings.Repeat(fillerByte, 40)
	texts := []string{"", "a", "ab~", run, "x" + run, run + "y", "ab" + run + "cd" + run + "e",
		"~~" + run + "~x~", "a~~~b" + strings.Repeat(fillerByte, 15) + "c", standIn(5000, nil, true) + "tail" + run,
		standIn(5000, nil, false) + "tail" + run, "x" + standIn(300, nil, false) + "y" + standIn(20, nil, false),
		standIn(5000, []trace.Fact{{Text: "a"}, {Text: "bc"}}, false) + "d"}
	for _, tx := range texts {
		want := sigOf(engine.ExpandFiller(tx))
		var g gramSig
		if !signText(&g, tx, 0, math.MaxInt) || g != want {
			t.Errorf("signText(%.30q) differs from sigOf", tx)
		}
		for cut := 1; cut <= len(tx); cut++ {
			if at := encodedRunAt(tx, cut); at >= 0 && at != cut {
				continue // inside an encoded run
			}
			var g gramSig
			signText(&g, tx[:cut], 0, math.MaxInt)
			signText(&g, tx, cut, math.MaxInt)
			if g != want {
				t.Fatalf("signature of %.30q grown at %d differs from sigOf", tx, cut)
			}
		}
	}
	var g gramSig
	if signText(&g, strings.Repeat("abc", 1000)+run, 0, 2048) {
		t.Error("signText hashed more than its limit")
	}
}

// countSigned counts as countText and signs as signText with sigMaxBytes.
func TestCountSigned(t *testing.T) {
	run := strings.Repeat(fillerByte, 40)
	texts := []string{"a", "ab~", run, "x" + run, run + "y", "ab" + run + "cd" + run + "e",
		standIn(5000, nil, true) + "tail" + run, strings.Repeat("abc", 1000) + run, run + strings.Repeat("abc", 682) + "ab",
		standIn(5000, nil, false) + "tail" + run, "x" + standIn(300, []trace.Fact{{Text: "fact"}}, false) + "y",
		strings.Repeat("abc", 682) + standIn(300, nil, false) + "ab"}
	bpe, err := NewTokenizer("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []Tokenizer{mustTok(t), bpe} {
		for _, tx := range texts {
			n, g, ok := countSigned(tok, tx)
			var want gramSig
			wantOK := signText(&want, tx, 0, sigMaxBytes)
			if !wantOK {
				want = gramSig{}
			}
			if x := engine.ExpandFiller(tx); countText(tok, x) != countText(tok, tx) {
				t.Errorf("countText(%.30q) = %d, written out %d", tx, countText(tok, tx), countText(tok, x))
			}
			if n != countText(tok, tx) || ok != wantOK || g != want {
				t.Errorf("countSigned(%.30q) = %d, %v; want %d, %v", tx, n, ok, countText(tok, tx), wantOK)
			}
		}
	}
}

// A wide signature holds every substring of its text, and one extended
// from a prefix's is the whole text's.
func TestWideSig(t *testing.T) {
	tx := strings.Repeat("the quick brown fox jumps over the lazy dog ", 40) + standIn(300, nil, true) + "end"
	var w wideSig
	w.add(tx)
	for i := 0; i+20 <= len(tx); i += 7 {
		if !w.holds(tx[i : i+20]) {
			t.Fatalf("wide signature lacks %q", tx[i:i+20])
		}
	}
	if w.holds("zzqxj") {
		t.Error("wide signature holds trigrams its text lacks")
	}
	var skipped, encoded wideSig
	signText(&skipped, tx, 0, math.MaxInt)
	signText(&encoded, strings.Repeat("the quick brown fox jumps over the lazy dog ", 40)+standIn(300, nil, false)+"end", 0, math.MaxInt)
	if skipped != w || encoded != w {
		t.Error("wide signature skipping runs of filler differs")
	}
	for _, cut := range []int{2, 100, len(tx) - 1} {
		var g wideSig
		g.add(tx[:cut])
		g.add(tx[cut-2:])
		if g != w {
			t.Errorf("wide signature grown at %d differs", cut)
		}
	}
}

// TestAddLongAsAdd checks that reading trigrams a word at a time sets the
// bits that reading them byte by byte does, in a signature and a wide one.
func TestAddLongAsAdd(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog \x00\xff~~~ 0123456789 " +
		"THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG"
	for i := 0; i < len(text); i++ {
		for j := i; j <= len(text); j++ {
			var a, b gramSig
			a.add(text[i:j])
			b.addLong(text[i:j])
			if a != b {
				t.Fatalf("addLong(%q) = %x, add = %x", text[i:j], b, a)
			}
			var w, want wideSig
			w.add(text[i:j])
			for k := i; k+3 <= j; k++ {
				want.add3(text[k], text[k+1], text[k+2])
			}
			if w != want {
				t.Fatalf("wideSig.add(%q) differs from its trigrams one by one", text[i:j])
			}
		}
	}
}

// searchText is strings.Contains, on texts with many near matches.
func TestSearchText(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alpha := []string{"ab", "value-0123456789abcdef\n", "a~\xff"}
	for trial := range 3000 {
		abc := alpha[trial%len(alpha)]
		var b strings.Builder
		for range 400 + rng.IntN(2000) {
			b.WriteByte(abc[rng.IntN(len(abc))])
		}
		s := b.String()
		for range 20 {
			var p string
			if k := rng.IntN(len(s) - 40); rng.IntN(2) == 0 {
				p = s[k : k+1+rng.IntN(40)]
			} else {
				var q strings.Builder
				for range 1 + rng.IntN(40) {
					q.WriteByte(abc[rng.IntN(len(abc))])
				}
				p = q.String()
			}
			if got, want := searchText(s, p), strings.Contains(s, p); got != want {
				t.Fatalf("searchText(%q, %q) = %v, want %v", s, p, got, want)
			}
		}
	}
}

// FuzzSearchText checks searchText against strings.Contains on texts long
// enough for its own search, with needles cut from the text (found, or
// missed by one changed byte) of any length, past its 255-byte shift cap.
func FuzzSearchText(f *testing.F) {
	f.Add("value-0123456789abcdef\n", uint16(40), uint16(30), uint8(0))
	f.Add("ab", uint16(7), uint16(300), uint8(9))
	f.Add("a~\xff", uint16(0), uint16(8), uint8(200))
	f.Fuzz(func(t *testing.T, unit string, off, n uint16, flip uint8) {
		if unit == "" {
			return
		}
		s := strings.Repeat(unit, 1+2048/len(unit))
		s = s[:min(len(s), 4096)]
		start := int(off) % len(s)
		p := []byte(s[start:min(len(s), start+int(n))])
		if len(p) == 0 {
			return
		}
		if flip != 0 {
			p[int(flip)%len(p)] ^= flip
		}
		if got, want := searchText(s, string(p)), strings.Contains(s, string(p)); got != want {
			t.Fatalf("searchText(%q, %q) = %v, want %v", s, p, got, want)
		}
	})
}

// Tool calls and pointers, made from their templates, are counted and
// signed as makeBlockSigned counts and signs any text; a pointer that does
// not fit its template is left to it.
func TestTemplateBlocks(t *testing.T) {
	bpe, err := NewTokenizer("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	same := func(got, want *Block) bool {
		return got.Tokens == want.Tokens && got.sig == want.sig && got.sigState == want.sigState && got.textLen == want.textLen
	}
	run := func(n int) string { return string(engine.AppendFiller(nil, n)) }
	fast := 0
	for _, tok := range []Tokenizer{mustTok(t), bytesPer{"bytes/3.5", 3.5}, bpe} {
		p := &regionPolicy{env: &env{tok: tok}}
		for _, name := range []string{"read_file", "grep", "", `a"b`, strings.Repeat(fillerByte, 20), "read_file"} {
			for _, id := range []string{"c1234", "", "x\xff~", strings.Repeat(fillerByte, 20), `a"b`} {
				for _, args := range []string{"", `{"path":"a/b"}`, "a" + run(40) + "b", strings.Repeat(fillerByte, 17), "\xff", strings.Repeat("x", 2100)} {
					got := p.toolUseBlock(&engine.Block{ToolCallID: id, ToolName: name, Args: []byte(args)}, 1)
					if want := p.env.makeBlockSigned(BlockAssistant, "", got.Text, 0, nil, 1); !same(got, want) {
						t.Errorf("tool call %.40q: %d tokens, signed %v; want %d, %v", got.Text, got.Tokens, got.sig, want.Tokens, want.sig)
					}
				}
			}
		}
		for _, num := range []string{"", "1234"} {
			for _, name := range []string{"codebase", "", "a'b", "x\xffy", strings.Repeat(fillerByte, 20), "codebase"} {
				for _, preview := range []string{"", "a", run(160), run(64) + "x", "\n" + run(100)} {
					for _, end := range []string{"]", "…]", "", "x]"} {
						text := pointerHead + num + pointerA + name + pointerB + preview + end
						want := p.env.makeBlockSigned(BlockToolResult, "", text, 0, nil, 1)
						got := p.pointerBlock(&engine.Block{Type: engine.BlockToolResult}, text, 1)
						if got == nil {
							continue
						}
						fast++
						if !same(got, want) {
							t.Errorf("pointer %.60q: %d tokens, signed %v; want %d, %v", text, got.Tokens, got.sig, want.Tokens, want.sig)
						}
					}
				}
			}
		}
	}
	if fast != 3*2*3*2 {
		t.Errorf("%d pointers made from their template, want %d", fast, 3*2*3*2)
	}
}

// A probe finds its fact in a block that lists it though the block's text
// lacks it: a refetched block, which the fact index does not hold, is
// found by the scan, whose signature test must let such a block through.
func TestPresentFindsAFactListedByARefetchedBlock(t *testing.T) {
	e := testEnv(t, 100000)
	var m meter
	m.init(e, noCache{})
	f := trace.Fact{ID: "f", Text: "key=42"}
	e.refetching = true
	b := e.newBlock(BlockToolResult, "r1", "some other output", 0, []trace.Fact{f})
	e.refetching = false
	need := sigOf(f.Text)
	if b.sigState != 1 || b.sig.covers(&need) || len(e.factIdx[f.ID]) > 0 {
		t.Fatal("the block is not a refetched one whose signature rules the fact out")
	}
	req := &Request{Blocks: []*Block{b}}
	m.measure(req, 0, nil)
	if got := m.present(req, &pendingProbe{probe: &trace.Probe{Fact: f.ID, Text: f.Text}}, e.factIdx[f.ID]); got != b {
		t.Fatalf("present = %v, want the block listing the fact", got)
	}
}

// A block too long for a signature gets its wide one from its previous
// version's (extendWide, for the meter and for a region's chunk alike): it
// holds every trigram of its own text, whether it grew in place in the
// previous one's buffer or was written anew keeping most of its text.
func TestExtendWideHoldsItsText(t *testing.T) {
	head := strings.Repeat("the quick brown fox jumps over the lazy dog ", 60)
	tail := " value-7f3a-unique-tail " + standIn(400, nil, true) + " closing words"
	buf := head + tail
	var fresh wideSig
	signText(&fresh, head, 0, math.MaxInt)
	prev := &Block{Text: buf[:len(head)], wide: &fresh, sigState: 2}
	for _, tc := range []struct {
		name string
		text string
	}{
		{"grown in place", buf},
		{"written anew", strings.Clone(buf)},
		{"summarised again", head[:len(head)-30] + tail},
	} {
		for _, sign := range []func(b *Block){
			func(b *Block) { signLong(b, prev) },
			func(b *Block) { m := &meter{prev: []*Block{prev}}; m.sign(b, 0) },
		} {
			b := &Block{Text: tc.text}
			sign(b)
			if b.sigState != 2 || b.wide == nil {
				t.Fatalf("%s: no wide signature (state %d)", tc.name, b.sigState)
			}
			for i := 0; i+3 <= len(tc.text); i++ {
				if !b.wide.holds(tc.text[i : i+3]) {
					t.Fatalf("%s: wide signature lacks %q at %d", tc.name, tc.text[i:i+3], i)
				}
			}
		}
	}
}

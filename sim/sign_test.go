package sim

import (
	"math"
	"strings"
	"testing"
)

// signText skips runs of filler yet gives sigOf's signature, and a grown
// text's signature is its prefix's plus the trigrams from the seam on.
func TestSignTextIsSigOf(t *testing.T) {
	run := strings.Repeat(fillerByte, 40)
	texts := []string{"", "a", "ab~", run, "x" + run, run + "y", "ab" + run + "cd" + run + "e",
		"~~" + run + "~x~", "a~~~b" + strings.Repeat(fillerByte, 15) + "c", standIn(5000, nil) + "tail" + run}
	for _, tx := range texts {
		var g gramSig
		if !signText(&g, tx, math.MaxInt) || g != sigOf(tx) {
			t.Errorf("signText(%.30q) differs from sigOf", tx)
		}
		for cut := 2; cut <= len(tx); cut++ {
			g := sigOf(tx[:cut])
			signText(&g, tx[cut-2:], math.MaxInt)
			if g != sigOf(tx) {
				t.Fatalf("signature of %.30q grown at %d differs from sigOf", tx, cut)
			}
		}
	}
	var g gramSig
	if signText(&g, strings.Repeat("abc", 1000)+run, 2048) {
		t.Error("signText hashed more than its limit")
	}
}

// countSigned counts as countText and signs as signText with sigMaxBytes.
func TestCountSigned(t *testing.T) {
	run := strings.Repeat(fillerByte, 40)
	texts := []string{"a", "ab~", run, "x" + run, run + "y", "ab" + run + "cd" + run + "e",
		standIn(5000, nil) + "tail" + run, strings.Repeat("abc", 1000) + run, run + strings.Repeat("abc", 682) + "ab"}
	bpe, err := NewTokenizer("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []Tokenizer{mustTok(t), bpe} {
		for _, tx := range texts {
			n, g, ok := countSigned(tok, tx)
			var want gramSig
			wantOK := signText(&want, tx, sigMaxBytes)
			if !wantOK {
				want = gramSig{}
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
	tx := strings.Repeat("the quick brown fox jumps over the lazy dog ", 40) + standIn(300, nil) + "end"
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
	var skipped wideSig
	signText(&skipped, tx, math.MaxInt)
	if skipped != w {
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

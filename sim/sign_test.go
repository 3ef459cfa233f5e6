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

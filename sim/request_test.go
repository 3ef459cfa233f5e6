package sim

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// The trigram filter never hides a fact that is there.
func TestHasFactMatchesContains(t *testing.T) {
	texts := []string{"", "ab", "port = 8443", "the port = 8443 here", strings.Repeat("x", 3000) + "port = 8443", "<tool_use id=\"c1\">", "port = 844"}
	facts := []string{"port = 8443", "8443", "x", "abc", "port"}
	for _, tx := range texts {
		for _, f := range facts {
			b := &Block{Text: tx}
			p := &trace.Probe{Text: f}
			need := sigOf(f)
			if got, want := b.hasFact(p, &need), strings.Contains(tx, f); got != want {
				t.Errorf("hasFact(%.20q, %q) = %v, want %v", tx, f, got, want)
			}
			if got := b.Has(p); got != strings.Contains(tx, f) {
				t.Errorf("Has(%.20q, %q) = %v", tx, f, got)
			}
		}
	}
}

func FuzzHasFact(f *testing.F) {
	f.Add("the port = 8443 here", "8443")
	f.Add("aaa", "aaaa")
	f.Fuzz(func(t *testing.T, text, fact string) {
		if fact == "" {
			return
		}
		b := &Block{Text: text}
		need := sigOf(fact)
		if got, want := b.hasFact(&trace.Probe{Text: fact}, &need), strings.Contains(text, fact); got != want {
			t.Fatalf("hasFact(%q, %q) = %v, want %v", text, fact, got, want)
		}
	})
}

// The fields a walk of the meter reads lie in one cache line (see Block).
func TestBlockLayout(t *testing.T) {
	var b Block
	if got := unsafe.Sizeof(b); got != 224 {
		t.Errorf("a block is %d bytes, want 224", got)
	}
	if hot, end := unsafe.Offsetof(b.Hash), unsafe.Offsetof(b.slot)+unsafe.Sizeof(b.slot); hot != 24 || end != 56 {
		t.Errorf("the walked fields are at [%d, %d), want [24, 56)", hot, end)
	}
	if got := unsafe.Offsetof(b.pendingTokens); got != 56 {
		t.Errorf("pendingTokens is at %d, want 56", got)
	}
}

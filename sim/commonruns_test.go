package sim

import (
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/engine"
)

// commonPrefixRuns finds where two texts diverge, their runs of filler
// written out, also where one is the other's start (a grown chunk).
func TestCommonPrefixRunsWrittenOut(t *testing.T) {
	run := func(n int) string { return string(engine.AppendFiller(nil, n)) }
	grown := "head " + run(100) + " mid " + run(300)
	pairs := [][2]string{
		{"abc", "abc"},
		{"abc", "abcdef"},
		{grown, grown + " tail"},
		{grown, grown + run(70)},
		{"head " + run(100), "head " + run(150)},
		{"head " + run(100) + "x", "head " + run(150) + "y"},
		{"head " + run(100), "head " + run(100) + " more"},
		{"head", "head" + run(80)},
		{"he" + run(90) + "ad", "he" + run(90) + "al"},
		{"x" + run(65), "x" + strings.Repeat(fillerByte, 65) + "!"},
	}
	for _, p := range pairs {
		for _, ab := range [][2]string{p, {p[1], p[0]}} {
			a, b := ab[0], ab[1]
			i, extra := commonPrefixRuns(a, b)
			got := engine.TextLen(a[:i]) + extra
			if want := commonPrefix(engine.ExpandFiller(a), engine.ExpandFiller(b)); got != want {
				t.Errorf("commonPrefixRuns(%.20q, %.20q) covers %d bytes written out, want %d", a, b, got, want)
			}
		}
	}
}

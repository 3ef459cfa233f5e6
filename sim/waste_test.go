package sim

import (
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// Dead waste is "tokens of content no later probe uses". A probe that finds
// its fact verbatim in a block other than its source (here a user message
// that quotes it; in practice often a summary) used that block.
//
//	r1 (at a1) = t u1        100 + 100 = 200
//	r2 (at a2) = t u1 a1     200 + 1   = 201; the probe is asked here and
//	                         finds "key=42" in u1
//
// u1 was used at r2, so its sends in r1 and r2 are not dead; t is exempt;
// a1 (1 token, in r2) is the only dead content: 1 of 401.
func TestDeadWasteCountsAProbeHitInAnyBlock(t *testing.T) {
	f := trace.Fact{ID: "f", Text: "key=42"}
	b := (&tb{}).task("t", 100).user("u1", 100)
	b.evs[1].Text = "key=42 " + b.evs[1].Text[7:]
	b.asst("a1", 1, 1).probe("p", f, "elsewhere", false).asst("a2", 1, 1)
	for _, pol := range []string{"unbounded", "flat"} {
		t.Run(pol, func(t *testing.T) {
			res := run(t, b, Config{Policy: pol, Model: testProfile("none")})
			checkMetrics(t, res.Metrics, map[string]float64{
				"input_tokens":    401,
				"fact_recall_pct": 100,
				"waste_dead_pct":  100 * 1.0 / 401,
			})
		})
	}
}

package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// prefix_stability_p10_pct is the nearest-rank 10th percentile: the value at
// rank ⌈0.1·n⌉ of the sorted per-request ratios.
func TestPercentileNearestRank(t *testing.T) {
	seqf := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i + 1)
		}
		return s
	}
	tests := []struct {
		name   string
		sorted []float64
		want   float64
	}{
		{"one value", []float64{7}, 7},
		{"two values: rank 1", []float64{3, 9}, 3},
		{"10 values: rank 1", seqf(10), 1},
		{"11 values: rank 2", seqf(11), 2},
		{"20 values: rank 2", seqf(20), 2},
		{"21 values: rank 3", seqf(21), 3},
		{"100 values: rank 10", seqf(100), 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, 0.10); got != tt.want {
				t.Fatalf("p10 = %v, want %v", got, tt.want)
			}
		})
	}
}

// selectRank finds the value sorting would put at each rank: in random
// order, with ties, and in order or reversed.
func TestSelectRankAsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 16, 100, 1000} {
		for _, distinct := range []int{1, 3, n} {
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = float64(rng.IntN(distinct)) / 7
			}
			sorted := slices.Clone(vals)
			slices.Sort(sorted)
			reversed := slices.Clone(sorted)
			slices.Reverse(reversed)
			for _, in := range [][]float64{vals, sorted, reversed} {
				for k := range n {
					if got := selectRank(slices.Clone(in), k); got != sorted[k] {
						t.Fatalf("n=%d distinct=%d: rank %d is %v, sorted %v", n, distinct, k, got, sorted[k])
					}
				}
			}
		}
	}
}

// input_growth: the quarters are the first and last ⌊n/4⌋ requests, at least
// one, so runs of 1..7 requests compare single requests.
func TestInputGrowthQuarters(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int32
		want  float64
	}{
		{"one request", []int32{100}, 1},
		{"three requests: last ÷ first", []int32{100, 150, 300}, 3},
		{"five requests: quarter of 1", []int32{100, 1, 1, 1, 250}, 2.5},
		{"eight requests: quarters of 2", []int32{100, 300, 1, 1, 1, 1, 500, 700}, (500 + 700) / 400.0},
		{"nine requests: quarters of 2", []int32{100, 100, 1, 1, 1, 1, 1, 300, 300}, 3},
		{"empty first quarter", []int32{0, 5, 5, 5}, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := growth(tt.sizes); !near(got, tt.want) {
				t.Fatalf("growth = %v, want %v", got, tt.want)
			}
		})
	}
}

// A trace with no inference has no requests: every per-request share is NaN
// (null in JSON), never 0 or a division by zero, and the counts are 0.
func TestMetricsZeroRequests(t *testing.T) {
	f := trace.Fact{ID: "f", Text: "key=42"}
	b := (&tb{}).task("t", 10).user("u", 10, f).probe("p", f, "u", false)
	res := run(t, b, Config{Policy: "unbounded", Model: testProfile("anthropic")})
	for _, k := range []string{"task_retained_pct", "task_first_loss", "prefix_stability_pct", "prefix_stability_p10_pct",
		"cache_hit_pct", "waste_pct", "waste_reprefill_pct", "waste_dead_pct", "waste_refetch_pct", "ttft_mean_s", "input_growth"} {
		if v := res.Metrics.Get(k); !math.IsNaN(v) {
			t.Errorf("%s = %v, want NaN", k, v)
		}
	}
	checkMetrics(t, res.Metrics, map[string]float64{"requests": 0, "input_tokens": 0, "cost_usd": 0,
		"over_window_requests": 0, "peak_request_tokens": 0,
		// The probe after the last (here: no) inference is asked of the
		// context as it stands, which holds u.
		"fact_recall_pct": 100})
}

// Fact presence is "verbatim in one block": a fact whose text is split
// across two blocks is not present, and elided content holds the facts it
// lists.
func TestFactPresenceBlocks(t *testing.T) {
	f := trace.Fact{ID: "f", Text: "port=8443"}
	t.Run("split across two blocks", func(t *testing.T) {
		b := (&tb{}).task("t", 10).user("u1", 10).user("u2", 10)
		b.evs[1].Text = "abc port=" + b.evs[1].Text[9:]
		b.evs[2].Text = "8443 tail " + b.evs[2].Text[10:]
		b.asst("a1", 1, 1).probe("p", f, "u1", false).asst("a2", 1, 1)
		res := run(t, b, Config{Policy: "unbounded", Model: testProfile("none")})
		checkMetrics(t, res.Metrics, map[string]float64{"fact_recall_pct": 0, "lost_facts": 1})
	})
	t.Run("listed by elided content", func(t *testing.T) {
		b := (&tb{}).task("t", 10).call("a1", "c1", 1).result("r1", "c1", 50, f).probe("p", f, "r1", true).asst("a2", 1, 1)
		res := run(t, b, Config{Policy: "unbounded", Model: testProfile("none")})
		checkMetrics(t, res.Metrics, map[string]float64{"fact_recall_pct": 100, "lost_facts": 0, "requests": 2})
	})
	t.Run("quoted in one block that is not its source", func(t *testing.T) {
		b := (&tb{}).task("t", 10).user("u1", 10)
		b.evs[1].Text = "x port=8443 " + b.evs[1].Text[12:]
		b.asst("a1", 1, 1).probe("p", f, "elsewhere", false).asst("a2", 1, 1)
		res := run(t, b, Config{Policy: "unbounded", Model: testProfile("none")})
		checkMetrics(t, res.Metrics, map[string]float64{"fact_recall_pct": 100})
	})
}

// cost_usd includes the summariser's calls: flat-compact summarising at the
// first request is charged its input (t + u1..u4 = 450 tokens, at the input
// price) and its summary (at the output price), and its time.
//
//	request = s (50) + summary (S) + u5 u6 (200), no cache
//	cost    = (250 + S)·$1 + 10·$2 + 450·$1 + S·$2, per million
//	time    = summariser 0.5 + 450/1000 + S/100, then 0.5 + (250+S)/1000 + 10/100
func TestCostIncludesTheSummariser(t *testing.T) {
	b := (&tb{}).system("s", 50).task("t", 50)
	for i := 1; i <= 6; i++ {
		b.user(name("u", i), 100)
	}
	b.asst("a1", 1, 10)
	var sumTokens int
	rec := sinkFunc(func(s RequestSample) {
		if blk := s.Request.Blocks[1]; blk.Kind == BlockSummary {
			sumTokens = blk.Tokens
		}
	})
	res := run(t, b, Config{Policy: "flat-compact(threshold=500,keep=2)", Model: testProfile("none"), Series: rec})
	if sumTokens == 0 {
		t.Fatal("no summary in the request")
	}
	S := float64(sumTokens)
	checkMetrics(t, res.Metrics, map[string]float64{
		"compactions":     1,
		"input_tokens":    250 + S,
		"cost_usd":        ((250+S)*1 + 10*2 + 450*1 + S*2) / 1e6,
		"virtual_seconds": (0.5 + 0.45 + S/100) + (0.5 + (250+S)/1000 + 0.1),
		"ttft_mean_s":     0.5 + (250+S)/1000,
	})
}

// Probes after the last inference are asked of the context the policy would
// send next, but that request is never sent: what the policy did to build it
// (drop, compact, summarise) is not counted.
//
//	r1 (at a1) = t 100: fits the 900-token budget (window 1000 − reserve 100)
//	then u1 (900) arrives and the probe: the next request would drop t
//	evictions = 0, requests = 1, input = 100, cost = 100·$1 + 1·$2
func TestProbesAfterTheLastInferenceCountNoWork(t *testing.T) {
	f := trace.Fact{ID: "f", Text: "key=42"}
	b := (&tb{}).task("t", 100).asst("a1", 1, 1).user("u1", 900).probe("p", f, "t", false)
	for _, pol := range []string{"flat", "flat-compact(threshold=500,keep=1)"} {
		t.Run(pol, func(t *testing.T) {
			res := run(t, b, Config{Policy: pol, Model: testProfile("none"), Window: 1000})
			checkMetrics(t, res.Metrics, map[string]float64{"requests": 1, "input_tokens": 100, "evictions": 0,
				"compactions": 0, "cost_usd": (100 + 2) / 1e6})
		})
	}
}

// Prefix stability's common tokens inside the first differing block: under a
// bytes/N tokenizer token k covers bytes [(k−1)·N, k·N), so a common prefix of
// i bytes shares ⌊i/N⌋ whole tokens — also when i is a multiple of N, where
// no token straddles the divergence.
func TestCommonTokensBytesPer(t *testing.T) {
	tok, err := NewTokenizer("bytes/4")
	if err != nil {
		t.Fatal(err)
	}
	m := &meter{env: &env{tok: tok}}
	base := text("A", 100) // 400 bytes, 100 tokens
	tests := []struct {
		name   string
		common int // bytes
		want   int
	}{
		{"diverge at a token boundary", 200, 50},
		{"diverge one byte into a token", 201, 50},
		{"diverge at the last byte of a token", 203, 50},
		{"diverge at the first byte", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := base[:tt.common] + strings.Repeat("x", 400-tt.common)
			a := &Block{Text: base, Tokens: 100}
			b := &Block{Text: other, Tokens: 100}
			if got := m.commonTokens(a, b); got != tt.want {
				t.Fatalf("common tokens %d, want %d", got, tt.want)
			}
		})
	}
	t.Run("a grown block shares all of its previous version at a boundary", func(t *testing.T) {
		a := &Block{Text: base, Tokens: 100}
		b := &Block{Text: base + "tail", Tokens: 101}
		if got := m.commonTokens(a, b); got != 100 {
			t.Fatalf("common tokens %d, want 100", got)
		}
	})
}

// Task retention judges the requests sent once the task has arrived: a
// request before it (an opening reply to the system prompt) cannot have lost
// it, and is neither a hit nor the first loss.
//
//	r1 (at a0) = s          not judged
//	r2 (at a1) = s a0 t     holds the task
//	retained = 1/1 = 100 %, first loss = requests + 1 = 3
func TestTaskRetentionFromTheTasksArrival(t *testing.T) {
	b := (&tb{}).system("s", 10).asst("a0", 1, 1).task("t", 10).asst("a1", 1, 1)
	res := run(t, b, Config{Policy: "unbounded", Model: testProfile("none")})
	checkMetrics(t, res.Metrics, map[string]float64{"requests": 2, "task_retained_pct": 100, "task_first_loss": 3})
}

// Refetch waste, hand-counted on flat at window 1000 (budget 900). Tool calls
// render as <tool_use id="cN" name="read_file"></tool_use>: 46 bytes = 12
// tokens; the re-issued call (id "p1-call") 50 bytes = 13 tokens.
//
//	r1 (a1) t                       50
//	r2 (a2) t a1 r1                 362
//	r3 (a3) t a1 r1 a2 r2           674
//	r4 (a4) a2 r2 a3 r3             624 (t a1 r1 dropped)
//	r5 (a5) a3 r3 a4 r4             624; the probe misses r1: refetch turn
//	r6 (a5) a4 r4 call r1'          625; the call and r1' (313) are refetch
//
// refetch = 313 of 2,959 input tokens.
func TestRefetchWasteHandCounted(t *testing.T) {
	fact := trace.Fact{ID: "f1", Text: "port = 8443"}
	b := (&tb{}).task("t", 50).call("a1", "c1", 5).result("r1", "c1", 300, fact)
	for i := 2; i <= 4; i++ {
		b.call(name("a", i), name("c", i), 5).result(name("r", i), name("c", i), 300)
	}
	b.probe("p1", fact, "r1", true).asst("a5", 5, 5)
	res := run(t, b, Config{Policy: "flat", Model: testProfile("none"), Window: 1000})
	checkMetrics(t, res.Metrics, map[string]float64{
		"requests":          6,
		"input_tokens":      2959,
		"waste_refetch_pct": 100 * 313.0 / 2959,
		"fact_recall_pct":   0,
		"lost_facts":        0,
		"output_tokens":     5*4 + 13 + 5, // a1..a4, the re-issued call, a5
	})
}

// Re-prefill counts what expired: an idle gap past the 5-minute TTL makes the
// second request re-process the system prompt and task it sent before.
//
//	r1 (t=0)      s t        200, written (5 m)
//	r2 (t=400.8)  s t a1 u1  400, the entries expired at 300: nothing read;
//	              s t (200) were sent before: re-prefill; a1 u1 are new
//	re-prefill = 200 of 600; with a 60 s gap r2 reads s t and re-prefill is 0
func TestReprefillAfterExpiry(t *testing.T) {
	for _, tt := range []struct {
		name      string
		gap       float64
		read, rep float64
	}{
		{"gap past the TTL", 400, 0, 200},
		{"gap within the TTL", 60, 200, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := (&tb{}).system("s", 100).task("t", 100).asst("a1", 100, 10)
			b.t = tt.gap
			b.user("u1", 100).asst("a2", 1, 1)
			res := run(t, b, Config{Policy: "unbounded", Model: testProfile("anthropic")})
			checkMetrics(t, res.Metrics, map[string]float64{"requests": 2, "input_tokens": 600,
				"cache_read_tokens": tt.read, "waste_reprefill_pct": 100 * tt.rep / 600})
		})
	}
}

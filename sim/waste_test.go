package sim

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/engine"
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

// Re-prefill is "tokens sent in an earlier request and processed again
// uncached". A region's open chunk that grew is a new block, but the part of
// it that is its previous version (prior tokens) was sent before.
//
//	r1 = A            100 tokens, new
//	r2 = A' (A + 100) 200 tokens, of which A's 100 were sent in r1
//
// No cache: re-prefill = 100 (A' is system content, never dead).
func TestReprefillCountsAGrownBlocksPriorPart(t *testing.T) {
	e := testEnv(t, 100000)
	var m meter
	m.init(e, noCache{})
	a := e.newBlock(BlockSystem, "r#1", text("A", 100), 0, nil)
	m.measure(&Request{Blocks: []*Block{a}}, 0, nil)
	grown := e.newBlock(BlockSystem, "r#2", a.Text+text("B", 100), 0, nil)
	grown.prior = 100
	m.measure(&Request{Blocks: []*Block{grown}}, 1, nil)
	var out Metrics
	m.finish(&out, 1)
	checkMetrics(t, out, map[string]float64{"input_tokens": 300, "waste_reprefill_pct": 100 * 100.0 / 300, "waste_dead_pct": 0})
}

// The region policy marks a grown chunk with the tokens of its previous
// version that lie wholly before the seam (⌊bytes/4⌋ under bytes/4), when
// that version was sent.
func TestRegionsGrownChunkPrior(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.leviath")
	if err := os.WriteFile(path, []byte(testBlueprint), 0o644); err != nil {
		t.Fatal(err)
	}
	b := (&tb{}).system("s", 50).task("t", 20).call("a1", "c1", 5).result("r1", "c1", 100).
		call("a2", "c2", 5).result("r2", "c2", 100).asst("a3", 5, 5)
	var prev map[string]*Block
	found := false
	rec := sinkFunc(func(s RequestSample) {
		cur := map[string]*Block{}
		for _, blk := range s.Request.Blocks {
			if blk.Kind != BlockRegion {
				continue // messages do not grow; only a system region's chunk does
			}
			cur[blk.Region] = blk // the region's last chunk
			if old, ok := prev[blk.Region]; ok && old != blk && len(blk.Text) > len(old.Text) && strings.HasPrefix(blk.Text, old.Text) {
				found = true
				if want := engine.TextLen(old.Text) / 4; blk.prior != want {
					t.Errorf("request %d, region %s: prior %d, want %d (the previous version's whole bytes/4 tokens)", s.Index, blk.Region, blk.prior, want)
				}
			}
		}
		prev = cur
	})
	_, err := Run(context.Background(), SliceSource(trace.Header{Schema: trace.Schema, Version: 1}, b.evs),
		Config{Policy: "regions:" + path, Model: testProfile("none"), Window: 32768, Series: rec})
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatal("no region chunk grew: the test does not exercise prior")
	}
}

type sinkFunc func(RequestSample)

func (f sinkFunc) Request(s RequestSample) { f(s) }

// Dead waste excepts the task: a block that holds the whole task text is
// never dead, whatever its kind (a recorded request sends the task inside a
// user message, not as a task block).
//
//	r1 (recorded) = sys 100 (system) + task text 10 (user) + x 50 (user) = 160
//
// No probe uses anything: dead = x's 50 only, 50 of 160.
func TestDeadWasteExceptsABlockHoldingTheTask(t *testing.T) {
	task := text("t", 10)
	req := &trace.Request{
		System: []trace.Block{{Type: "text", Text: text("sys", 100)}},
		Messages: []trace.Message{{Role: "user", Blocks: []trace.Block{
			{Type: "text", Text: task}, {Type: "text", Text: text("x", 50)}}}},
	}
	b := (&tb{}).task("t", 10)
	b.add(trace.Event{Kind: trace.KindUsage, ID: "use1", Usage: &trace.Usage{Prompt: 160, Uncached: 160, Request: req}})
	b.asst("a1", 5, 5)
	res := run(t, b, Config{Policy: "as-recorded", Model: testProfile("none")})
	checkMetrics(t, res.Metrics, map[string]float64{"requests": 1, "input_tokens": 160, "task_retained_pct": 100,
		"waste_dead_pct": 100 * 50.0 / 160})
}

// The dead tokens of a region layout are split by region, and the parts
// add up to waste_dead_pct's numerator; flat policies have no split.
func TestDeadByRegion(t *testing.T) {
	for _, pol := range []string{"regions:coder", "flat"} {
		res := runRandom(t, 3, 300, Config{Policy: pol, Model: testProfile("anthropic"), Window: 16384})
		sum := 0
		for i, r := range res.DeadByRegion {
			if r.Tokens <= 0 || i > 0 && res.DeadByRegion[i-1].Name >= r.Name {
				t.Errorf("%s: DeadByRegion[%d] = %+v: want positive tokens, names ascending", pol, i, r)
			}
			sum += r.Tokens
		}
		dead := res.Metrics.Get("waste_dead_pct") * res.Metrics.Get("input_tokens") / 100
		if pol == "flat" {
			if res.DeadByRegion != nil {
				t.Errorf("flat: DeadByRegion = %v, want nil", res.DeadByRegion)
			}
			continue
		}
		if dead < 1000 || math.Abs(float64(sum)-dead) > 0.5 {
			t.Errorf("%s: DeadByRegion sums to %d, dead tokens %.1f", pol, sum, dead)
		}
		// read_file results go to codebase in the coder blueprint's first stage.
		if !slices.ContainsFunc(res.DeadByRegion, func(r RegionTokens) bool { return r.Name == "codebase" }) {
			t.Errorf("%s: no dead tokens in codebase: %v", pol, res.DeadByRegion)
		}
	}
}

// A block can be listed twice in one request (the region policy shares one
// block among identical messages). It stays present while any listing is
// sent: here X's second listing leaves at r2 while its first stays.
//
//	r1 = A X B X     A is system (never dead); X 10, B 20 tokens
//	r2 = A X C       B and X's second listing left; C 30
//	r3 = A X C D     D 40
//
// Dead (no probes): X 3×10 + B 20 + C 2×30 + D 40 = 150 of 140+140+180.
func TestDeadWasteKeepsABlockListedTwice(t *testing.T) {
	e := testEnv(t, 100000)
	var m meter
	m.init(e, noCache{})
	a := e.newBlock(BlockSystem, "a", text("A", 100), 0, nil)
	x := e.newBlock(BlockUser, "x", text("X", 10), 0, nil)
	b := e.newBlock(BlockUser, "b", text("B", 20), 0, nil)
	c := e.newBlock(BlockUser, "c", text("C", 30), 0, nil)
	d := e.newBlock(BlockUser, "d", text("D", 40), 0, nil)
	m.measure(&Request{Blocks: []*Block{a, x, b, x}, repeats: true}, 0, nil)
	m.measure(&Request{Blocks: []*Block{a, x, c}, repeats: true}, 1, nil)
	if x.since < 0 {
		t.Errorf("after r2, X (still listed first) is marked absent")
	}
	m.measure(&Request{Blocks: []*Block{a, x, c, d}, repeats: true}, 2, nil)
	var out Metrics
	m.finish(&out, 2)
	checkMetrics(t, out, map[string]float64{"input_tokens": 460, "waste_dead_pct": 100 * 150.0 / 460})
}

// The meter marks the blocks a walk sees until a policy's first tracked
// request, then counts each block's places (see meter.countPlaces): the
// same requests measure alike whether some of them are tracked or none is.
// X leaves while marked and comes back counted; Y is listed twice when
// the counting starts, and one of its places leaves.
//
//	r1 = A X Y     r2 = A Y Y     r3 = A Y X     r4 = A Y     r5 = A Y Z
func TestDeadWasteAsCountingStarts(t *testing.T) {
	measure := func(tracked bool) Metrics {
		e := testEnv(t, 100000)
		var m meter
		m.init(e, noCache{})
		a := e.newBlock(BlockSystem, "a", text("A", 100), 0, nil)
		x := e.newBlock(BlockUser, "x", text("X", 10), 0, nil)
		y := e.newBlock(BlockUser, "y", text("Y", 20), 0, nil)
		z := e.newBlock(BlockUser, "z", text("Z", 30), 0, nil)
		for i, blocks := range [][]*Block{{a, x, y}, {a, y, y}, {a, y, x}, {a, y}, {a, y, z}} {
			// Tracked with nothing kept or carried: each block past the
			// common prefix is walked, each of the last request's may have
			// left.
			req := &Request{Blocks: blocks, repeats: true, tracked: tracked && i >= 2, keptFrom: len(blocks)}
			m.measure(req, float64(i), nil)
		}
		var out Metrics
		m.finish(&out, 4)
		return out
	}
	if got, want := fmt.Sprint(measure(true)), fmt.Sprint(measure(false)); got != want { // NaN as NaN
		t.Errorf("counting from r3 on measures\n%+v\nnot as marking throughout\n%+v", got, want)
	}
}

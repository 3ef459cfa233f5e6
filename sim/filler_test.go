package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// elidedWorkload is a random workload of elided content: tool results,
// user turns and a system prompt of sizes about the edges that matter to
// runs of filler (16 bytes, a 160-character preview, a 400-byte summary
// line), with and without facts, probed; and texts with filler written out.
func elidedWorkload(seed uint64, turns int) (trace.Header, []trace.Event) {
	rng := rand.New(rand.NewPCG(seed, 11))
	var evs []trace.Event
	t, n := 0.0, 0
	id := func(p string) string { n++; return fmt.Sprintf("%s%d", p, n) }
	add := func(ev trace.Event) { t += rng.Float64() * 30; ev.T = t; evs = append(evs, ev) }
	size := func() int {
		switch rng.IntN(6) {
		case 0:
			return rng.IntN(40)
		case 1:
			return 28 + rng.IntN(12) // runs about 16 bytes
		case 2:
			return 310 + rng.IntN(40) // runs about 160 bytes
		case 3:
			return 780 + rng.IntN(50) // runs about 400 bytes
		}
		return rng.IntN(9000)
	}
	var facts []trace.Fact
	fact := func() []trace.Fact {
		if rng.IntN(2) == 0 {
			return nil
		}
		var fs []trace.Fact
		for range 1 + rng.IntN(2) {
			f := trace.Fact{ID: id("f"), Text: fmt.Sprintf("value-%d = %x", n, rng.Uint32())}
			fs = append(fs, f)
			facts = append(facts, f)
		}
		return fs
	}
	add(trace.Event{Kind: trace.KindSystem, ID: id("s"), Size: 300 + rng.IntN(3000), Facts: fact()})
	add(trace.Event{Kind: trace.KindTask, ID: id("t"), Text: "task: mind the ~~~~~~~~~~~~~~~~~~~~ marks"})
	tools := []string{"read_file", "bash", "grep"}
	for i := 0; i < turns; i++ {
		switch rng.IntN(6) {
		case 0:
			add(trace.Event{Kind: trace.KindUser, ID: id("u"), Size: size(), Facts: fact()})
		case 1:
			add(trace.Event{Kind: trace.KindUser, ID: id("u"), Text: "see " + strings.Repeat("~", 10+rng.IntN(500)) + " here"})
		default:
			call := trace.ToolCall{ID: id("c"), Name: tools[rng.IntN(len(tools))], Args: json.RawMessage(`{"path":"a.go"}`)}
			add(trace.Event{Kind: trace.KindAssistant, ID: id("a"), ToolCalls: []trace.ToolCall{call}, OutputTokens: 20})
			add(trace.Event{Kind: trace.KindToolResult, ID: id("r"), Tool: call.Name, CallID: call.ID, Size: size(), Facts: fact()})
		}
		if len(facts) > 0 && rng.IntN(3) == 0 {
			f := facts[rng.IntN(len(facts))]
			add(trace.Event{Kind: trace.KindProbe, ID: id("p"), Probe: &trace.Probe{Fact: f.ID, Text: f.Text}})
			add(trace.Event{Kind: trace.KindAssistant, ID: id("a"), Text: "ok", OutputTokens: 5})
		}
	}
	add(trace.Event{Kind: trace.KindAssistant, ID: id("a"), Text: "done", OutputTokens: 5})
	return trace.Header{Schema: trace.Schema, Version: 1, Workload: "elided", Seed: seed}, evs
}

// Stand-ins with encoded runs of filler give, through every policy that
// compacts, truncates or points, exactly the results of stand-ins written
// out (the engine's requests written out too).
func TestEncodedRunsAsWrittenOut(t *testing.T) {
	policies := []string{"regions:coder", "regions:reviewer", "regions:data-analyst", "regions:deep-researcher", "regions:log-analyzer", "flat-compact", "flat"}
	for seed := uint64(1); seed <= 2; seed++ {
		h, evs := elidedWorkload(seed, 250)
		for _, p := range policies {
			for _, w := range []int{8192, 32768, 200000} {
				for k, tok := range []string{"bytes/4", "o200k_base", "bytes/3.5"} {
					if tok == "o200k_base" && (seed > 1 || w > 8192) {
						continue // slow
					}
					prof := testProfile([]string{"anthropic", "openai", "anthropic"}[k])
					prof.Tokenizer = tok
					var out [2]string
					for i, literal := range []bool{false, true} {
						cfg := Config{Policy: p, Model: prof, Window: w, literalRuns: literal}
						res, err := Run(context.Background(), SliceSource(h, evs), cfg)
						if err != nil {
							t.Fatalf("%s %d: %v", p, w, err)
						}
						b, _ := json.Marshal(res)
						out[i] = string(b)
					}
					if out[0] != out[1] {
						t.Errorf("seed %d %s %d %s: encoded runs give\n%s\nwritten out\n%s", seed, p, w, tok, out[0], out[1])
					}
				}
			}
		}
	}
}

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

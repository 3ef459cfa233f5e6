package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// randomWorkload is an agent session: tool calls with results of random
// sizes (some elided, some with text), user turns, facts planted in both and
// probed later.
func randomWorkload(seed uint64, turns int) (trace.Header, []trace.Event) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var evs []trace.Event
	t := 0.0
	n := 0
	id := func(p string) string { n++; return fmt.Sprintf("%s%d", p, n) }
	add := func(ev trace.Event) { t += rng.Float64() * 20; ev.T = t; evs = append(evs, ev) }
	add(trace.Event{Kind: trace.KindSystem, ID: id("s"), Text: "system prompt " + fmt.Sprint(seed)})
	add(trace.Event{Kind: trace.KindTask, ID: id("t"), Text: fmt.Sprintf("task %d: do the thing carefully", seed)})
	type planted struct {
		f   trace.Fact
		src string
		re  *trace.ToolCall
	}
	var facts []planted
	for i := 0; i < turns; i++ {
		switch rng.IntN(5) {
		case 0:
			f := trace.Fact{ID: id("f"), Text: fmt.Sprintf("fact-%d-%x", i, rng.Uint32())}
			uid := id("u")
			add(trace.Event{Kind: trace.KindUser, ID: uid, Text: "remember " + f.Text, Facts: []trace.Fact{f}})
			facts = append(facts, planted{f, uid, nil})
		default:
			call := trace.ToolCall{ID: id("c"), Name: "read_file"}
			add(trace.Event{Kind: trace.KindAssistant, ID: id("a"), ToolCalls: []trace.ToolCall{call}, OutputTokens: 20})
			ev := trace.Event{Kind: trace.KindToolResult, ID: id("r"), Tool: "read_file", CallID: call.ID, Size: 200 + rng.IntN(8000)}
			if rng.IntN(3) == 0 {
				f := trace.Fact{ID: id("f"), Text: fmt.Sprintf("value-%d-%x", i, rng.Uint32())}
				ev.Facts = []trace.Fact{f}
				re := call
				facts = append(facts, planted{f, ev.ID, &re})
			}
			add(ev)
		}
		if len(facts) > 0 && rng.IntN(3) == 0 {
			p := facts[rng.IntN(len(facts))]
			add(trace.Event{Kind: trace.KindProbe, ID: id("p"), Probe: &trace.Probe{Fact: p.f.ID, Text: p.f.Text, Source: p.src, Refetch: p.re}})
			add(trace.Event{Kind: trace.KindAssistant, ID: id("a"), Text: "ok", OutputTokens: 5})
		}
	}
	add(trace.Event{Kind: trace.KindAssistant, ID: id("a"), Text: "done", OutputTokens: 5})
	return trace.Header{Schema: trace.Schema, Version: 1, Workload: "random", Seed: seed}, evs
}

func runRandom(t testing.TB, seed uint64, turns int, cfg Config) *Result {
	t.Helper()
	h, evs := randomWorkload(seed, turns)
	res, err := Run(context.Background(), SliceSource(h, evs), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPropertyUnboundedRecallsAll(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		res := runRandom(t, seed, 120, Config{Policy: "unbounded", Model: testProfile("anthropic"), Window: 4096})
		if got := res.Metrics.Get("fact_recall_pct"); got != 100 && !near(got, 100) {
			t.Errorf("seed %d: unbounded recall %v", seed, got)
		}
		if res.Metrics.Get("evictions") != 0 || res.Metrics.Get("lost_facts") != 0 {
			t.Errorf("seed %d: unbounded evicted or lost", seed)
		}
	}
}

func TestPropertyClairvoyantBound(t *testing.T) {
	eviction := []string{"flat", "flat-keep-system", "flat-clear-tools"}
	for seed := uint64(1); seed <= 30; seed++ {
		for _, w := range []int{8192, 16384, 32768} {
			cfg := Config{Model: testProfile("none"), Window: w, NoRefetch: true}
			cfg.Policy = "clairvoyant"
			best := runRandom(t, seed, 150, cfg).Metrics.Get("fact_recall_pct")
			for _, p := range eviction {
				cfg.Policy = p
				got := runRandom(t, seed, 150, cfg).Metrics.Get("fact_recall_pct")
				if got > best+1e-9 {
					t.Errorf("seed %d window %d: %s recall %.2f > clairvoyant %.2f", seed, w, p, got, best)
				}
			}
		}
	}
}

func TestPropertyDeterministic(t *testing.T) {
	for _, p := range []string{"flat", "flat-compact", "flat-clear-tools", "clairvoyant", "unbounded", "regions:coder"} {
		t.Run(p, func(t *testing.T) {
			cfg := Config{Policy: p, Model: testProfile("openai"), Window: 16384, Seed: 3}
			a := mustJSON(t, runRandom(t, 3, 200, cfg))
			prev := runtime.GOMAXPROCS(1)
			b := mustJSON(t, runRandom(t, 3, 200, cfg))
			runtime.GOMAXPROCS(max(2, prev))
			c := mustJSON(t, runRandom(t, 3, 200, cfg))
			runtime.GOMAXPROCS(prev)
			if a != b || a != c {
				t.Errorf("runs differ:\n%s\n%s\n%s", a, b, c)
			}
		})
	}
}

// Runs share nothing but read-only tables and the BPE codecs: concurrent runs
// (a sweep) give the same results as sequential ones.
func TestPropertyConcurrentRuns(t *testing.T) {
	prof, err := LookupProfile("gpt-5.5") // o200k_base
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Policy: "flat-compact", Model: prof, Window: 16384}
	want := mustJSON(t, runRandom(t, 5, 100, cfg))
	got := make([]string, 4)
	done := make(chan int)
	for i := range got {
		go func() {
			h, evs := randomWorkload(5, 100)
			res, err := Run(context.Background(), SliceSource(h, evs), cfg)
			if err == nil {
				got[i] = mustJSON(t, res)
			}
			done <- i
		}()
	}
	for range got {
		<-done
	}
	for i, g := range got {
		if g != want {
			t.Errorf("concurrent run %d differs", i)
		}
	}
}

// Invariants of every metric, for every policy and cache model, on random
// workloads.
func TestPropertyInvariants(t *testing.T) {
	policies := []string{"flat", "flat-keep-system", "flat-compact", "flat-clear-tools", "unbounded", "clairvoyant", "as-recorded", "regions:coder"}
	for _, model := range []string{"claude-haiku-4.5", "gpt-5.5", "qwen3-coder-vllm"} {
		prof, err := LookupProfile(model)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range policies {
			for seed := uint64(1); seed <= 3; seed++ {
				res := runRandom(t, seed, 60, Config{Policy: p, Model: prof, Window: 32768, Seed: seed})
				m := &res.Metrics
				name := fmt.Sprintf("%s/%s/seed %d", model, p, seed)
				in := m.Get("input_tokens")
				if in != m.Get("cache_read_tokens")+m.Get("cache_write_tokens")+m.Get("uncached_tokens") {
					t.Errorf("%s: input %v != read + write + uncached", name, in)
				}
				for _, k := range []string{"task_retained_pct", "fact_recall_pct", "prefix_stability_pct", "prefix_stability_p10_pct",
					"cache_hit_pct", "waste_pct", "waste_reprefill_pct", "waste_dead_pct", "waste_refetch_pct"} {
					if v := m.Get(k); v < -1e-9 || v > 100+1e-9 {
						t.Errorf("%s: %s = %v out of [0, 100]", name, k, v)
					}
				}
				parts := m.Get("waste_reprefill_pct") + m.Get("waste_dead_pct") + m.Get("waste_refetch_pct")
				if !near(parts, m.Get("waste_pct")) {
					t.Errorf("%s: waste parts %v != waste %v", name, parts, m.Get("waste_pct"))
				}
				if m.Get("prefix_stability_p10_pct") > m.Get("prefix_stability_pct")+1e-9 {
					t.Errorf("%s: p10 above the mean", name)
				}
				if m.Get("peak_request_tokens") > in || m.Get("cost_usd") < 0 || m.Get("virtual_seconds") <= 0 {
					t.Errorf("%s: peak %v, cost %v, time %v", name, m.Get("peak_request_tokens"), m.Get("cost_usd"), m.Get("virtual_seconds"))
				}
				if p != "unbounded" && p != "as-recorded" && p != "regions:coder" && m.Get("peak_request_tokens") > 32768 {
					t.Errorf("%s: peak request %v over the window", name, m.Get("peak_request_tokens"))
				}
			}
		}
	}
}

// onceSink fails a run whose requests list a block twice without the
// policy's warning (Request.repeats), which lets the meter skip looking
// for blocks that left in the unchanged prefix.
type onceSink struct {
	t    *testing.T
	name string
	seen map[*Block]bool
}

func (s *onceSink) Request(r RequestSample) {
	if r.Request.repeats {
		return
	}
	clear(s.seen)
	for i, b := range r.Request.Blocks {
		if s.seen[b] {
			s.t.Fatalf("%s request %d: block %d (%s) listed twice without Request.repeats", s.name, r.Index, i, b.ID)
		}
		s.seen[b] = true
	}
}

func TestPropertyBlocksListedOnceUnlessRepeating(t *testing.T) {
	for _, pol := range []string{"flat", "flat-keep-system", "flat-compact", "flat-clear-tools", "unbounded", "clairvoyant"} {
		for _, w := range []int{4096, 32768} {
			s := &onceSink{t: t, name: fmt.Sprintf("%s %d", pol, w), seen: map[*Block]bool{}}
			h, evs := randomWorkload(7, 300)
			if _, err := Run(context.Background(), SliceSource(h, evs), Config{Policy: pol, Model: testProfile("anthropic"), Window: w, Series: s}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

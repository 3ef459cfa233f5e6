package sim

import (
	"context"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

func TestEventQueueOrder(t *testing.T) {
	var q eventQueue
	for i, due := range []float64{5, 1, 5, 3, 1} {
		q = append(q, queued{due: due, seq: uint64(i), ev: &trace.Event{ID: string(rune('a' + i))}})
	}
	q.sort()
	got := ""
	for _, it := range q {
		got += it.ev.ID
	}
	// By time, ties in insertion order.
	if got != "bedac" {
		t.Errorf("order %s, want bedac", got)
	}
}

// Parallel tool calls overlap: the next inference waits for the slowest
// result, not the sum. User think time comes after what precedes it.
func TestLoopLatency(t *testing.T) {
	prof := testProfile("none") // 0.5 s base, 1,000 tok/s prefill, 100 tok/s decode
	b := (&tb{}).task("t", 100)
	b.add(trace.Event{Kind: trace.KindAssistant, ID: "a1", OutputTokens: 100,
		ToolCalls: []trace.ToolCall{{ID: "c1", Name: "bash"}, {ID: "c2", Name: "bash"}}})
	b.add(trace.Event{Kind: trace.KindToolResult, ID: "r1", Tool: "bash", CallID: "c1", Size: 400, Latency: 3})
	b.add(trace.Event{Kind: trace.KindToolResult, ID: "r2", Tool: "bash", CallID: "c2", Size: 400, Latency: 5})
	b.asst("a2", 1, 100)
	b.add(trace.Event{Kind: trace.KindUser, ID: "u", Text: text("u", 100), Latency: 10})
	b.asst("a3", 1, 100)
	rec := &recorder{}
	res := run(t, b, Config{Policy: "unbounded", Model: prof, Series: rec})
	// r1 (t=0): ttft 0.5 + 100/1000 = 0.6, decode 1 s -> 1.6.
	// Results at 1.6 + 5 = 6.6 (the slower one).
	// r2: tokens 100 + a1 + 100 + 100; a1 is two tool_use tags.
	a1 := float64(countText(mustTok(t), assistantText(&b.evs[1])))
	r2tok := 300 + a1
	t2 := 6.6 + 0.5 + r2tok/1000 + 1
	// The user thinks 10 s after the reply: t2 + 10.
	r3tok := r2tok + 1 + 100
	t3 := t2 + 10 + 0.5 + r3tok/1000 + 1
	if len(rec.s) != 3 || !near(rec.s[1].Time, 6.6) || !near(rec.s[2].Time, t2+10) {
		t.Fatalf("request times %+v, want 0, 6.6, %v", rec.s, t2+10)
	}
	checkMetrics(t, res.Metrics, map[string]float64{"virtual_seconds": t3})
}

// Without explicit latencies, the recorded times give them.
func TestLoopRecordedTimes(t *testing.T) {
	b := &tb{}
	b.task("t", 10)
	b.t = 10
	b.call("a1", "c1", 1) // recorded at 10; the simulator models its own inference
	b.t = 14
	b.result("r1", "c1", 10) // 4 s of tool time after the call
	b.t = 100
	b.asst("a2", 1, 0)
	rec := &recorder{}
	run(t, b, Config{Policy: "unbounded", Model: testProfile("none"), Series: rec})
	// r1 at 0 (the task is at t=0), lasts 0.5 + 10/1000 + 1/100 = 0.52;
	// r1's result arrives 4 s later.
	if len(rec.s) != 2 || !near(rec.s[1].Time, 0.52+4) {
		t.Fatalf("times %+v, want the second at %v", rec.s, 0.52+4)
	}
}

func mustTok(t *testing.T) Tokenizer {
	tok, err := NewTokenizer("bytes/4")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// reusingSource yields its events through one Event, as a trace.Reader does.
type reusingSource struct {
	sliceSource
	ev trace.Event
}

func (s *reusingSource) Event() *trace.Event {
	s.ev = s.sliceSource.evs[s.i]
	return &s.ev
}

// A source that reuses its event gives the results of one that does not: the
// run copies what it queues and keeps.
func TestReusingSource(t *testing.T) {
	h, evs := randomWorkload(5, 300)
	for _, p := range []string{"flat", "regions:coder", "as-recorded"} {
		cfg := Config{Policy: p, Model: testProfile("anthropic"), Window: 8192}
		a, err := Run(context.Background(), SliceSource(h, evs), cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(context.Background(), &reusingSource{sliceSource: sliceSource{h: h, evs: evs, i: -1}}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if x, y := mustJSON(t, a), mustJSON(t, b); x != y {
			t.Errorf("%s: results differ:\n%s\n%s", p, x, y)
		}
	}
}

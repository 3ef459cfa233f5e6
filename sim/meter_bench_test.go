package sim

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// recordingPolicy keeps a copy of every request its policy makes, with
// what the policy reported into the env while making it.
type recordingPolicy struct {
	policy
	env  *env
	reqs []recordedRequest
}

type recordedRequest struct {
	req                                   *Request
	evictions, compactions, sumIn, sumOut int
}

func (p *recordingPolicy) request() *Request {
	req := p.policy.request()
	e := p.env
	p.reqs = append(p.reqs, recordedRequest{&Request{Blocks: slices.Clone(req.Blocks), Marks: slices.Clone(req.Marks), same: req.same,
		gone: req.gone, keptFrom: req.keptFrom, tracked: req.tracked},
		e.evictions, e.compactions, e.sumIn, e.sumOut})
	return req
}

// replayPolicy makes the requests a recordingPolicy kept, in order.
type replayPolicy struct {
	env  *env
	reqs []recordedRequest
	next int
}

func (p *replayPolicy) observe(*trace.Event) {}

func (p *replayPolicy) request() *Request {
	r := &p.reqs[min(p.next, len(p.reqs)-1)]
	p.next++
	e := p.env
	e.evictions, e.compactions, e.sumIn, e.sumOut = r.evictions, r.compactions, r.sumIn, r.sumOut
	return r.req
}

// BenchmarkMeter is the cost of a run without its policy's: a policy's
// requests are recorded once, then replayed through the runner, so that
// the event queue, the meter, the probes and the cache model are all that
// is timed. The replay must measure what the run did. Reported per event,
// as BenchmarkRun.
func BenchmarkMeter(b *testing.B) {
	h, evs := randomWorkload(1, 5200)
	evs = evs[:10000]
	prof, err := LookupProfile("claude-sonnet-5.5")
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{"flat", "flat-compact", "flat-clear-tools", "regions:coder"} {
		for _, w := range []int{200000, 1000000} {
			b.Run(fmt.Sprintf("policy=%s/window=%d", p, w), func(b *testing.B) {
				cfg := Config{Policy: p, Model: prof, Window: w}
				e, rec, want := meterRun(b, h, evs, cfg, nil)
				var blocks []*Block
				seen := map[*Block]bool{}
				for _, req := range rec.reqs {
					for _, bl := range req.req.Blocks {
						if !seen[bl] {
							seen[bl] = true
							blocks = append(blocks, bl)
						}
					}
				}
				reset := func() {
					for _, bl := range blocks {
						bl.since, bl.places, bl.pendingTokens, bl.pendingReprefill = -1, 0, 0, 0
						bl.taskTokens, bl.sent, bl.taskState, bl.sigState, bl.listed = 0, false, 0, 0, 0
					}
				}
				reset()
				if _, _, got := meterRun(b, h, evs, cfg, &replayPolicy{reqs: rec.reqs}, e); mustJSON(b, got) != mustJSON(b, want) {
					b.Fatalf("the replay measures differently:\n%s\n%s", mustJSON(b, got), mustJSON(b, want))
				}
				cpu0 := cpuSeconds()
				for b.Loop() {
					b.StopTimer()
					reset()
					b.StartTimer()
					meterRun(b, h, evs, cfg, &replayPolicy{reqs: rec.reqs}, e)
				}
				events := float64(len(evs)) * float64(b.N)
				if cpu := cpuSeconds() - cpu0; cpu > 0 {
					b.ReportMetric(events/cpu, "events/cpu-s")
				}
			})
		}
	}
}

// meterRun runs evs as Run does, through pol if not nil (with the content
// of a recorded env), else through cfg's policy, recorded; it returns the
// run's env, the recording and the metrics.
func meterRun(b *testing.B, h trace.Header, evs []trace.Event, cfg Config, pol policy, recorded ...*env) (*env, *recordingPolicy, *Metrics) {
	tok, err := NewTokenizer(cfg.Model.Tokenizer)
	if err != nil {
		b.Fatal(err)
	}
	cm, err := newCacheModel(cfg.Model, nil)
	if err != nil {
		b.Fatal(err)
	}
	e := &env{tok: freshTokenizer(tok), prof: cfg.Model, window: cfg.Window,
		content: map[string]int32{}, factIdx: map[string][]*Block{}}
	var rec *recordingPolicy
	if pol == nil {
		spec, err := ParsePolicy(cfg.Policy)
		if err != nil {
			b.Fatal(err)
		}
		inner, err := newPolicy(spec, e, nil)
		if err != nil {
			b.Fatal(err)
		}
		rec = &recordingPolicy{policy: inner, env: e}
		pol = rec
	} else {
		e.content, e.factIdx = recorded[0].content, recorded[0].factIdx
		e.stats, e.nstat = recorded[0].stats, recorded[0].nstat // what content numbers
		pol.(*replayPolicy).env = e
	}
	r := &runner{cfg: cfg, env: e, pol: pol, prof: cfg.Model}
	r.m.init(e, cm)
	if err := r.run(context.Background(), SliceSource(h, evs)); err != nil {
		b.Fatal(err)
	}
	var m Metrics
	r.m.finish(&m, r.clock)
	return e, rec, &m
}

package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads/synthetic"
)

// testProfile is a model with round numbers: bytes/4 tokens, $1/M input,
// $2/M output, 1,000 prefill and 100 decode tokens per second.
func testProfile(cache string) Profile {
	return Profile{Name: "test", Window: 100000, MaxOutput: 100, Tokenizer: "bytes/4", Cache: cache,
		CacheMin: 100, CacheTTL: 600, CacheCap: 1 << 20,
		Input: 1, Output: 2, CacheWrite5m: 1.25, CacheWrite1h: 2, CacheRead: 0.1,
		TTFTBase: 0.5, PrefillTPS: 1000, DecodeTPS: 100}
}

// text returns content of exactly tokens×4 bytes that starts with id, so that
// different ids differ from their first bytes.
func text(id string, tokens int) string {
	s := id + ":"
	return s + strings.Repeat(".", tokens*4-len(s))
}

type tb struct {
	evs []trace.Event
	t   float64
}

func (b *tb) add(ev trace.Event) *tb {
	ev.T = b.t
	b.evs = append(b.evs, ev)
	return b
}
func (b *tb) system(id string, tok int) *tb {
	return b.add(trace.Event{Kind: trace.KindSystem, ID: id, Text: text(id, tok)})
}
func (b *tb) task(id string, tok int) *tb {
	return b.add(trace.Event{Kind: trace.KindTask, ID: id, Text: text(id, tok)})
}
func (b *tb) user(id string, tok int, facts ...trace.Fact) *tb {
	return b.add(trace.Event{Kind: trace.KindUser, ID: id, Text: text(id, tok), Facts: facts})
}
func (b *tb) asst(id string, tok, out int) *tb {
	return b.add(trace.Event{Kind: trace.KindAssistant, ID: id, Text: text(id, tok), OutputTokens: out})
}
func (b *tb) call(id, callID string, out int) *tb {
	return b.add(trace.Event{Kind: trace.KindAssistant, ID: id, OutputTokens: out,
		ToolCalls: []trace.ToolCall{{ID: callID, Name: "read_file"}}})
}
func (b *tb) result(id, callID string, tok int, facts ...trace.Fact) *tb {
	return b.add(trace.Event{Kind: trace.KindToolResult, ID: id, Tool: "read_file", CallID: callID, Size: tok * 4, Facts: facts})
}
func (b *tb) probe(id string, f trace.Fact, source string, refetch bool) *tb {
	p := &trace.Probe{Fact: f.ID, Text: f.Text, Source: source}
	if refetch {
		p.Refetch = &trace.ToolCall{ID: id + "-call", Name: "read_file"}
	}
	return b.add(trace.Event{Kind: trace.KindProbe, ID: id, Probe: p})
}

func run(t testing.TB, b *tb, cfg Config) *Result {
	t.Helper()
	for i := range b.evs {
		if err := b.evs[i].Validate(); err != nil {
			t.Fatalf("event %s: %v", b.evs[i].ID, err)
		}
	}
	res, err := Run(context.Background(), SliceSource(trace.Header{Schema: trace.Schema, Version: 1, Workload: "test"}, b.evs), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

func checkMetrics(t *testing.T, m Metrics, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		if got := m.Get(k); !near(got, w) {
			t.Errorf("%s = %v, want %v", k, got, w)
		}
	}
}

// recorder is a SeriesSink that keeps the samples, and the first block of
// the last request.
type recorder struct {
	s    []RequestSample
	last *Block
}

func (r *recorder) Request(s RequestSample) {
	r.s = append(r.s, s)
	r.last = nil
	if s.Request != nil && len(s.Request.Blocks) > 0 {
		b := *s.Request.Blocks[0] // the run reuses its blocks' memory after it ends
		r.last = &b
	}
}

func ids(req *Request) string {
	var out []string
	for _, b := range req.Blocks {
		out = append(out, b.ID)
	}
	return strings.Join(out, " ")
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var _ = fmt.Sprint

// testEnv is a run's environment for tests that drive a policy or the meter
// directly: bytes/4, a profile without a cache, the given window.
func testEnv(t *testing.T, window int) *env {
	t.Helper()
	return &env{tok: mustTok(t), prof: testProfile("none"), window: window, content: map[string]int32{}, factIdx: map[string][]*Block{}}
}

// syntheticLoad is the built-in synthetic workload name, at seed 2.
func syntheticLoad(t *testing.T, name string) (trace.Header, []trace.Event) {
	t.Helper()
	p, err := synthetic.Load(name, "")
	if err != nil {
		t.Fatal(err)
	}
	var evs []trace.Event
	if err := synthetic.Generate(p, 2, func(ev *trace.Event) error { evs = append(evs, *ev); return nil }); err != nil {
		t.Fatal(err)
	}
	return synthetic.Header(p, 2), evs
}

package synthetic

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// Header returns the trace header of a generated workload.
func Header(p Params, seed uint64) trace.Header {
	c := p.base()
	return trace.Header{
		Source:   "synthetic:" + p.Workload(),
		Workload: p.Workload(),
		Seed:     seed,
		Meta: map[string]string{
			"params_sha256": hashParams(p),
			"scale":         strconv.FormatFloat(c.Scale, 'g', -1, 64),
		},
	}
}

// Generate generates the workload p with the given seed, passing each event
// to emit in order; emit may keep the event. It stops at emit's first error
// and returns it. The same p and seed give the same events.
func Generate(p Params, seed uint64, emit func(*trace.Event) error) error {
	g := &gen{
		rng:   rand.New(rand.NewPCG(seed, 0x5eed_c0de_c7a5_0001)),
		seed:  seed,
		c:     p.base(),
		emit:  emit,
		used:  make(map[string]bool),
		known: make(map[string]bool),
		tools: p.tools(),
	}
	if err := p.generate(g); err != nil {
		return fmt.Errorf("%s: %w", p.Workload(), err)
	}
	return nil
}

// gen is the state of one generation: the clock, the ids, the position in
// tokens and the facts planted so far.
type gen struct {
	rng   *rand.Rand
	seed  uint64
	c     *Common
	emit  func(*trace.Event) error
	t     float64 // virtual seconds
	pos   int     // tokens emitted so far, at bytes/4
	seq   int     // event sequence, for ids
	calls int     // tool call sequence, for call ids
	facts []*fact
	used  map[string]bool // fact texts, kept distinct
	known map[string]bool // ids of facts already registered
	nfact int
	tools []string // the tools the workload calls, for the system prompt
}

// fact is a planted fact and what the probes need to know about it.
type fact struct {
	trace.Fact
	source  string          // id of the event that carried it first
	pos     int             // token position at which it arrived
	ref     string          // where it came from: a path, URL, "user", "task"
	refetch *trace.ToolCall // nil: cannot be fetched again
	task    bool            // stated in the task: probed at the end
	noProbe bool            // listed on its event but never probed
	probed  int
}

// tokens is the token estimate of n bytes (bytes/4 rounded up, the engine's
// default counter).
func tokens(n int) int { return (n + 3) / 4 }

// newFact reserves a fact text, returning false if it was already used.
func (g *gen) newFact(text string) (trace.Fact, bool) {
	if g.used[text] {
		return trace.Fact{}, false
	}
	g.used[text] = true
	g.nfact++
	return trace.Fact{ID: "f" + strconv.Itoa(g.nfact), Text: text}, true
}

// plant makes a fact from the first distinct text mk returns; mk is given
// the attempt number so it can widen its choices. Should a template run out
// of distinct texts, the fact's number makes the text distinct, so plant
// always ends; callers build content from the returned Text.
func (g *gen) plant(mk func(attempt int) string) trace.Fact {
	for i := 0; ; i++ {
		text := mk(i)
		if i >= 64 {
			text += " (#" + strconv.Itoa(g.nfact+1) + ")"
		}
		if f, ok := g.newFact(text); ok {
			return f
		}
	}
}

func (g *gen) id(prefix string) string {
	g.seq++
	return prefix + strconv.Itoa(g.seq)
}

func (g *gen) out(e *trace.Event) error {
	n := e.Bytes()
	for _, c := range e.ToolCalls {
		n += len(c.Name) + len(c.Args)
	}
	if e.Op != nil {
		n += len(e.Op.Args)
	}
	g.pos += tokens(n)
	return g.emit(e)
}

// register records facts carried by the event just emitted. A fact met again
// (a file read twice) keeps its first source.
func (g *gen) register(src string, facts []trace.Fact, ref string, refetch *trace.ToolCall, task, noProbe bool) {
	for _, f := range facts {
		if g.known[f.ID] {
			continue
		}
		g.known[f.ID] = true
		g.facts = append(g.facts, &fact{Fact: f, source: src, pos: g.pos, ref: ref, refetch: refetch, task: task, noProbe: noProbe})
	}
}

// taskWithFacts sends the task: intro, then the facts listed under heading
// when there are any.
func (g *gen) taskWithFacts(intro, heading string, facts []trace.Fact) error {
	if len(facts) == 0 {
		return g.task(intro, facts)
	}
	var b strings.Builder
	b.WriteString(intro)
	b.WriteString("\n\n" + heading + ":\n")
	for _, f := range facts {
		b.WriteString("- " + f.Text + "\n")
	}
	return g.task(b.String(), facts)
}

func (g *gen) task(text string, facts []trace.Fact) error {
	all := append([]trace.Fact{{ID: "task", Text: text}}, facts...)
	e := &trace.Event{Kind: trace.KindTask, ID: "task", T: g.t, Text: text, Facts: all}
	if err := g.out(e); err != nil {
		return err
	}
	g.register(e.ID, all, "task", nil, true, false)
	if g.c.SystemBytes > 0 {
		return g.out(&trace.Event{Kind: trace.KindSystem, ID: g.id("y"), T: g.t, Text: systemPrompt(g.tools, g.c.SystemBytes)})
	}
	return nil
}

func (g *gen) stage(to, transition string) error {
	return g.out(&trace.Event{Kind: trace.KindStage, ID: g.id("s"), T: g.t, Stage: &trace.Stage{To: to, Transition: transition}})
}

func (g *gen) user(text string, facts []trace.Fact) error {
	think := g.c.ThinkSeconds.Draw(g.rng)
	g.t = round3(g.t + think)
	e := &trace.Event{Kind: trace.KindUser, ID: g.id("u"), T: g.t, Text: text, Facts: facts, Latency: round3(think)}
	if err := g.out(e); err != nil {
		return err
	}
	g.register(e.ID, facts, "user", nil, false, false)
	return nil
}

// assistant emits an assistant turn. Its time is a nominal inference time
// (the simulator models its own from the model profile).
func (g *gen) assistant(text string, calls []trace.ToolCall) error {
	out := g.c.OutputTokens.DrawInt(g.rng)
	out = max(out, tokens(len(text)))
	g.t = round3(g.t + 1 + float64(out)/80)
	return g.out(&trace.Event{Kind: trace.KindAssistant, ID: g.id("a"), T: g.t, Text: text, ToolCalls: calls, OutputTokens: out})
}

// call returns a new tool call.
func (g *gen) call(name string, args any) trace.ToolCall {
	g.calls++
	b, err := json.Marshal(args)
	if err != nil {
		panic(err) // args are maps of strings and numbers built here
	}
	return trace.ToolCall{ID: "call_" + strconv.Itoa(g.calls), Name: name, Args: b}
}

// toolResult emits the result of call. refetch says whether calling it again
// would fetch the facts again.
//
// start is when the call was issued: calls of one turn run in parallel, so
// each result arrives its latency after start (or after the previous result,
// since a trace's times never go back).
func (g *gen) toolResult(start float64, call trace.ToolCall, text string, facts []trace.Fact, ref string, refetch, isErr bool) error {
	lat, _ := g.c.Latency.of(call.Name)
	d := lat.Draw(g.rng)
	g.t = round3(math.Max(g.t, start+d))
	e := &trace.Event{Kind: trace.KindToolResult, ID: g.id("r"), T: g.t, Tool: call.Name, CallID: call.ID,
		Text: text, Facts: facts, IsError: isErr, Latency: round3(d)}
	if g.c.ElideOverBytes > 0 && len(text) > g.c.ElideOverBytes {
		e.Text, e.Size = "", len(text)
	}
	if err := g.out(e); err != nil {
		return err
	}
	var rc *trace.ToolCall
	if refetch {
		c := call
		rc = &c
	}
	g.register(e.ID, facts, ref, rc, false, false)
	return nil
}

// contextOp emits a context tool call writing content to region. facts are
// new facts the content carries, listed but never probed (repeated facts are
// not listed: their probes name where they first arrived).
func (g *gen) contextOp(tool, region, content string, facts []trace.Fact) error {
	args, err := json.Marshal(map[string]string{"region": region, "content": content})
	if err != nil {
		return err
	}
	e := &trace.Event{Kind: trace.KindContextOp, ID: g.id("c"), T: g.t, Facts: facts, Op: &trace.ContextOp{Tool: tool, Args: args}}
	if err := g.out(e); err != nil {
		return err
	}
	// Only a region policy applies context ops; a flat list never holds
	// their content, so a probe on it would measure the trace, not a policy.
	g.register(e.ID, facts, region, nil, false, true)
	return nil
}

// probeRound emits up to n probes for facts at ages spread log-evenly from
// the most recent fact to the oldest, preferring facts probed least; with
// task set it first probes every fact of the task. Probes must be followed by
// an assistant event: they ask about the next inference.
func (g *gen) probeRound(n int, task bool) error {
	if task {
		for _, f := range g.facts {
			if f.task {
				if err := g.probe(f); err != nil {
					return err
				}
			}
		}
	}
	var cands []*fact
	for _, f := range g.facts {
		if !f.task && !f.noProbe && f.pos < g.pos {
			cands = append(cands, f)
		}
	}
	n = min(n, len(cands))
	if n == 0 {
		return nil
	}
	age := func(f *fact) float64 { return float64(g.pos - f.pos) }
	lo, hi := math.Inf(1), 0.0
	for _, f := range cands {
		lo, hi = math.Min(lo, age(f)), math.Max(hi, age(f))
	}
	lo = math.Max(lo, 1)
	hi = math.Max(hi, lo)
	chosen := make(map[*fact]bool, n)
	var picks []*fact
	for i := range n {
		frac := 0.5
		if n > 1 {
			frac = float64(i) / float64(n-1)
		}
		target := math.Log(lo) + frac*(math.Log(hi)-math.Log(lo))
		var best *fact
		bestScore := math.Inf(1)
		for _, f := range cands {
			if chosen[f] {
				continue
			}
			s := math.Abs(math.Log(math.Max(age(f), 1))-target) + 0.5*float64(f.probed)
			if s < bestScore {
				best, bestScore = f, s
			}
		}
		chosen[best] = true
		picks = append(picks, best)
	}
	// Oldest first, as a reader would meet them.
	for i := len(picks) - 1; i >= 0; i-- {
		if err := g.probe(picks[i]); err != nil {
			return err
		}
	}
	return nil
}

func (g *gen) probe(f *fact) error {
	f.probed++
	return g.out(&trace.Event{Kind: trace.KindProbe, ID: g.id("p"), T: g.t, Probe: &trace.Probe{
		Fact: f.ID, Text: f.Text, Source: f.source, Refetch: f.refetch,
	}})
}

// factsSince returns the facts planted after the first `from` facts, newest
// last, excluding the task's.
func (g *gen) factsSince(from int) []*fact {
	var fs []*fact
	for _, f := range g.facts[from:] {
		if !f.task {
			fs = append(fs, f)
		}
	}
	return fs
}

// scaled returns n×scale rounded, at least min.
func (g *gen) scaled(n int, least int) int {
	return max(int(math.Round(float64(n)*g.c.Scale)), least)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// Package needle generates the built-in "needle" workload of ctxsim run:
// facts planted at chosen depths (tokens before the question), then probed
// at the end, in the manner of Needle in a Haystack (PEERS.md §C.5). It is
// deliberately small; the workloads package has the full generators.
package needle

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// Params shape the workload.
type Params struct {
	Seed uint64
	// Depths are the approximate depths (tokens at 4 bytes per token between
	// a fact's arrival and the probes) at which facts are planted.
	Depths []int
	// TurnTokens is the mean size of one tool result, in tokens.
	TurnTokens int
}

// Default is the workload `ctxsim run --workload needle` uses.
func Default(seed uint64) Params {
	return Params{Seed: seed, Depths: []int{1000, 3000, 6000, 12000, 24000, 48000, 96000, 160000}, TurnTokens: 2000}
}

// Generate builds the trace. Odd-numbered facts are stated by the user (they
// cannot be fetched again); even-numbered ones arrive in tool results.
func Generate(p Params) (trace.Header, []trace.Event, error) {
	if len(p.Depths) == 0 || p.TurnTokens <= 0 {
		return trace.Header{}, nil, fmt.Errorf("needle: want depths and a positive turn size")
	}
	maxDepth := 0
	for _, d := range p.Depths {
		if d < 0 {
			return trace.Header{}, nil, fmt.Errorf("needle: negative depth %d", d)
		}
		maxDepth = max(maxDepth, d)
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x6e656564))
	h := trace.Header{Schema: trace.Schema, Version: trace.Version, Source: "synthetic:needle", Workload: "needle", Seed: p.Seed}
	var evs []trace.Event
	t := 0.0
	id := 0
	next := func() string { id++; return fmt.Sprintf("e%d", id) }
	add := func(ev trace.Event) { ev.T = t; evs = append(evs, ev) }
	add(trace.Event{Kind: trace.KindSystem, ID: next(), Text: "You are a careful coding agent. Use the tools to read files and answer precisely."})
	add(trace.Event{Kind: trace.KindTask, ID: next(), Text: "Audit the repository and report every configuration value you are told about, exactly."})

	type planted struct {
		fact    trace.Fact
		source  string
		refetch *trace.ToolCall
	}
	var facts []planted
	// Walk from the deepest point to the probes: remaining = tokens still to
	// come before the probes; plant a fact when remaining crosses a depth.
	remaining := maxDepth + p.TurnTokens
	pending := append([]int(nil), p.Depths...)
	turn := 0
	for remaining > 0 {
		turn++
		size := int(float64(p.TurnTokens*4) * (0.5 + rng.Float64()))
		var fact *trace.Fact
		for i, d := range pending {
			if d >= remaining-size/4 {
				f := trace.Fact{ID: fmt.Sprintf("f%d", len(facts)+1), Text: fmt.Sprintf("setting_%d = %08x", len(facts)+1, rng.Uint32())}
				fact = &f
				pending = append(pending[:i], pending[i+1:]...)
				break
			}
		}
		t += 2 + rng.Float64()*3
		if fact != nil && len(facts)%2 == 1 {
			// The user states the fact.
			uid := next()
			add(trace.Event{Kind: trace.KindUser, ID: uid, Text: "Note: " + fact.Text + ". Keep it in mind.", Facts: []trace.Fact{*fact}})
			facts = append(facts, planted{fact: *fact, source: uid})
			fact = nil
		}
		call := trace.ToolCall{ID: fmt.Sprintf("c%d", turn), Name: "read_file", Args: json.RawMessage(fmt.Sprintf(`{"path":"src/file%d.go"}`, turn))}
		add(trace.Event{Kind: trace.KindAssistant, ID: next(), Text: fmt.Sprintf("Reading src/file%d.go.", turn), ToolCalls: []trace.ToolCall{call}, OutputTokens: 40})
		t += 0.2 + rng.Float64()
		ev := trace.Event{Kind: trace.KindToolResult, ID: next(), Tool: "read_file", CallID: call.ID, Size: size, Latency: 0}
		if fact != nil {
			ev.Facts = []trace.Fact{*fact}
			re := call
			re.ID = call.ID + "-again"
			facts = append(facts, planted{fact: *fact, source: ev.ID, refetch: &re})
		}
		add(ev)
		remaining -= size / 4
	}
	// Shallowest first, so that a refetch of a deep fact cannot push a
	// shallow one out before it is asked for.
	for i := len(facts) - 1; i >= 0; i-- {
		f := facts[i]
		t += 1
		add(trace.Event{Kind: trace.KindProbe, ID: next(), Probe: &trace.Probe{Fact: f.fact.ID, Text: f.fact.Text, Source: f.source, Refetch: f.refetch}})
		add(trace.Event{Kind: trace.KindAssistant, ID: next(), Text: "The value is " + f.fact.Text + ".", OutputTokens: 20})
	}
	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			return h, nil, fmt.Errorf("needle: event %s: %w", evs[i].ID, err)
		}
	}
	return h, evs, nil
}

// Package needle generates the built-in "needle" workload of ctxsim run:
// facts planted at chosen depths (tokens before the question), then probed
// at the end, in the manner of Needle in a Haystack (PEERS.md §C.5). It is
// deliberately small; the workloads package has the full generators.
package needle

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"

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
	// Lay out the turns first, then plant each fact in the turn whose
	// following content is closest to the wanted depth.
	var sizes []int // bytes of each turn's tool result
	for total := 0; total < (maxDepth+p.TurnTokens)*4; {
		size := int(float64(p.TurnTokens*4) * (0.5 + rng.Float64()))
		sizes = append(sizes, size)
		total += size
	}
	after := make([]int, len(sizes)) // tokens after turn i's result
	for i := len(sizes) - 2; i >= 0; i-- {
		after[i] = after[i+1] + sizes[i+1]/4
	}
	plantAt := map[int]int{} // turn -> index into depths
	depths := append([]int(nil), p.Depths...)
	sort.Sort(sort.Reverse(sort.IntSlice(depths)))
	for di, d := range depths {
		best := -1
		for i := range sizes {
			if _, taken := plantAt[i]; taken {
				continue
			}
			if best < 0 || abs(after[i]-d) < abs(after[best]-d) {
				best = i
			}
		}
		if best < 0 {
			return trace.Header{}, nil, fmt.Errorf("needle: %d depths need more turns than %d", len(depths), len(sizes))
		}
		plantAt[best] = di
	}
	var facts []planted
	for turn, size := range sizes {
		t += 2 + rng.Float64()*3
		call := trace.ToolCall{ID: fmt.Sprintf("c%d", turn+1), Name: "read_file", Args: json.RawMessage(fmt.Sprintf(`{"path":"src/file%d.go"}`, turn+1))}
		add(trace.Event{Kind: trace.KindAssistant, ID: next(), Text: fmt.Sprintf("Reading src/file%d.go.", turn+1), ToolCalls: []trace.ToolCall{call}, OutputTokens: 40})
		t += 0.2 + rng.Float64()
		ev := trace.Event{Kind: trace.KindToolResult, ID: next(), Tool: "read_file", CallID: call.ID, Size: size}
		_, plant := plantAt[turn]
		var fact trace.Fact
		if plant {
			fact = trace.Fact{ID: fmt.Sprintf("f%d", len(facts)+1), Text: fmt.Sprintf("setting_%d = %08x", len(facts)+1, rng.Uint32())}
		}
		if plant && len(facts)%2 == 0 {
			ev.Facts = []trace.Fact{fact}
			re := call
			re.ID = call.ID + "-again"
			facts = append(facts, planted{fact: fact, source: ev.ID, refetch: &re})
		}
		add(ev)
		if plant && len(ev.Facts) == 0 {
			// The user states the fact, right after this turn's result.
			uid := next()
			add(trace.Event{Kind: trace.KindUser, ID: uid, Text: "Note: " + fact.Text + ". Keep it in mind.", Facts: []trace.Fact{fact}})
			facts = append(facts, planted{fact: fact, source: uid})
		}
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

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

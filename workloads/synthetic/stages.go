package synthetic

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// world is what a stage-based workload models: a repository, the web, a set
// of logs. It serves tool calls and writes the user's and workers' words.
type world interface {
	// tool performs one call of the named tool at a global step index.
	tool(g *gen, name string, step int) (step, error)
	// userTurn returns the assistant's words that prompt a user turn at the
	// end of a stage, the user's answer and the facts the answer states.
	userTurn(g *gen, stage string) (ask, answer string, facts []trace.Fact)
	// worker returns one fan-out worker's findings and their new facts.
	worker(g *gen, i int, bytes int) (string, []trace.Fact)
	// final returns the agent's closing words.
	final(g *gen) string
}

// step is one tool call and its result.
type step struct {
	say     string // the assistant's words before the call
	call    trace.ToolCall
	text    string
	facts   []trace.Fact
	ref     string // path or URL the facts came from
	refetch bool   // calling again fetches the same facts
	isErr   bool
}

// runStages runs an agent through stages: for each stage a stage event, its
// tool steps (with probe rounds every probes.Every steps), its context ops
// and its user turns; then the final probe round and the closing turn.
func (g *gen) runStages(stages []Stage, probes Probes, w world) error {
	n := 0 // tool calls so far
	nextProbe := probes.Every
	afterFanOut := false
	for i, st := range stages {
		tr := st.Transition
		if tr == "" {
			tr = st.Name
		}
		if i == 0 || afterFanOut {
			tr = ""
		}
		if err := g.stage(st.Name, tr); err != nil {
			return err
		}
		from := len(g.facts)
		if st.FanOut != nil {
			if err := g.fanOut(st.FanOut, w); err != nil {
				return err
			}
			afterFanOut = true
			continue
		}
		afterFanOut = false
		keys := slices.Sorted(maps.Keys(st.Tools))
		steps := 0
		if st.Steps > 0 {
			steps = g.scaled(st.Steps, 1)
		}
		for done := 0; done < steps; {
			if probes.Every > 0 && n >= nextProbe {
				if err := g.probeRound(probes.PerRound, false); err != nil {
					return err
				}
				for nextProbe <= n {
					nextProbe += probes.Every
				}
			}
			// One turn: usually one call, sometimes a batch of 2 to 4 calls
			// of one tool at once (parallel reads, fetches).
			k := 1
			if g.rng.Float64() < st.ParallelShare {
				k = min(2+g.rng.IntN(3), steps-done)
			}
			tool := pickWeighted(g.rng, keys, st.Tools)
			batch := make([]step, k)
			calls := make([]trace.ToolCall, k)
			for j := range batch {
				s, err := w.tool(g, tool, n+j)
				if err != nil {
					return err
				}
				if g.rng.Float64() < g.c.ErrorShare {
					s = failed(g, s)
				}
				batch[j], calls[j] = s, s.call
			}
			if err := g.assistant(batch[0].say, calls); err != nil {
				return err
			}
			start := g.t
			for _, s := range batch {
				if err := g.toolResult(start, s.call, s.text, s.facts, s.ref, s.refetch, s.isErr); err != nil {
					return err
				}
			}
			n += k
			done += k
		}
		for _, op := range st.Ops {
			if err := g.notes(st.Name, op, g.factsSince(from)); err != nil {
				return err
			}
		}
		for range st.UserTurns {
			ask, answer, facts := w.userTurn(g, st.Name)
			if err := g.assistant(ask, nil); err != nil {
				return err
			}
			if err := g.user(answer, facts); err != nil {
				return err
			}
		}
	}
	if err := g.probeRound(probes.Final, true); err != nil {
		return err
	}
	return g.assistant(w.final(g), nil)
}

// notes emits a context op whose content repeats up to op.Notes of the
// stage's newest facts, as an agent's notes would.
func (g *gen) notes(stage string, op Op, learned []*fact) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s (%s stage)\n", op.Region, stage)
	k := min(op.Notes, len(learned))
	for _, f := range learned[len(learned)-k:] {
		fmt.Fprintf(&b, "- %s (%s)\n", f.Text, f.ref)
	}
	if k == 0 {
		fmt.Fprintf(&b, "- nothing new worth keeping from %s\n", stage)
	}
	return g.contextOp(op.Tool, op.Region, b.String(), nil)
}

// fanOut emits the findings of a fan-out stage's workers into its region.
func (g *gen) fanOut(f *FanOut, w world) error {
	for i := range g.scaled(f.Workers, 1) {
		text, facts := w.worker(g, i, int(f.ResultBytes.Draw(g.rng)))
		if err := g.contextOp("context_append", f.Region, text, facts); err != nil {
			return err
		}
	}
	return nil
}

// failed turns a step into a failed call: an error the tool reports, with
// none of the content (and so none of the facts) the call would have fetched.
func failed(g *gen, s step) step {
	r := g.rng
	var msg string
	switch s.call.Name {
	case "read_file", "list_dir", "edit_file", "write_file":
		msg = fmt.Sprintf("Error: %s: %s", pick(r, []string{"EACCES: permission denied", "ENOENT: no such file or directory", "file is too large to read in one call; pass offset and limit"}), s.ref)
	case "bash":
		msg = fmt.Sprintf("exit status %d\nerror: %s", pick(r, []int{1, 2, 124, 137}), pick(r, []string{"command timed out after 120s", "cannot allocate memory", "signal: killed"}))
	case "web_fetch", "web_search":
		msg = fmt.Sprintf("Error: %s", pick(r, []string{"403 Forbidden", "429 Too Many Requests", "request timed out after 30s", "503 Service Unavailable"}))
	default:
		msg = "Error: the tool failed"
	}
	s.text, s.facts, s.ref, s.refetch, s.isErr = msg, nil, "", false, true
	return s
}

package synthetic

import (
	"fmt"
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
	n := 0
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
		keys := sortedKeys(st.Tools)
		steps := 0
		if st.Steps > 0 {
			steps = g.scaled(st.Steps, 1)
		}
		for range steps {
			if probes.Every > 0 && n > 0 && n%probes.Every == 0 {
				if err := g.probeRound(probes.PerRound, false); err != nil {
					return err
				}
			}
			s, err := w.tool(g, pickWeighted(g.rng, keys, st.Tools), n)
			if err != nil {
				return err
			}
			if err := g.assistant(s.say, []trace.ToolCall{s.call}); err != nil {
				return err
			}
			if err := g.toolResult(s.call, s.text, s.facts, s.ref, s.refetch, s.isErr); err != nil {
				return err
			}
			n++
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

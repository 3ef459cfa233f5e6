package synthetic

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// ChatParams parameterise the chat workload: a long conversation in which
// the user states facts that are asked for later. No tools: nothing the user
// said can be fetched again.
type ChatParams struct {
	Common
	Probes Probes `toml:"probes"`
	// Turns is the number of user turns (before Scale). Probe rounds count
	// turns as steps.
	Turns int `toml:"turns"`
	// UserBytes and ReplyBytes size a user turn and an assistant reply.
	UserBytes  LogNormal `toml:"user_bytes"`
	ReplyBytes LogNormal `toml:"reply_bytes"`
	// FactShare of user turns state a fact.
	FactShare float64 `toml:"fact_share"`
	// PasteShare of user turns paste a document of PasteBytes.
	PasteShare float64   `toml:"paste_share"`
	PasteBytes LogNormal `toml:"paste_bytes"`
}

func (p *ChatParams) validate() error {
	if p.ErrorShare != 0 {
		return keyErr("error_share", "%v: want 0: chat makes no tool calls", p.ErrorShare)
	}
	for _, e := range []error{
		p.Common.check(),
		p.Probes.check(),
		checkRange("turns", p.Turns, 1, maxSteps),
		p.UserBytes.checkBounded("user_bytes", maxBytes),
		p.ReplyBytes.checkBounded("reply_bytes", maxBytes),
		checkShare("fact_share", p.FactShare),
		checkShare("paste_share", p.PasteShare),
		p.PasteBytes.checkBounded("paste_bytes", maxBytes),
	} {
		if e != nil {
			return e
		}
	}
	return nil
}

// userFact returns a fact a user might state in passing.
func userFact(r *rand.Rand, a int) string {
	switch (r.IntN(6) + a) % 6 {
	case 0:
		return fmt.Sprintf("my %s's birthday is %s %d", pick(r, relations), pick(r, months), 1+r.IntN(28))
	case 1:
		return fmt.Sprintf("our staging cluster is called %s-%s", pick(r, codenames), pick(r, regions))
	case 2:
		return fmt.Sprintf("the budget cap is $%d per month", 100*(5+r.IntN(995)))
	case 3:
		return fmt.Sprintf("my flight lands at %02d:%02d on %s", r.IntN(24), 5*r.IntN(12), pick(r, weekdays))
	case 4:
		return fmt.Sprintf("the contract number is %c%c-%06d", 'A'+rune(r.IntN(26)), 'A'+rune(r.IntN(26)), r.IntN(1_000_000))
	default:
		return fmt.Sprintf("the deploy key rotates on %ss", pick(r, weekdays))
	}
}

func (p *ChatParams) generate(g *gen) error {
	r := g.rng
	topic := pick(r, chatTopics)
	var facts []trace.Fact
	for range g.c.Task.Facts {
		facts = append(facts, g.plant(func(a int) string { return userFact(r, a) }))
	}
	intro := fmt.Sprintf("You are a personal assistant helping with %s. Keep answers practical and remember what the user tells you.", topic)
	if err := g.taskWithFacts(intro, "What you know so far", facts); err != nil {
		return err
	}
	turns := g.scaled(p.Turns, 1)
	for i := range turns {
		var text strings.Builder
		var ufacts []trace.Fact
		text.WriteString(chatUser(r, topic, p.UserBytes.DrawInt(r)))
		if r.Float64() < p.FactShare {
			f := g.plant(func(a int) string { return userFact(r, a) })
			ufacts = append(ufacts, f)
			fmt.Fprintf(&text, " Also, %s.", f.Text)
		}
		if r.Float64() < p.PasteShare {
			f := g.plant(func(a int) string {
				return fmt.Sprintf("invoice %d from %s is due %s %d", 10000+r.IntN(90000), title(pick(r, codenames))+" Ltd", pick(r, months), 1+r.IntN(28))
			})
			ufacts = append(ufacts, f)
			fmt.Fprintf(&text, "\n\nHere is the email I got:\n\n> %s",
				strings.ReplaceAll(prose(r, topic, p.PasteBytes.DrawInt(r), []string{"Please note: " + f.Text + "."}), "\n\n", "\n>\n> "))
		}
		if err := g.user(text.String(), ufacts); err != nil {
			return err
		}
		// Probes ask about the next inference, the one answering this turn;
		// the facts of this very turn are not candidates.
		if p.Probes.Every > 0 && i > 0 && i%p.Probes.Every == 0 {
			if err := g.probeRound(p.Probes.PerRound, false); err != nil {
				return err
			}
		}
		if err := g.assistant(chatReply(r, topic, p.ReplyBytes.DrawInt(r)), nil); err != nil {
			return err
		}
	}
	if err := g.user("Before we wrap up, can you recap the key details I gave you?", nil); err != nil {
		return err
	}
	if err := g.probeRound(p.Probes.Final, true); err != nil {
		return err
	}
	return g.assistant(fmt.Sprintf("Here is a recap of %s.", topic), nil)
}

func (p *ChatParams) reset(func(string) bool) {}

func (p *ChatParams) tools() []string { return nil }

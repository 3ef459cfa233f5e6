package synthetic

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// NeedleParams parameterise the needle workload: filler file reads with
// facts planted at controlled depths (tokens between a fact and the probes at
// the end), the classic needle-in-a-haystack run.
type NeedleParams struct {
	Common
	// TotalTokens of content before the probes (before Scale).
	TotalTokens int `toml:"total_tokens"`
	// DepthsTokens are the depths at which facts are planted (before Scale),
	// each at most TotalTokens.
	DepthsTokens []int `toml:"depths_tokens"`
	// ChunkBytes is the size of one filler file read.
	ChunkBytes LogNormal `toml:"chunk_bytes"`
	// UserEvery: every this many needles is said by the user rather than
	// read from a file, so it cannot be fetched again. 0: none.
	UserEvery int `toml:"user_every"`
}

func (p *NeedleParams) validate() error {
	for _, e := range []error{
		p.Common.check(),
		p.Common.checkTools([]string{"read_file"}),
		checkRange("total_tokens", p.TotalTokens, 1, 50_000_000),
		p.ChunkBytes.checkBounded("chunk_bytes", maxBytes),
		checkRange("user_every", p.UserEvery, 0, maxCount),
	} {
		if e != nil {
			return e
		}
	}
	if p.ErrorShare != 0 {
		return keyErr("error_share", "%v: want 0: a failed read would move the needles off their depths", p.ErrorShare)
	}
	if len(p.DepthsTokens) == 0 || len(p.DepthsTokens) > maxCount {
		return keyErr("depths_tokens", "%d depths: want 1..%d", len(p.DepthsTokens), maxCount)
	}
	for i, d := range p.DepthsTokens {
		if d < 0 || d > p.TotalTokens {
			return keyErr("depths_tokens", "depths_tokens[%d] = %d: want 0..total_tokens (%d)", i, d, p.TotalTokens)
		}
	}
	if float64(p.TotalTokens)*p.Scale > 50_000_000 {
		return keyErr("scale", "total_tokens × scale = %.0f: want at most 50000000", float64(p.TotalTokens)*p.Scale)
	}
	return nil
}

func (p *NeedleParams) generate(g *gen) error {
	r := g.rng
	var facts []trace.Fact
	for range g.c.Task.Facts {
		facts = append(facts, g.plant(func(a int) string { return userFact(r, a) }))
	}
	text := "Read through the project files one by one and keep track of every code and identifier you meet; you will be asked about them at the end."
	for _, f := range facts {
		text += "\nRemember: " + f.Text + "."
	}
	if err := g.task(text, facts); err != nil {
		return err
	}
	total := g.scaled(p.TotalTokens, 1)
	depths := make([]int, len(p.DepthsTokens))
	for i, d := range p.DepthsTokens {
		depths[i] = min(g.scaled(d, 0), total)
	}
	// Deepest first: that is the order in which they are planted.
	slices.SortFunc(depths, func(a, b int) int { return b - a })
	start := g.pos
	planted := 0
	needle := func() trace.Fact {
		planted++
		return g.plant(func(int) string {
			return fmt.Sprintf("the %s %s code is %04d-%04d", pick(r, codenames), pick(r, nouns), r.IntN(10000), r.IntN(10000))
		})
	}
	byUser := func() bool { return p.UserEvery > 0 && (planted+1)%p.UserEvery == 0 }
	for n := 0; g.pos-start < total; n++ {
		size := p.ChunkBytes.DrawInt(r)
		end := g.pos - start + tokens(size) // where this step's read will end
		// Needles whose depth from the end falls inside this step go in it.
		var inFile []trace.Fact
		for planted < len(depths) && end >= total-depths[planted] {
			if byUser() {
				f := needle()
				if err := g.assistant("Noted. Continuing with the next file.", nil); err != nil {
					return err
				}
				if err := g.user(fmt.Sprintf("By the way, %s. Keep going.", f.Text), []trace.Fact{f}); err != nil {
					return err
				}
				continue
			}
			inFile = append(inFile, needle())
		}
		path := fmt.Sprintf("internal/%s/%s_%s_%d.go", pick(r, pkgNames), pick(r, nouns), pick(r, verbs), n)
		call := g.call("read_file", map[string]any{"path": path})
		if err := g.assistant("Reading "+path+".", []trace.ToolCall{call}); err != nil {
			return err
		}
		var lines []string
		for _, f := range inFile {
			lines = append(lines, "// "+f.Text)
		}
		fr := rand.New(rand.NewPCG(g.seed, r.Uint64()))
		if err := g.toolResult(g.t, call, codeFile(fr, path, size, lines), inFile, path, true, false); err != nil {
			return err
		}
	}
	// Needles that did not fit (a depth of 0) go in a last user turn.
	for planted < len(depths) {
		f := needle()
		if err := g.assistant("Noted.", nil); err != nil {
			return err
		}
		if err := g.user(fmt.Sprintf("One more: %s.", f.Text), []trace.Fact{f}); err != nil {
			return err
		}
	}
	if err := g.assistant("I have read every file. What would you like to know?", nil); err != nil {
		return err
	}
	if err := g.user("Which codes did you see, and what do you remember of the task?", nil); err != nil {
		return err
	}
	if err := g.probeRound(len(g.facts), true); err != nil {
		return err
	}
	return g.assistant("Here is everything I remember.", nil)
}

func (p *NeedleParams) reset(set func(string) bool) {
	if set("depths_tokens") {
		p.DepthsTokens = nil
	}
}

func (p *NeedleParams) tools() []string { return []string{"read_file"} }

package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// evictFurthestByScan is evictFurthest as it was: a scan of the blocks for
// each block evicted.
func evictFurthestByScan(p *flatPolicy) {
	for p.tokens > p.budget && len(p.all) > 0 {
		best, bestNext := -1, math.MinInt
		for i, b := range p.all {
			var next int
			if b.Kind == BlockTask || b.Kind == BlockSystem {
				next = -1 - i
			} else {
				if b.nextUse < p.oracle.pos {
					b.nextUse = p.oracle.nextUse(b.ID)
				}
				next = b.nextUse
			}
			if next > bestNext {
				best, bestNext = i, next
			}
		}
		p.tokens -= p.all[best].Tokens
		p.env.evictions++
		if best < p.npin {
			p.npin--
		}
		copy(p.all[best:], p.all[best+1:])
		p.all[len(p.all)-1] = nil
		p.all = p.all[:len(p.all)-1]
		p.touch(best)
	}
}

// evictFurthest picks the blocks evicted among their next uses, all at
// once: the same blocks as a scan for each, in random lists with pinned
// system blocks, ties and content never used again, over budgets from a
// block to all of them.
func TestEvictFurthestAsScanned(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 2000 {
		n := 1 + rng.IntN(60)
		uses := map[string][]int{}
		var all [2][]*Block
		tokens := 0
		npin := rng.IntN(3)
		for i := range n {
			id := fmt.Sprint("c", rng.IntN(n))
			kind := BlockToolResult
			if i < npin || rng.IntN(10) == 0 {
				kind = BlockSystem
			}
			if rng.IntN(2) == 0 {
				uses[id] = append(uses[id], rng.IntN(8)) // few positions: ties
			}
			tok := 1 + rng.IntN(100)
			tokens += tok
			for k := range all {
				all[k] = append(all[k], &Block{Kind: kind, ID: id, Tokens: tok, Size: i, nextUse: -1})
			}
		}
		for _, u := range uses {
			slices.Sort(u)
		}
		budget, pos := rng.IntN(tokens+1), rng.IntN(3)
		var got [2]*flatPolicy
		for k := range got {
			u := map[string][]int{}
			for id, x := range uses {
				u[id] = slices.Clone(x)
			}
			got[k] = &flatPolicy{env: testEnv(t, 1000), budget: budget, oracle: &future{uses: u, pos: pos}, all: all[k], npin: min(npin, n), tokens: tokens, dirty: math.MaxInt}
		}
		got[0].evictFurthest()
		evictFurthestByScan(got[1])
		a, b := got[0], got[1]
		ids := func(bs []*Block) (s []string) {
			for _, x := range bs {
				s = append(s, fmt.Sprint(x.Size, x.ID))
			}
			return s
		}
		if !slices.Equal(ids(a.all), ids(b.all)) || a.npin != b.npin || a.tokens != b.tokens || a.dirty != b.dirty || a.env.evictions != b.env.evictions {
			t.Fatalf("round %d: got %v npin %d tokens %d dirty %d evictions %d, want %v %d %d %d %d", round,
				ids(a.all), a.npin, a.tokens, a.dirty, a.env.evictions, ids(b.all), b.npin, b.tokens, b.dirty, b.env.evictions)
		}
	}
}

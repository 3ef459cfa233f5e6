package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// grows regions are cut into chunks of about CacheChunkTokens and an open
// last chunk is extended in place: whatever the writes, deletions and
// compactions, each request is what a full render gives, and a request
// already returned never changes.
func TestGrowsChunksIncremental(t *testing.T) {
	const layout = `[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 100 }
notes = { kind = "pinned", max_tokens = 30000, volatility = "grows" }
code = { kind = "compacting", max_tokens = 30000, threshold_tokens = 20000, volatility = "grows" }
hist = { kind = "compact_history", source_region = "code", max_tokens = 3000 }
conversation = { kind = "sliding_window", max_items = 10, max_tokens = 20000 }
`
	bp, err := ParseBlueprint("grows.leviath", []byte(layout), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			c, err := New(bp, Options{Window: 200_000, Task: "the task"})
			if err != nil {
				t.Fatal(err)
			}
			type snap struct {
				text string
				hash uint64
			}
			var prev *Request
			var prevSnap []snap
			for i := range 300 {
				reg := []string{"notes", "code"}[rng.IntN(2)]
				size := 40 + rng.IntN(6000)
				body := fmt.Sprintf("entry %d of %s\n%s", i, reg, strings.Repeat("y", size))
				switch n := rng.IntN(20); {
				case n < 16:
					_ = c.Write(reg, body) // a full pinned region refuses: fine
				case n < 18:
					args, _ := json.Marshal(map[string]any{"region": reg, "oldest": 1 + rng.IntN(3)})
					c.CallTool("context_delete", args)
				default:
					c.Assemble()
				}
				if rng.IntN(3) == 0 {
					continue // several writes between requests
				}
				req := c.Assemble()
				for j, s := range prevSnap {
					if prev.System[j].Text != s.text || prev.System[j].Hash != s.hash {
						t.Fatalf("op %d: an earlier request's system block %d changed", i, j)
					}
				}
				prev, prevSnap = req, nil
				for _, b := range req.System {
					prevSnap = append(prevSnap, snap{b.Text, b.Hash})
				}
				// sameAsFresh drops the caches: compare on a copy of the
				// request, then carry on from the fresh state half the time.
				if rng.IntN(2) == 0 {
					if err := sameAsFresh(c, req); err != nil {
						t.Fatalf("op %d: %v", i, err)
					}
				}
			}
		})
	}
}

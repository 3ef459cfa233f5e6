package sim

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// refLRU is the plain model vllmCache must agree with: every block of a
// request moved to the most recent end, tail first, then LRU eviction.
type refLRU struct {
	block, capTokens int
	order            []uint64 // least recent first
	tokens           map[uint64]int
}

func newRefLRU(block, capTokens int) *refLRU {
	return &refLRU{block: block, capTokens: capTokens, tokens: map[uint64]int{}}
}

func (c *refLRU) serve(v *prefixView) cacheUse {
	hit := -1
	for j, h := range v.chains {
		if _, ok := c.tokens[h]; !ok {
			break
		}
		hit = j
	}
	for j := len(v.chains) - 1; j >= 0; j-- {
		h := v.chains[j]
		for i, x := range c.order {
			if x == h {
				c.order = append(c.order[:i], c.order[i+1:]...)
				break
			}
		}
		c.order = append(c.order, h)
		c.tokens[h] = v.cum[j] - v.tokensThrough(j-1)
	}
	used := 0
	for _, h := range c.order {
		used += c.tokens[h]
	}
	for used > c.capTokens && len(c.order) > 0 {
		used -= c.tokens[c.order[0]]
		delete(c.tokens, c.order[0])
		c.order = c.order[1:]
	}
	return cacheUse{Read: v.tokensThrough(hit) / c.block * c.block}
}

// view builds a request view of blocks with the given token sizes; ids name
// the content (equal ids, equal content).
func view(ids []int, tokens []int, marks ...CacheMark) *prefixView {
	v := &prefixView{marks: marks}
	var h uint64
	tot := 0
	for i, id := range ids {
		h = chain(h, uint64(id)*0x9e3779b97f4a7c15+1)
		tot += tokens[i]
		v.chains = append(v.chains, h)
		v.cum = append(v.cum, tot)
	}
	v.valid = len(v.chains) // hashed here, not from blocks
	return v
}

func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

func repeat(tok, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = tok
	}
	return out
}

func TestAnthropicCache(t *testing.T) {
	last := func(n int) CacheMark { return CacheMark{Index: n - 1, TTL: "5m"} }
	t.Run("below the minimum nothing is cached", func(t *testing.T) {
		c := &anthropicCache{min: 1024}
		for i := 0; i < 3; i++ {
			got := c.serve(view(seq(1, 10), repeat(100, 10), last(10)), float64(i))
			if got != (cacheUse{}) {
				t.Fatalf("request %d: %+v, want nothing read or written (1,000 tokens < 1,024)", i, got)
			}
		}
	})
	t.Run("write then read at the breakpoint", func(t *testing.T) {
		c := &anthropicCache{min: 1024}
		got := c.serve(view(seq(1, 10), repeat(200, 10), last(10)), 0)
		if got != (cacheUse{Write5m: 2000}) {
			t.Fatalf("first: %+v, want 2000 written", got)
		}
		got = c.serve(view(seq(1, 15), repeat(200, 15), last(15)), 10)
		if got != (cacheUse{Read: 2000, Write5m: 1000, whole: 10}) {
			t.Fatalf("second: %+v, want 2000 read and the 5 new blocks written", got)
		}
	})
	t.Run("docs worked example: 10, 15, then 35 blocks misses", func(t *testing.T) {
		c := &anthropicCache{min: 100}
		c.serve(view(seq(1, 10), repeat(100, 10), last(10)), 0)
		if got := c.serve(view(seq(1, 15), repeat(100, 15), last(15)), 1); got.Read != 1000 {
			t.Fatalf("turn 2 read %d, want 1000 (entry at block 10)", got.Read)
		}
		// Blocks 35..16 are looked at; the entry at block 15 is outside.
		if got := c.serve(view(seq(1, 35), repeat(100, 35), last(35)), 2); got.Read != 0 || got.Write5m != 3500 {
			t.Fatalf("turn 3: %+v, want a miss and 3500 written", got)
		}
	})
	t.Run("exactly 20 positions back still hits", func(t *testing.T) {
		c := &anthropicCache{min: 100}
		c.serve(view(seq(1, 10), repeat(100, 10), last(10)), 0)
		if got := c.serve(view(seq(1, 29), repeat(100, 29), last(29)), 1); got.Read != 1000 {
			t.Fatalf("read %d, want 1000: block 10 is the 20th position back from 29", got.Read)
		}
	})
	t.Run("a change more than 20 blocks before the breakpoint misses", func(t *testing.T) {
		c := &anthropicCache{min: 100}
		ids := seq(1, 40)
		c.serve(view(ids, repeat(100, 40), last(40)), 0)
		changed := append([]int(nil), ids...)
		changed[15] = 999 // 25 blocks before the breakpoint at 40
		if got := c.serve(view(changed, repeat(100, 40), last(40)), 1); got.Read != 0 {
			t.Fatalf("read %d, want 0", got.Read)
		}
	})
	t.Run("a second breakpoint before the change keeps the prefix", func(t *testing.T) {
		c := &anthropicCache{min: 100}
		ids := seq(1, 40)
		c.serve(view(ids, repeat(100, 40), CacheMark{Index: 9, TTL: "5m"}, last(40)), 0)
		changed := append([]int(nil), ids...)
		changed[15] = 999
		got := c.serve(view(changed, repeat(100, 40), CacheMark{Index: 9, TTL: "5m"}, last(40)), 1)
		if got.Read != 1000 || got.Write5m != 3000 {
			t.Fatalf("%+v, want 1000 read at the system breakpoint and 3000 written", got)
		}
	})
	t.Run("a 6-minute idle gap expires a 5-minute entry", func(t *testing.T) {
		c := &anthropicCache{min: 100}
		c.serve(view(seq(1, 10), repeat(100, 10), last(10)), 0)
		if got := c.serve(view(seq(1, 11), repeat(100, 11), last(11)), 360); got.Read != 0 {
			t.Fatalf("read %d after 6 minutes, want 0", got.Read)
		}
	})
	t.Run("a hit refreshes the TTL", func(t *testing.T) {
		c := &anthropicCache{min: 100}
		c.serve(view(seq(1, 10), repeat(100, 10), last(10)), 0)
		// 4 minutes later: hit, refreshed; 8 minutes after the write (4 after
		// the hit) it still hits.
		v := view(seq(1, 10), repeat(100, 10), last(10))
		if got := c.serve(v, 240); got.Read != 1000 {
			t.Fatalf("read %d at 4 min", got.Read)
		}
		if got := c.serve(v, 480); got.Read != 1000 {
			t.Fatalf("read %d at 8 min, want the refreshed entry", got.Read)
		}
	})
	t.Run("every breakpoint's hit refreshes its entry", func(t *testing.T) {
		// r1 (t=0) writes entries at the system breakpoint (block 2, 200
		// tokens) and the end (block 10). r2 (t=4 min) hits both: its system
		// breakpoint finds its own entry, its end finds block 10's; both are
		// used, both live until t=9 min. r3 (t=8 min) changed block 3 (an
		// eviction): its system breakpoint still reads the 200 tokens. Were
		// only the longest hit refreshed, the system entry would have expired
		// at t=5 min and r3 would read nothing.
		c := &anthropicCache{min: 100}
		sys := CacheMark{Index: 1, TTL: "5m"}
		c.serve(view(seq(1, 10), repeat(100, 10), sys, last(10)), 0)
		if got := c.serve(view(seq(1, 12), repeat(100, 12), sys, last(12)), 240); got.Read != 1000 {
			t.Fatalf("r2 read %d, want 1000", got.Read)
		}
		changed := seq(1, 12)
		changed[2] = 999
		if got := c.serve(view(changed, repeat(100, 12), sys, last(12)), 480); got != (cacheUse{Read: 200, Write5m: 1000, whole: 2}) {
			t.Fatalf("r3: %+v, want the system prefix (200) read and the rest (1000) written", got)
		}
	})
	t.Run("a 1-hour entry survives the gap", func(t *testing.T) {
		c := &anthropicCache{min: 100}
		got := c.serve(view(seq(1, 10), repeat(100, 10), CacheMark{Index: 9, TTL: "1h"}), 0)
		if got != (cacheUse{Write1h: 1000}) {
			t.Fatalf("%+v, want a 1h write of 1000", got)
		}
		if got := c.serve(view(seq(1, 10), repeat(100, 10), CacheMark{Index: 9, TTL: "1h"}), 1800); got.Read != 1000 {
			t.Fatalf("read %d after 30 min", got.Read)
		}
	})
	t.Run("mixed TTLs bill 1h up to the last 1h breakpoint, 5m after", func(t *testing.T) {
		c := &anthropicCache{min: 100}
		got := c.serve(view(seq(1, 10), repeat(100, 10), CacheMark{Index: 3, TTL: "1h"}, CacheMark{Index: 9, TTL: "5m"}), 0)
		if got != (cacheUse{Write1h: 400, Write5m: 600}) {
			t.Fatalf("%+v, want 400 at 1h and 600 at 5m", got)
		}
	})
	t.Run("at most 4 breakpoints", func(t *testing.T) {
		c := &anthropicCache{min: 100}
		var marks []CacheMark
		for i := 0; i < 6; i++ {
			marks = append(marks, CacheMark{Index: i, TTL: "5m"})
		}
		c.serve(view(seq(1, 6), repeat(100, 6), marks...), 0)
		if c.Dropped != 2 {
			t.Fatalf("dropped %d, want 2", c.Dropped)
		}
		if c.entries.n != 4 {
			t.Fatalf("%d entries, want 4", c.entries.n)
		}
	})
	t.Run("no breakpoint, no caching", func(t *testing.T) {
		c := &anthropicCache{min: 100}
		c.serve(view(seq(1, 10), repeat(100, 10)), 0)
		if got := c.serve(view(seq(1, 10), repeat(100, 10)), 1); got != (cacheUse{}) {
			t.Fatalf("%+v", got)
		}
	})
}

func TestOpenAICache(t *testing.T) {
	newC := func() *autoCache { return &autoCache{min: 1024, step: 128, ttl: 600} }
	t.Run("below 1,024 tokens nothing is cached", func(t *testing.T) {
		c := newC()
		c.serve(view(seq(1, 10), repeat(100, 10)), 0)
		if got := c.serve(view(seq(1, 10), repeat(100, 10)), 1); got != (cacheUse{}) {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("hits come in 128-token steps", func(t *testing.T) {
		c := newC()
		c.serve(view(seq(1, 10), repeat(150, 10)), 0) // 1,500 tokens
		got := c.serve(view(append(seq(1, 10), 77), append(repeat(150, 10), 500)), 1)
		if got.Read != 1408 { // 1,500 rounded down to 11 × 128
			t.Fatalf("read %d, want 1408", got.Read)
		}
		if got.Read+got.Write5m != 2000 {
			t.Fatalf("read+write %d, want the whole 2000", got.Read+got.Write5m)
		}
	})
	t.Run("a shared prefix under the minimum is not read", func(t *testing.T) {
		c := newC()
		c.serve(view(seq(1, 12), repeat(100, 12)), 0)
		got := c.serve(view(append(seq(1, 5), seq(50, 10)...), repeat(100, 15)), 1)
		if got.Read != 0 {
			t.Fatalf("read %d, want 0: 500 shared tokens < 1,024", got.Read)
		}
	})
	t.Run("a prefix shared with an older request is found", func(t *testing.T) {
		c := newC()
		c.serve(view(seq(1, 20), repeat(100, 20)), 0)                                // A
		c.serve(view(seq(100, 20), repeat(100, 20)), 1)                              // B, unrelated
		got := c.serve(view(append(seq(1, 15), seq(200, 5)...), repeat(100, 20)), 2) // shares 15 blocks with A
		if got.Read != 1408 {                                                        // 1,500 rounded down to 128s
			t.Fatalf("read %d, want 1408", got.Read)
		}
	})
	t.Run("a reuse keeps the prefix alive", func(t *testing.T) {
		c := newC()
		c.serve(view(seq(1, 20), repeat(100, 20)), 0)
		c.serve(view(seq(1, 21), repeat(100, 21)), 500)
		if got := c.serve(view(seq(1, 22), repeat(100, 22)), 1000); got.Read != 2048 {
			t.Fatalf("read %d at 1000 s, want the 2,100-token prefix reused at 500 s (2048)", got.Read)
		}
	})
	t.Run("entries expire after the idle lifetime", func(t *testing.T) {
		c := newC()
		c.serve(view(seq(1, 20), repeat(100, 20)), 0)
		if got := c.serve(view(seq(1, 20), repeat(100, 20)), 601); got.Read != 0 {
			t.Fatalf("read %d after 601 s", got.Read)
		}
	})
}

func TestVLLMCache(t *testing.T) {
	t.Run("hits in whole 16-token blocks", func(t *testing.T) {
		c := newVLLMCache(16, 100000)
		c.serve(view(seq(1, 3), []int{10, 10, 10}), 0)
		got := c.serve(view(append(seq(1, 3), 9), []int{10, 10, 10, 5}), 1)
		if got.Read != 16 {
			t.Fatalf("read %d, want 16 (30 shared tokens = one full block)", got.Read)
		}
	})
	t.Run("LRU at the capacity evicts the request tail first", func(t *testing.T) {
		c := newVLLMCache(16, 320)
		c.serve(view(seq(1, 2), []int{160, 160}), 0) // fills the cache
		c.serve(view(seq(10, 1), []int{160}), 1)     // evicts one block
		// The tail of the first request (block 2) went first; its head stays.
		if got := c.serve(view(seq(1, 1), []int{160}), 2); got.Read != 160 {
			t.Fatalf("read %d, want the first request's head (160) still cached", got.Read)
		}
	})
	t.Run("an evicted middle block breaks the chain", func(t *testing.T) {
		c := newVLLMCache(16, 480)
		c.serve(view(seq(1, 3), []int{160, 160, 160}), 0) // full: 1 2 3
		c.serve(view(seq(1, 1), []int{160}), 1)           // 1 most recent
		c.serve(view(seq(50, 1), []int{160}), 2)          // evicts the least recent: block 3
		c.serve(view(seq(60, 1), []int{160}), 3)          // evicts block 2
		if got := c.serve(view(seq(1, 3), []int{160, 160, 160}), 4); got.Read != 160 {
			t.Fatalf("read %d, want only the first block", got.Read)
		}
	})
	t.Run("same as a plain LRU of every block on random requests", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for trial := 0; trial < 50; trial++ {
			fast, ref := newVLLMCache(16, 3000), newRefLRU(16, 3000)
			prev := seq(1, 5)
			for r := 0; r < 40; r++ {
				ids := append([]int(nil), prev[:rng.IntN(len(prev)+1)]...)
				for n := rng.IntN(6); n > 0; n-- {
					ids = append(ids, 1000+rng.IntN(40))
				}
				if len(ids) == 0 {
					ids = []int{1}
				}
				toks := make([]int, len(ids))
				for i, id := range ids {
					toks[i] = 50 + id%200
				}
				a, b := fast.serve(view(ids, toks), 0), ref.serve(view(ids, toks))
				if a != b {
					t.Fatalf("trial %d request %d: %+v, reference %+v", trial, r, a, b)
				}
				prev = ids
			}
		}
	})
}

// refAnthropic is the plain model anthropicCache must agree with: every
// entry ever written kept in a map, every breakpoint's 20 positions looked
// at.
type refAnthropic struct {
	min     int
	entries map[uint64]*antEntry
}

func (c *refAnthropic) serve(v *prefixView, now float64) cacheUse {
	marks := v.marks
	if len(marks) > anthropicMaxMarks {
		marks = marks[len(marks)-anthropicMaxMarks:]
	}
	hit := -1
	for _, m := range marks {
		for j := m.Index; j >= 0 && j > m.Index-anthropicLookback; j-- {
			if e := c.entries[v.chains[j]]; e != nil && e.expires >= now {
				e.expires = now + e.ttl
				hit = max(hit, j)
				break
			}
		}
	}
	var use cacheUse
	if hit >= 0 {
		use.Read = v.cum[hit]
	}
	b1h, last := hit, hit
	for _, m := range marks {
		if m.Index <= hit || v.cum[m.Index] < c.min {
			continue
		}
		ttl := ttlSeconds(m.TTL)
		if e := c.entries[v.chains[m.Index]]; e != nil && e.expires >= now {
			e.expires = now + e.ttl
		} else {
			c.entries[v.chains[m.Index]] = &antEntry{expires: now + ttl, ttl: ttl}
		}
		if m.TTL == "1h" {
			b1h = max(b1h, m.Index)
		}
		last = max(last, m.Index)
	}
	if last > hit {
		use.Write1h = v.tokensThrough(b1h) - v.tokensThrough(hit)
		use.Write5m = v.tokensThrough(last) - v.tokensThrough(b1h)
	}
	return use
}

// TestAnthropicCacheMatchesReference serves long random streams, whose
// prefixes come back after other requests and whose entries expire, purges
// and all, as the plain model does.
func TestAnthropicCacheMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 4; trial++ {
		fast, ref := &anthropicCache{min: 100}, &refAnthropic{min: 100, entries: map[uint64]*antEntry{}}
		past := [][]int{seq(1, 30)}
		now, purges := 0.0, 0
		for r := 0; r < 3000; r++ {
			base := past[rng.IntN(len(past))] // an earlier request comes back
			ids := append([]int(nil), base[:rng.IntN(len(base)+1)]...)
			for n := rng.IntN(12); n > 0; n-- {
				ids = append(ids, 100+rng.IntN(6))
			}
			if len(ids) == 0 {
				ids = []int{1}
			}
			ids = ids[:min(len(ids), 90)]
			toks := make([]int, len(ids))
			for i, id := range ids {
				toks[i] = 20 + id%97
			}
			var marks []CacheMark
			for n := 1 + rng.IntN(5); n > 0; n-- {
				ttl := "5m"
				if rng.IntN(8) == 0 {
					ttl = "1h"
				}
				marks = append(marks, CacheMark{Index: rng.IntN(len(ids)), TTL: ttl})
			}
			slices.SortFunc(marks, func(a, b CacheMark) int { return a.Index - b.Index })
			if rng.IntN(50) == 0 {
				now += 200 + rng.Float64()*4000 // an idle gap
			} else {
				now += rng.Float64() * 30
			}
			before := fast.entries.n
			v := view(ids, toks, marks...)
			a, b := fast.serve(v, now), ref.serve(view(ids, toks, marks...), now)
			if a.whole > 0 && v.tokensThrough(a.whole-1) > a.Read {
				t.Fatalf("trial %d request %d: %d blocks read whole hold more than the %d tokens read", trial, r, a.whole, a.Read)
			}
			a.whole = 0 // the reference does not say
			if a != b {
				t.Fatalf("trial %d request %d at %.0f s: %+v, reference %+v", trial, r, now, a, b)
			}
			if fast.entries.n < before {
				purges++
			}
			if len(past) < 8 {
				past = append(past, ids)
			} else {
				past[rng.IntN(len(past))] = ids
			}
		}
		if purges < 10 {
			t.Fatalf("trial %d: %d purges, want the stream to purge often", trial, purges)
		}
	}
}

// A view hashes and counts its blocks only as far as it is read: whatever is
// read first, and from wherever the last request left it, its running totals
// and the block after a number of tokens are those of a full count.
func TestPrefixViewReadLazily(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	blocks := make([]*Block, 40)
	var cum []int
	tot := 0
	for i := range blocks {
		blocks[i] = &Block{Hash: rng.Uint64(), Tokens: rng.IntN(3) * rng.IntN(50)} // some empty
		tot += blocks[i].Tokens
		cum = append(cum, tot)
	}
	full := &prefixView{blocks: blocks, chains: make([]uint64, len(blocks)), cum: make([]int, len(blocks))}
	full.prefixes(len(blocks))
	if !slices.Equal(full.cum, cum) {
		t.Fatalf("running totals %v, want %v", full.cum, cum)
	}
	for valid := range len(blocks) + 1 {
		for _, i := range []int{-1, 0, valid - 1, valid, len(blocks) - 1} {
			v := &prefixView{blocks: blocks, chains: slices.Clone(full.chains), cum: slices.Clone(full.cum), valid: valid}
			clear(v.chains[valid:])
			clear(v.cum[valid:])
			if i >= 0 && i < len(blocks) {
				if got := v.tokensThrough(i); got != cum[i] {
					t.Errorf("valid %d: tokensThrough(%d) = %d, want %d", valid, i, got, cum[i])
				}
			}
			for at := -1; at <= tot+1; at += 1 + rng.IntN(7) {
				want := sort.SearchInts(cum, at+1)
				if got := v.after(at, 0); got != want {
					t.Errorf("valid %d, read through %d: after(%d) = %d, want %d", valid, i, at, got, want)
				}
				// From a block that cannot be the answer, as serve says.
				from := sort.SearchInts(cum, at) // the first whose total reaches at
				if got := v.after(at, from); got != want {
					t.Errorf("valid %d, read through %d: after(%d) from %d = %d, want %d", valid, i, at, from, got, want)
				}
			}
			if got := v.total(); got != tot {
				t.Errorf("valid %d: total %d, want %d", valid, got, tot)
			}
			if got := v.prefixes(len(blocks)); !slices.Equal(got, full.chains) {
				t.Errorf("valid %d: chains differ from a full hash", valid)
			}
		}
	}
}

func TestParseCacheKind(t *testing.T) {
	for _, k := range []CacheKind{CacheNone, CacheAnthropic, CacheOpenAI, CacheVLLM} {
		got, err := ParseCacheKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseCacheKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := ParseCacheKind("redis"); err == nil {
		t.Error("ParseCacheKind(redis) succeeded")
	}
}

// OpenAI and vLLM match prefixes token by token, not content block by content
// block: when a request's first differing block shares its start with the
// previous request's (a region's chunk that grew), those shared tokens are
// part of the cached prefix. The meter passes them as partial.
func TestTokenGranularCachesMatchInsideADivergingBlock(t *testing.T) {
	// r1 = A (1000) B (500); r2 = A B' (600), B' sharing 300 tokens with B.
	r1 := view([]int{1, 2}, []int{1000, 500})
	r2 := func() *prefixView {
		v := view([]int{1, 3}, []int{1000, 600})
		v.partialAt, v.partial = 1, 300
		return v
	}
	t.Run("openai", func(t *testing.T) {
		// 1,300 shared tokens → 1,280 in 128-token steps (without the partial
		// block only 1,000 match, under the 1,024 minimum: nothing).
		c := &autoCache{min: 1024, step: 128, ttl: 600}
		c.serve(r1, 0)
		if got := c.serve(r2(), 1); got != (cacheUse{Read: 1280, Write5m: 1600 - 1280}) {
			t.Fatalf("%+v, want 1280 read", got)
		}
	})
	t.Run("openai, the previous request not stored", func(t *testing.T) {
		// r1 under the minimum is not stored: nothing to share.
		c := &autoCache{min: 1024, step: 128, ttl: 600}
		c.serve(view([]int{1, 2}, []int{500, 500}), 0)
		v := view([]int{1, 3}, []int{1000, 600})
		v.partialAt, v.partial = 1, 300
		if got := c.serve(v, 1); got.Read != 0 {
			t.Fatalf("read %d, want 0", got.Read)
		}
	})
	t.Run("vllm", func(t *testing.T) {
		// 1,300 shared tokens → 1,296 in whole 16-token KV blocks.
		c := newVLLMCache(16, 1<<20)
		c.serve(r1, 0)
		if got := c.serve(r2(), 1); got.Read != 1296 {
			t.Fatalf("read %d, want 1296", got.Read)
		}
	})
}

package sim

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// CacheKind is a provider prompt-cache model.
type CacheKind uint8

// The cache models of DESIGN.md §5 (rules in spec/PEERS.md §A).
const (
	CacheNone      CacheKind = iota // nothing is cached
	CacheAnthropic                  // explicit breakpoints, 20-block lookback, minimum, 5 m / 1 h TTL
	CacheOpenAI                     // automatic prefix cache from a minimum, hits in fixed steps
	CacheVLLM                       // 16-token KV blocks in a hash chain, LRU at a capacity
)

var cacheKindNames = [...]string{"none", "anthropic", "openai", "vllm"}

func (k CacheKind) String() string {
	if int(k) < len(cacheKindNames) {
		return cacheKindNames[k]
	}
	return fmt.Sprintf("CacheKind(%d)", k)
}

// ParseCacheKind parses a cache model name.
func ParseCacheKind(s string) (CacheKind, error) {
	for i, n := range cacheKindNames {
		if n == s {
			return CacheKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown cache model %q (want none, anthropic, openai or vllm)", s)
}

// cacheUse is how one request's input tokens were served. Uncached tokens are
// the request's tokens minus these.
type cacheUse struct {
	Read    int
	Write5m int
	Write1h int
	// whole is how many of the request's first blocks the read covers
	// whole, where the model knows (0 where not): prefixView.after
	// searches from there.
	whole int
}

// prefixView is one request seen by a cache model: per block, the hash of the
// prefix ending at it and the running total of tokens through it, both
// written for the first valid blocks (see prefixes).
type prefixView struct {
	blocks []*Block
	chains []uint64 // of the first valid blocks; room for all
	cum    []int    // likewise
	valid  int
	marks  []CacheMark
	// partial is the tokens at the start of block partialAt (the first that
	// differs from the previous request's) that it shares with the previous
	// request's block there; token-granular caches match them too.
	partialAt, partial int
}

func (v *prefixView) total() int { return v.tokensThrough(len(v.cum) - 1) }

// prefixes returns the hashes of the prefixes that end at each of the first
// n blocks, hashing those not hashed yet, and their running totals with
// them: a cache reads them only up to its last breakpoint, where most
// requests hash none.
func (v *prefixView) prefixes(n int) []uint64 {
	chains := v.chains[:n]
	if v.valid < n {
		var h uint64
		tot := 0
		if v.valid > 0 {
			h, tot = chains[v.valid-1], v.cum[v.valid-1]
		}
		blocks := v.blocks[v.valid:n]
		out := chains[v.valid:][:len(blocks)]
		cum := v.cum[v.valid:][:len(blocks)]
		for j, b := range blocks {
			h = extend(h, b.Hash)
			tot += b.Tokens
			out[j], cum[j] = h, tot
		}
		v.valid = n
	}
	return chains
}

// grow makes room for n blocks, keeping the first valid ones'.
func (v *prefixView) grow(n int) {
	v.chains = slices.Grow(v.chains[:v.valid], n-v.valid)
	v.cum = slices.Grow(v.cum[:v.valid], n-v.valid)
}

// tokensThrough is the running total through block i.
func (v *prefixView) tokensThrough(i int) int {
	if i < 0 {
		return 0
	}
	if i >= v.valid {
		v.prefixes(i + 1)
	}
	return v.cum[i]
}

// written is tokensThrough(i) for an i below valid: serve's breakpoints,
// whose totals are written, need no check for more.
func (v *prefixView) written(i int) int {
	if i < 0 {
		return 0
	}
	return v.cum[i]
}

// after is the index of the first block whose running total exceeds t, or
// the number of blocks, none of the first from doing so: a cache model
// that reads whole blocks says which (most often the answer itself).
func (v *prefixView) after(t, from int) int {
	if from == 0 && v.valid > 0 && v.cum[v.valid-1] > t {
		// A model that does not say (the automatic ones): they compute
		// every running total, so a search beats a walk from the start.
		return sort.SearchInts(v.cum[:v.valid], t+1)
	}
	for i := from; i < len(v.cum); i++ {
		if v.tokensThrough(i) > t {
			return i
		}
	}
	return len(v.cum)
}

// cacheModel serves requests at virtual times.
type cacheModel interface {
	serve(v *prefixView, now float64) cacheUse
}

// newCacheModel makes the cache model of profile p; an anthropic one is
// ac, reset (its arrays kept), if ac is not nil.
func newCacheModel(p Profile, ac *anthropicCache) (cacheModel, error) {
	k, err := ParseCacheKind(p.Cache)
	if err != nil {
		return nil, err
	}
	switch k {
	case CacheAnthropic:
		if ac == nil {
			return &anthropicCache{min: p.CacheMin}, nil
		}
		t := &ac.entries
		*ac = anthropicCache{min: p.CacheMin, entries: antEntries{slots: t.slots[:0], spare: t.spare[:0]}}
		return ac, nil
	case CacheOpenAI:
		return &autoCache{min: p.CacheMin, step: p.CacheStep, ttl: p.CacheTTL}, nil
	case CacheVLLM:
		return newVLLMCache(p.CacheBlock, p.CacheCap), nil
	}
	return noCache{}, nil
}

type noCache struct{}

func (noCache) serve(*prefixView, float64) cacheUse { return cacheUse{} }

// anthropicCache follows PEERS.md §A.1: a write happens only at a breakpoint
// and stores the hash of the prefix ending there; a read looks, for each
// breakpoint, at that block and the 19 before it for an entry an earlier
// request wrote; at most 4 breakpoints; prefixes under the model's minimum are
// never cached; the TTL (5 m or 1 h, from the start of the request) of every
// entry a breakpoint finds is refreshed, not only the longest hit's. Billing
// of mixed TTLs: read for A, 1 h write for B−A, 5 m write for C−B.
type anthropicCache struct {
	min     int
	entries antEntries
	purgeAt int
	// Dropped counts breakpoints beyond the fourth (the API would refuse the
	// request; the simulator keeps the last four).
	Dropped int
}

type antEntry struct {
	key     uint64 // the prefix hash
	expires float64
	ttl     float64 // > 0; 0 marks an empty slot of antEntries
}

// antEntries holds the cache entries by key in one array, by open
// addressing: keys are prefix hashes, whose low bits place them as well as
// a map's hash would, and the array holds no pointers for the GC to follow.
// An expired entry stays (as good as absent) until purge drops it.
type antEntries struct {
	slots []antEntry
	n     int        // entries in slots
	spare []antEntry // the array before the last resize, for the next
	// seen has the bit of every key put set (until cleared, when the
	// entries are put again): most keys a breakpoint looks back at were
	// never written, and a bit test rules them out without a lookup. Its
	// 4,096 bits, a few cache lines, suit a table that purges keep small
	// (see anthropicSlack).
	seen [1 << 6]uint64
}

func (t *antEntries) mayHave(key uint64) bool {
	return t.seen[key>>6%uint64(len(t.seen))]&(1<<(key&63)) != 0
}

// find returns the entry of key, or nil.
func (t *antEntries) find(key uint64) *antEntry {
	if t.n == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := key & mask; ; i = (i + 1) & mask {
		e := &t.slots[i]
		if e.ttl == 0 {
			return nil
		}
		if e.key == key {
			return e
		}
	}
}

// put sets the entry of key, unless it is live at now: then its TTL (its
// own) is refreshed from now. (A write looks the key up once, not twice.)
func (t *antEntries) put(key uint64, now, expires, ttl float64) {
	if 2*(t.n+1) > len(t.slots) {
		t.resize(max(64, 2*len(t.slots)), math.Inf(-1))
	}
	mask := uint64(len(t.slots) - 1)
	for i := key & mask; ; i = (i + 1) & mask {
		e := &t.slots[i]
		if e.ttl == 0 {
			t.n++
		} else if e.key != key {
			continue
		} else if e.expires >= now {
			e.expires = now + e.ttl
			return
		}
		*e = antEntry{key: key, expires: expires, ttl: ttl}
		t.seen[key>>6%uint64(len(t.seen))] |= 1 << (key & 63)
		return
	}
}

// resize moves the entries that expire at or after now to a new array of
// size slots (a power of two).
func (t *antEntries) resize(size int, now float64) {
	old := t.slots
	if cap(t.spare) >= size {
		t.slots = t.spare[:size]
		clear(t.slots)
	} else {
		t.slots = make([]antEntry, size)
	}
	t.n = 0
	for _, e := range old {
		if e.ttl != 0 && e.expires >= now {
			t.put(e.key, math.Inf(1), e.expires, e.ttl) // each key once
		}
	}
	t.spare = old
}

const (
	anthropicMaxMarks = 4
	anthropicLookback = 20
	// anthropicSlack is how many entries past twice the live ones the
	// table takes before a purge drops the expired: most entries expire
	// unread (a prefix that changed is not asked for again), so the
	// table, and its seen bits, stay small enough to stay in cache.
	anthropicSlack = 128
)

func ttlSeconds(ttl string) float64 {
	if ttl == "1h" {
		return 3600
	}
	return 300
}

func (c *anthropicCache) serve(v *prefixView, now float64) cacheUse {
	marks := v.marks
	if len(marks) > anthropicMaxMarks {
		c.Dropped += len(marks) - anthropicMaxMarks
		marks = marks[len(marks)-anthropicMaxMarks:]
	}
	if len(marks) == 0 || len(v.cum) == 0 {
		return cacheUse{}
	}
	chains := v.chains // of all blocks, hashed up to v.valid
	n := len(chains)
	hit := -1
	for _, m := range marks {
		if m.Index < 0 || m.Index >= n {
			continue
		}
		if m.Index >= v.valid {
			v.prefixes(m.Index + 1)
		}
		lo := max(0, m.Index+1-anthropicLookback)
		for j := m.Index; j >= lo; j-- {
			if !c.entries.mayHave(chains[j]) {
				continue
			}
			e := c.entries.find(chains[j])
			if e == nil || e.expires < now {
				continue
			}
			// Every entry a breakpoint reads was used, not only the longest:
			// each one's TTL is refreshed (a system-prompt entry outlives a
			// broken message prefix).
			e.expires = now + e.ttl
			if j > hit {
				hit = j
			}
			break
		}
	}
	var use cacheUse
	if hit >= 0 {
		use.Read, use.whole = v.cum[hit], hit+1
	}
	// Writes: every breakpoint after the hit whose prefix reaches the minimum.
	b1h, last := hit, hit
	for _, m := range marks {
		if m.Index <= hit || m.Index >= n || v.cum[m.Index] < c.min {
			continue
		}
		ttl := ttlSeconds(m.TTL)
		c.entries.put(chains[m.Index], now, now+ttl, ttl)
		if m.TTL == "1h" && m.Index > b1h {
			b1h = m.Index
		}
		if m.Index > last {
			last = m.Index
		}
	}
	if last > hit {
		use.Write1h = v.written(b1h) - v.written(hit)
		use.Write5m = v.written(last) - v.written(b1h)
	}
	if c.entries.n > c.purgeAt {
		// The expired entries go, as good as absent already (time does not
		// go back); put grows the array when the live ones need room.
		clear(c.entries.seen[:]) // the entries kept are put again
		c.entries.resize(len(c.entries.slots), now)
		c.purgeAt = 2*c.entries.n + anthropicSlack
	}
	return use
}

// autoCache is OpenAI-style automatic prefix caching (PEERS.md §A.2): no
// breakpoints needed; once a request reaches the minimum, its prefix is
// stored, and a later request reads the longest stored prefix it shares,
// rounded down to the step (128 tokens). Entries live ttl seconds after their
// last write or reuse. Matching is at block boundaries, except that the
// first block differing from the previous request matches the tokens it
// shares with that request's block (the view's partial).
//
// The cache keeps each live request's prefix hashes. Because a prefix hash
// covers everything before it, the longest match with one stored request is
// found by binary search, and a stored request that is a prefix of a newer
// one is dropped (the newer covers it, and lives longer).
type autoCache struct {
	min, step int
	ttl       float64
	reqs      []storedPrefix
	// prevStored: the last of reqs is the previous request (it reached the
	// minimum), so the view's partial block is shared with it.
	prevStored bool
}

type storedPrefix struct {
	chains  []uint64
	expires float64
}

// commonChain is the length of the common prefix of two prefix-hash arrays.
func commonChain(a, b []uint64) int {
	n := min(len(a), len(b))
	if n == 0 || a[0] != b[0] {
		return 0
	}
	lo, hi := 1, n // a[:lo] is common; find the largest such lo
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if a[mid-1] == b[mid-1] {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func (c *autoCache) serve(v *prefixView, now float64) cacheUse {
	v.prefixes(len(v.chains))
	total := v.total()
	if total < c.min || total == 0 {
		c.prevStored = false
		return cacheUse{}
	}
	var prev []uint64
	if c.prevStored && len(c.reqs) > 0 && c.reqs[len(c.reqs)-1].expires >= now {
		prev = c.reqs[len(c.reqs)-1].chains
	}
	best := 0
	var reuse []uint64 // the array of a subsumed request, extended in place
	live := c.reqs[:0]
	for _, s := range c.reqs {
		if s.expires < now {
			continue
		}
		n := commonChain(s.chains, v.chains)
		best = max(best, n)
		if n == len(s.chains) {
			// Subsumed by this request: its prefix hashes are this request's.
			if len(s.chains) > len(reuse) {
				reuse = s.chains
			}
			continue
		}
		live = append(live, s)
	}
	matched := v.tokensThrough(best - 1)
	if v.partial > 0 && best == v.partialAt && best < len(prev) && commonChain(prev, v.chains) == best {
		// Matching is by token: the start of the first differing block,
		// shared with the previous request, is matched too.
		matched += v.partial
	}
	clear(c.reqs[len(live):])
	chains := append(reuse, v.chains[len(reuse):]...)
	c.reqs = append(live, storedPrefix{chains: chains, expires: now + c.ttl})
	c.prevStored = true
	read := matched / c.step * c.step
	if read < c.min {
		read = 0
	}
	return cacheUse{Read: read, Write5m: total - read}
}

// vllmCache is vLLM automatic prefix caching (PEERS.md §A.5): KV blocks of
// blockTokens identified by a hash chain, kept in an LRU free queue at a
// capacity in tokens; a finished request's blocks are queued in reverse order
// so that its tail is evicted first. Blocks are tracked per content block of
// the request (whose hash chain is exact), plus the tokens the first block
// that differs from the previous request shares with it (the view's
// partial); hits are rounded down to whole KV blocks. There are no write charges: a miss is recomputed.
//
// The previous request's blocks sit at the most-recent end of the queue in
// request order; the part of them a new request shares stays where it is,
// so a request that extends the previous one costs what it adds.
type vllmCache struct {
	block, capTokens int
	used             int
	m                map[uint64]*lruNode
	head, tail       *lruNode // head = least recently used
	last             []*lruNode
}

type lruNode struct {
	key        uint64
	tokens     int
	prev, next *lruNode
	gone       bool // evicted
}

func newVLLMCache(block, capTokens int) *vllmCache {
	return &vllmCache{block: block, capTokens: capTokens, m: map[uint64]*lruNode{}}
}

func (c *vllmCache) unlink(n *lruNode) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		c.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		c.tail = n.prev
	}
	n.prev, n.next = nil, nil
}

// insertBefore links n just on the least-recent side of at (at the most
// recent end when at is nil).
func (c *vllmCache) insertBefore(at, n *lruNode) {
	if at == nil {
		n.prev, n.next = c.tail, nil
		if c.tail != nil {
			c.tail.next = n
		} else {
			c.head = n
		}
		c.tail = n
		return
	}
	n.next, n.prev = at, at.prev
	if at.prev != nil {
		at.prev.next = n
	} else {
		c.head = n
	}
	at.prev = n
}

func (c *vllmCache) serve(v *prefixView, now float64) cacheUse {
	v.prefixes(len(v.chains))
	// The shared, still cached prefix of the previous request.
	k := 0
	for k < len(c.last) && k < len(v.chains) && !c.last[k].gone && c.last[k].key == v.chains[k] {
		k++
	}
	hit := k - 1
	for j := k; j < len(v.chains); j++ {
		if _, ok := c.m[v.chains[j]]; !ok {
			break
		}
		hit = j
	}
	matched := v.tokensThrough(hit)
	if v.partial > 0 && hit == k-1 && k == v.partialAt && k < len(c.last) && !c.last[k].gone {
		// KV blocks hash tokens: the start of the first differing block,
		// shared with the previous request's (still cached), matches too.
		matched += v.partial
	}
	read := matched / c.block * c.block
	// Queue the rest just behind the shared prefix, in request order, so the
	// head of the prompt is the most recently used and its tail goes first.
	var at *lruNode
	if k > 0 {
		at = c.last[k-1]
	}
	c.last = c.last[:k]
	for j := k; j < len(v.chains); j++ {
		n, ok := c.m[v.chains[j]]
		if ok {
			c.unlink(n)
		} else {
			n = &lruNode{key: v.chains[j], tokens: v.cum[j] - v.tokensThrough(j-1)}
			c.m[n.key] = n
			c.used += n.tokens
		}
		c.insertBefore(at, n)
		at = n
		c.last = append(c.last, n)
	}
	for c.used > c.capTokens && c.head != nil {
		n := c.head
		c.unlink(n)
		delete(c.m, n.key)
		n.gone = true
		c.used -= n.tokens
	}
	return cacheUse{Read: read}
}

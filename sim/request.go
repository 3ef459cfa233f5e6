package sim

import (
	"math"
	"strings"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// BlockKind says what a block of a request holds.
type BlockKind uint8

// The kinds of content a request block can hold.
const (
	BlockSystem      BlockKind = iota // system prompt or tool schemas
	BlockTask                         // the task text
	BlockUser                         // a human turn
	BlockAssistant                    // a model reply with its tool calls
	BlockToolResult                   // a tool's output
	BlockSummary                      // a summary written by a compaction
	BlockPlaceholder                  // a cleared tool result's placeholder
	BlockRegion                       // a region entry of the region engine
)

var blockKindNames = [...]string{"system", "task", "user", "assistant", "tool_result", "summary", "placeholder", "region"}

func (k BlockKind) String() string {
	if int(k) < len(blockKindNames) {
		return blockKindNames[k]
	}
	return "unknown"
}

// Block is one content block of a request, the unit that prefix stability,
// cache models and fact presence are measured on. Blocks are created once, when
// their content enters the context, with their tokens and hash computed then.
type Block struct {
	// The fields every request reads or writes come first: a request walks
	// dozens of blocks, and the engine's work between requests evicts them.
	// Slabs of blocks start 8 bytes into a cache line (the allocator's
	// header) and blocks are 224 bytes long, so that the 24 bytes from
	// offset 0 and each 32 from offset 24 on lie in one line: the region
	// policy's, those the meter reads of each block, those of a block that
	// is re-prefilled.
	key    uint64 // region policy: engine block identity
	pos    int    // region policy: index in the last request that held it; flat: the meter's key, see meter.settle
	used   int    // region policy: index in regionPolicy.cached; flat: see meter.settle
	Hash   uint64 // content hash: equal hashes mean equal content
	Tokens int
	// Meter state, kept on the block so that a request is walked once.
	since  int32 // first request of the block's current presence; -1 when absent
	places int32 // the block's places in the request measured last, see meter.counts
	// Refetched marks a tool result the simulated agent fetched again after
	// its first copy had been evicted.
	Refetched bool
	sent      bool  // has been in a request
	exempt    bool  // task and system content are never dead
	taskState uint8 // 0 unknown, 1 lacks the task text, 2 holds it
	Kind      BlockKind
	sigState  uint8 // 1 when sig is computed, 2 when the text has too many trigrams for one
	// slot is 1 + the index of the block's region in env.regionNames (0:
	// no region), so that dead tokens are summed per region without a map.
	slot uint16

	pendingTokens    int64 // tokens sent since the content was last used by a probe
	pendingReprefill int64 // of which re-prefilled
	// prior is the tokens at the block's start that an earlier block already
	// sent: a region's open chunk that grew holds its previous version.
	prior int
	// taskTokens is the tokens of the task text in a block that holds it but
	// is not a task or system block: they are never dead.
	taskTokens int32
	listed     int32 // the block's places in the meter's listed blocks (see meter.list)

	ID     string // the content's id: the event it came from, or a synthetic id
	Region string // region name for region-policy blocks, "" otherwise
	Text   string // content; "" when elided
	Size   int    // content length in bytes when Text is elided
	Facts  []trace.Fact

	nextUse int // clairvoyant: position of the next probe using the content
	sig     gramSig
	wide    *wideSig // for a text too long for sig: made at its first search, or grown from its previous version's
	textLen int      // Text's length, its runs written out, as counting found it; 0 if not known
}

// Has reports whether the block holds the fact: listed among its facts or, for
// text content, occurring verbatim.
func (b *Block) Has(f *trace.Probe) bool {
	for i := range b.Facts {
		if b.Facts[i].ID == f.Fact && f.Fact != "" {
			return true
		}
	}
	return b.Text != "" && containsText(b.Text, f.Text)
}

// containsText is strings.Contains of text, its runs of filler written out,
// and sub: no valid UTF-8 text matches inside an encoded run, so text need
// be written out only if sub has filler in it.
func containsText(text, sub string) bool {
	if strings.Contains(sub, fillerByte) && engine.HasFiller(text) {
		return searchText(engine.ExpandFiller(text), sub)
	}
	return searchText(text, sub)
}

// searchText is strings.Contains, faster for the long texts probes search
// (summaries of lines that all start alike, as facts do, where
// strings.Index's first-byte scan stops at every line): Horspool's search
// on byte pairs, each window moved by how far its last two bytes allow. A
// pair's shift is kept in one of 256 slots, the least of the pairs that
// share it, so it never skips a match. Windows whose last pair is the
// needle's are compared; if too many are in vain, strings.Contains ends it.
func searchText(s, p string) bool {
	m := len(p)
	if m < 8 || len(s) < 512 {
		return strings.Contains(s, p)
	}
	// A window whose last pair is none of p[:m-1]'s moves by d; less is
	// how much less one moves (zero as made: no per-search fill).
	d := uint(min(m-1, 255))
	var less [256]uint8
	for j := 1; j < m-1; j++ { // the pair ending at j: later ones move less
		less[pair(p[j-1], p[j])*gramMul>>24] = uint8(d - uint(min(m-1-j, 255)))
	}
	last := pair(p[m-2], p[m-1])
	fails := 0
	// The window's last pair is h[i], t[i]: i unsigned and below their
	// length, so that reading them is not checked.
	h, t := s[:len(s)-1], s[1:]
	for i := uint(m - 2); i < uint(len(t)); {
		x := pair(h[i], t[i])
		if x != last {
			i = i + d - uint(less[x*gramMul>>24])
			continue
		}
		if s[i+2-uint(m):i+2] == p {
			return true
		}
		if fails++; fails > 8+int(i>>5) {
			return strings.Contains(s[i+3-uint(m):], p)
		}
		i++ // any shift below Horspool's is safe
	}
	return false
}

// pair is a byte pair as one number; the top byte of its product with
// gramMul is its slot in searchText's shifts.
func pair(a, b byte) uint32 { return uint32(a) | uint32(b)<<8 }

// gramSig is a 256-bit set of a text's byte trigrams: a text that lacks one
// of a fact's trigrams cannot contain the fact, which rules out most blocks
// without searching them.
type gramSig [4]uint64

// gram is a trigram's bit: the top byte of a multiplicative hash.
func gram(a, b, c byte) uint {
	return uint((uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * gramMul >> 24)
}

const gramMul = 0x9e3779b1

func sigOf(s string) gramSig {
	var g gramSig
	g.addLong(s)
	return g
}

// gramAdder is a set of trigrams: a signature or a wide one.
type gramAdder interface {
	add(s string)
	add3(a, b, c byte)
}

// gramWriter adds the trigrams of a text written in pieces to g.
type gramWriter[S gramAdder] struct {
	g    S
	a, b byte // the last two bytes written
	n    int  // how many bytes were written, up to 2
}

func (w *gramWriter[S]) write(s string) {
	if len(s) == 0 {
		return
	}
	// The trigrams that start before s.
	if w.n == 2 {
		w.g.add3(w.a, w.b, s[0])
	}
	if w.n >= 1 && len(s) >= 2 {
		w.g.add3(w.b, s[0], s[1])
	}
	w.g.add(s)
	if len(s) >= 2 {
		w.a, w.b, w.n = s[len(s)-2], s[len(s)-1], 2
	} else {
		w.a, w.b, w.n = w.b, s[0], min(w.n+1, 2)
	}
}

// addSpan adds the trigrams of seg with "~~" before it if a run of filler
// precedes it, and "~~~" after it if one follows (the trigrams of the text
// written out); not generic, so that a signature on the stack stays there.
func (g *gramSig) addSpan(seg string, after, before bool) {
	if len(seg) < 2 {
		g.addShort(seg, after, before)
		return
	}
	const f = engine.FillerByte
	if after {
		g.add3(f, f, seg[0])
		g.add3(f, seg[0], seg[1])
	}
	switch {
	case len(seg) < 8:
		g.add(seg)
	case seg[0] == pointerHead[0] && g.addPointer(seg):
	default:
		g.addLong(seg)
	}
	if before {
		n := len(seg)
		g.add3(seg[n-2], seg[n-1], f)
		g.add3(seg[n-1], f, f)
		g.add3(f, f, f)
	}
}

// addShort is addSpan for a segment of less than two bytes (a line break
// between runs): the trigrams of "~~" + seg + "~~~", or of what it has.
func (g *gramSig) addShort(seg string, after, before bool) {
	const f = engine.FillerByte
	if len(seg) == 0 {
		if before {
			g.add3(f, f, f)
		}
		return
	}
	c := seg[0]
	if after {
		g.add3(f, f, c)
	}
	if after && before {
		g.add3(f, c, f)
	}
	if before {
		g.add3(c, f, f)
		g.add3(f, f, f)
	}
}

func (g *gramSig) add3(a, b, c byte) {
	k := gram(a, b, c)
	g[k>>6] |= 1 << (k & 63)
}

// add adds the trigrams of s to g: in a copy (no nil check per byte), the
// last bytes kept in one word.
func (g *gramSig) add(s string) {
	if len(s) < 3 {
		return
	}
	w := *g
	x := uint32(s[0])<<8 | uint32(s[1])
	for i := 2; i < len(s); i++ {
		x = x<<8 | uint32(s[i])
		k := (x & 0xFFFFFF) * gramMul >> 24 // gram of the last three bytes
		w[k>>6] |= 1 << (k & 63)
	}
	*g = w
}

// addLong is add for a long text: six trigrams from each 8 bytes read as
// one word, a third fewer instructions than byte by byte. A trigram's gram
// is the top byte of its product, whose top two bits pick the word: no
// temporary for the gram, which made the compiler spill registers.
func (g *gramSig) addLong(s string) {
	w := *g
	j := 0
	for ; j+8 <= len(s); j += 6 {
		b := s[j : j+8] // one load, its bytes swapped
		x := uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
			uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
		p := uint32(x>>40) * gramMul
		w[p>>30] |= 1 << (p >> 24 & 63)
		p = uint32(x>>32) & 0xFFFFFF * gramMul
		w[p>>30] |= 1 << (p >> 24 & 63)
		p = uint32(x>>24) & 0xFFFFFF * gramMul
		w[p>>30] |= 1 << (p >> 24 & 63)
		p = uint32(x>>16) & 0xFFFFFF * gramMul
		w[p>>30] |= 1 << (p >> 24 & 63)
		p = uint32(x>>8) & 0xFFFFFF * gramMul
		w[p>>30] |= 1 << (p >> 24 & 63)
		p = uint32(x) & 0xFFFFFF * gramMul
		w[p>>30] |= 1 << (p >> 24 & 63)
	}
	w.add(s[j:])
	*g = w
}

// The fixed parts of the pointer the engine leaves in the conversation for
// a tool result stored whole in a region ("[output (N tokens) is in your
// context under the 'R' heading - ... Preview: "), nearly every tool
// result's: their trigrams are hashed once.
const (
	pointerHead = "[output ("
	pointerA    = " tokens) is in your context under the '"
	pointerB    = "' heading - it is already in this prompt, so no tool call is needed to see it. Preview: "
)

// pointerSig holds the trigrams within the pointer's fixed parts.
var pointerSig = sigOf(pointerHead).union(sigOf(pointerA)).union(sigOf(pointerB))

// pointerParts are where the variable parts of such a pointer end or start:
// the end of its number, its region's name, and the start of its preview.
type pointerParts struct{ num, name, nameEnd, preview int }

// splitPointer finds the parts of s if it is such a pointer.
func splitPointer(s string) (pointerParts, bool) {
	const ab = len(pointerHead) + len(pointerA) + len(pointerB)
	if len(s) < ab || s[:len(pointerHead)] != pointerHead {
		return pointerParts{}, false
	}
	i := len(pointerHead)
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if !strings.HasPrefix(s[i:], pointerA) {
		return pointerParts{}, false
	}
	j := i + len(pointerA)
	k := strings.IndexByte(s[j:], pointerB[0])
	if k < 0 || !strings.HasPrefix(s[j+k:], pointerB) {
		return pointerParts{}, false
	}
	return pointerParts{num: i, name: j, nameEnd: j + k, preview: j + k + len(pointerB)}, true
}

// addPointer adds the trigrams of s if it is such a pointer, and reports
// whether it is: the trigrams of its variable parts and across their ends
// are hashed, those within the fixed parts are taken from their signatures.
func (g *gramSig) addPointer(s string) bool {
	pp, ok := splitPointer(s)
	if !ok {
		return false
	}
	w := *g
	w.add(s[len(pointerHead)-2 : pp.num+2]) // across the head's end, the number, across A's start
	w.add(s[pp.name-2 : pp.nameEnd+2])      // across A's end, the region's name, across B's start
	w.addLong(s[pp.preview-2:])             // from across B's end on: the preview
	*g = w.union(pointerSig)
	return true
}

// union is the set of the trigrams of g and of h.
func (g gramSig) union(h gramSig) gramSig {
	return gramSig{g[0] | h[0], g[1] | h[1], g[2] | h[2], g[3] | h[3]}
}

// covers reports whether every trigram of need is in g.
func (g *gramSig) covers(need *gramSig) bool {
	return need[0]&^g[0] == 0 && need[1]&^g[1] == 0 && need[2]&^g[2] == 0 && need[3]&^g[3] == 0
}

// sigMaxBytes: longer texts hold nearly every trigram, so no signature.
const sigMaxBytes = 2048

// hasFact is Has with the fact's signature computed once by the caller.
func (b *Block) hasFact(f *trace.Probe, need *gramSig) bool {
	for i := range b.Facts {
		if b.Facts[i].ID == f.Fact && f.Fact != "" {
			return true
		}
	}
	if b.Text == "" || len(b.Text) < len(f.Text) && !engine.HasFiller(b.Text) {
		return false
	}
	if b.sigState == 0 && len(b.Text) <= sigMaxBytes {
		signText(&b.sig, b.Text, 0, math.MaxInt)
		b.sigState = 1
	}
	if b.sigState == 1 && !b.sig.covers(need) {
		return false
	}
	if b.sigState == 2 {
		// Long texts (summaries, instructions) are searched for many facts:
		// a wider set of their trigrams rules most of them out.
		if b.wide == nil {
			b.wide = new(wideSig)
			signText(b.wide, b.Text, 0, math.MaxInt) // skipping runs of filler
		}
		if !b.wide.holds(f.Text) {
			return false
		}
	}
	return containsText(b.Text, f.Text)
}

// signLong marks block b, a region's chunk, as too long for a signature
// and makes its wide one from a's, the chunk's previous version, as the
// meter would at b's arrival (see extendWide), without first signing b in
// vain.
func signLong(b, a *Block) {
	b.sigState = 2
	extendWide(b, a)
}

// wideSig is a 4096-bit set of a long text's byte trigrams.
type wideSig [64]uint64

func wideGram(a, b, c byte) uint32 {
	return (uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * gramMul >> 20
}

func (w *wideSig) add3(a, b, c byte) {
	k := wideGram(a, b, c)
	w[k>>6] |= 1 << (k & 63)
}

// add adds the trigrams of s to w: six from each 8 bytes read as one word,
// as gramSig.addLong does, then the last bytes kept in one word as
// gramSig.add does.
func (w *wideSig) add(s string) {
	j := 0
	for ; j+8 <= len(s); j += 6 {
		b := s[j : j+8]
		x := uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
			uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
		p := uint32(x>>40) * gramMul // wideGram is its top 12 bits
		w[p>>26] |= 1 << (p >> 20 & 63)
		p = uint32(x>>32) & 0xFFFFFF * gramMul
		w[p>>26] |= 1 << (p >> 20 & 63)
		p = uint32(x>>24) & 0xFFFFFF * gramMul
		w[p>>26] |= 1 << (p >> 20 & 63)
		p = uint32(x>>16) & 0xFFFFFF * gramMul
		w[p>>26] |= 1 << (p >> 20 & 63)
		p = uint32(x>>8) & 0xFFFFFF * gramMul
		w[p>>26] |= 1 << (p >> 20 & 63)
		p = uint32(x) & 0xFFFFFF * gramMul
		w[p>>26] |= 1 << (p >> 20 & 63)
	}
	if len(s)-j < 3 {
		return
	}
	x := uint32(s[j])<<8 | uint32(s[j+1])
	for i := j + 2; i < len(s); i++ {
		x = x<<8 | uint32(s[i])
		k := (x & 0xFFFFFF) * gramMul >> 20 // wideGram of the last three bytes
		w[k>>6] |= 1 << (k & 63)
	}
}

// holds reports whether w has every trigram of s.
func (w *wideSig) holds(s string) bool {
	if len(s) < 3 {
		return true
	}
	x := uint32(s[0])<<8 | uint32(s[1])
	for i := 2; i < len(s); i++ {
		x = x<<8 | uint32(s[i])
		k := (x & 0xFFFFFF) * gramMul >> 20
		if w[k>>6]&(1<<(k&63)) == 0 {
			return false
		}
	}
	return true
}

// CacheMark is a cache breakpoint: the prefix up to and including block Index
// is to be cached for TTL ("5m" or "1h").
type CacheMark struct {
	Index int
	TTL   string
}

// Request is what a policy would send at one inference: the ordered blocks
// (tools and system first, then messages) and the cache breakpoints the agent
// asks for. Policies own the slices; meters read them before the next call.
type Request struct {
	Blocks []*Block
	Marks  []CacheMark
	// Regions is the per-region occupancy (sorted by name) for region policies,
	// filled only when the run has a SeriesSink.
	Regions []RegionTokens
	// same is a policy's promise that its first same blocks are the very
	// blocks of its previous request (0 promises nothing).
	same int
	// kept is a policy's promise that it leaves the array of Blocks as it is
	// until its next request has been measured: the meter keeps the array as
	// the previous request instead of copying it.
	kept bool
	// gone, when tracked, holds the ranges of the previous request's blocks
	// that may have left (the rest of a request that changed near its
	// start): each other block of it is in this request at an index no
	// lower than its own or keptFrom, so that only gone is walked for
	// blocks that left; those between the two ranges are this request's
	// from keptFrom on, in order, so that the meter need not walk them.
	gone     [2]span
	keptFrom int
	tracked  bool
	// dropped is a flat policy's report that of the last request's blocks
	// from same on, only the first dropped left: the others are this
	// request's from same on, in order, before those it added.
	dropped int
	// repeats is a policy's warning that it may list a block more than once
	// (identical content shares one block); without it, each block is
	// listed at most once.
	repeats bool
}

// span is the range [lo, hi) of a request's blocks.
type span struct{ lo, hi int }

// Tokens returns the request's total tokens.
func (r *Request) Tokens() int {
	n := 0
	for _, b := range r.Blocks {
		n += b.Tokens
	}
	return n
}

// RegionTokens is one region's occupancy in a request.
type RegionTokens struct {
	Name   string
	Tokens int
}

// contentStat is what the meters know of one content id.
type contentStat struct {
	arrivedAt int64     // env.arrived when the content first entered the context
	blocks    []*Block  // the blocks that carried it first-hand (not refetched copies)
	first     [1]*Block // blocks' first backing array: most content has one block
	entered   bool      // the content entered the context (arrivedAt is set)
	// The tool result of this id, kept for refetch, and its tool's latency:
	// the runner enters it before a policy records its block.
	result  *trace.Event
	latency float64
}

func hashContent(kind BlockKind, id, text string, size int) uint64 {
	// FNV-1a, written out so that hashing allocates nothing.
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	k := byte(kind)
	if kind == BlockToolResult {
		// A tool's output is the same content whether first fetched or refetched.
		k = byte(BlockToolResult)
	}
	h = (h ^ uint64(k)) * prime
	if text == "" {
		// Elided content is identified by its source event.
		for i := 0; i < len(id); i++ {
			h = (h ^ uint64(id[i])) * prime
		}
		for i := 0; i < 8; i++ {
			h = (h ^ uint64(byte(size>>(8*i)))) * prime
		}
		return h
	}
	for i := 0; i < len(text); i++ {
		h = (h ^ uint64(text[i])) * prime
	}
	return h
}

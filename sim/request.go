package sim

import (
	"hash/fnv"
	"strings"

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
	ID     string // the content's id: the event it came from, or a synthetic id
	Kind   BlockKind
	Region string // region name for region-policy blocks, "" otherwise
	Text   string // content; "" when elided
	Size   int    // content length in bytes when Text is elided
	Facts  []trace.Fact
	Tokens int
	Hash   uint64 // content hash: equal hashes mean equal content
	// Refetched marks a tool result the simulated agent fetched again after
	// its first copy had been evicted.
	Refetched bool

	// Meter state, kept on the block so that a request is walked once.
	since            int   // first request of the block's current presence; -1 when absent
	seenAt           int   // last request that listed the block after the common prefix
	pendingTokens    int64 // tokens sent since the content was last used by a probe
	pendingReprefill int64 // of which re-prefilled
	sent             bool  // has been in a request
	exempt           bool  // task and system content are never dead
	taskState        uint8 // 0 unknown, 1 lacks the task text, 2 holds it
	nextUse          int   // clairvoyant: position of the next probe using the content

	// Region policy state.
	key  uint64 // engine block identity
	pos  int    // index in the last request that held it
	used int    // last request that held it
}

// Has reports whether the block holds the fact: listed among its facts or, for
// text content, occurring verbatim.
func (b *Block) Has(f *trace.Probe) bool {
	for i := range b.Facts {
		if b.Facts[i].ID == f.Fact && f.Fact != "" {
			return true
		}
	}
	if b.Text != "" && len(b.Text) >= len(f.Text) {
		return strings.Contains(b.Text, f.Text)
	}
	return false
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
	// Regions is the per-region occupancy (sorted by name) for region policies.
	Regions []RegionTokens
	// same is a policy's promise that its first same blocks are the very
	// blocks of its previous request (0 promises nothing).
	same int
}

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
	arrivedAt int64    // env.arrived when the content first entered the context
	blocks    []*Block // the blocks that carried it first-hand (not refetched copies)
}

func hashContent(kind BlockKind, id, text string, size int) uint64 {
	h := fnv.New64a()
	var k [1]byte
	k[0] = byte(kind)
	if kind == BlockToolResult || kind == BlockPlaceholder {
		// A tool's output is the same content whether first fetched or refetched.
		k[0] = byte(BlockToolResult)
		if kind == BlockPlaceholder {
			k[0] = byte(BlockPlaceholder)
		}
	}
	h.Write(k[:])
	if text == "" {
		// Elided content is identified by its source event.
		h.Write([]byte(id))
		var s [8]byte
		for i := range s {
			s[i] = byte(size >> (8 * i))
		}
		h.Write(s[:])
	} else {
		h.Write([]byte(text))
	}
	return h.Sum64()
}

// chain combines a prefix hash with the next block's hash.
func chain(prefix, block uint64) uint64 {
	x := prefix ^ (block + 0x9e3779b97f4a7c15 + (prefix << 6) + (prefix >> 2))
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func containsText(s, sub string) bool { return strings.Contains(s, sub) }

package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Role is who a message or block speaks for.
type Role uint8

// Roles.
const (
	RoleSystem Role = iota
	RoleUser
	RoleAssistant
)

func (r Role) String() string {
	switch r {
	case RoleSystem:
		return "system"
	case RoleUser:
		return "user"
	case RoleAssistant:
		return "assistant"
	}
	return fmt.Sprintf("Role(%d)", r)
}

// BlockType is the shape of a block.
type BlockType uint8

// Block types.
const (
	BlockText BlockType = iota
	BlockToolUse
	BlockToolResult
)

func (t BlockType) String() string {
	switch t {
	case BlockText:
		return "text"
	case BlockToolUse:
		return "tool_use"
	case BlockToolResult:
		return "tool_result"
	}
	return fmt.Sprintf("BlockType(%d)", t)
}

// Block is one piece of a request: a system block or a block of a message.
//
// The one-byte fields come last, together: every request copies its blocks
// and messages, and packed they are 112 bytes rather than 136 (messages 32
// rather than 40).
type Block struct {
	Region     string
	Text       string
	Tokens     int
	Hash       uint64 // XXH64 of the content (text, or id/name/args for tool use)
	ToolCallID string // tool_use and tool_result
	ToolName   string // tool_use
	Args       json.RawMessage

	Role       Role
	Type       BlockType
	Cache      CacheHint
	Volatility Volatility
	Breakpoint bool // a cache breakpoint goes after this block
	IsError    bool
}

// Message is one provider message.
type Message struct {
	Blocks     []Block
	Role       Role
	Breakpoint bool
}

// Tokens sums the message's blocks.
func (m Message) Tokens() int {
	t := 0
	for i := range m.Blocks {
		t += m.Blocks[i].Tokens
	}
	return t
}

// Request is an assembled request. It and its System and Messages slices
// are the assembler's and are valid until the next-but-one call of
// Assemble (they are reused then): read them before, or Clone to keep.
// Consecutive requests may share slices and text.
type Request struct {
	System       []Block
	Messages     []Message
	Tokens       int
	SystemTokens int
	SystemHash   uint64
	// SameSystem, SameMessages and DroppedMessages say how much of the
	// request is as the previous one was, so that a caller converts only
	// the rest: System[:SameSystem] equal the previous request's
	// System[:SameSystem], and Messages[:SameMessages] its Messages[d:]
	// from d = DroppedMessages on (the first messages, which left with the
	// oldest entries of a sliding window), in every field but Cache and
	// Breakpoint (of blocks and messages), which are set per request. Each
	// is the longest such run (0 for the first request of a Context).
	SameSystem, SameMessages, DroppedMessages int
	// SystemBreakpoints are the indices of the system blocks flagged with
	// a breakpoint, in order (-1 for none, last), and FlaggedMessage that
	// of the message flagged (-1: none), so that a caller finds them
	// without reading every block and message.
	SystemBreakpoints [2]int
	FlaggedMessage    int
}

// Clone returns a copy of the request that later calls of Assemble leave
// as it is.
func (req *Request) Clone() *Request {
	out := *req
	out.System = slices.Clone(req.System)
	out.Messages = slices.Clone(req.Messages)
	for i := range out.Messages {
		out.Messages[i].Blocks = slices.Clone(out.Messages[i].Blocks)
	}
	return &out
}

// WriteText writes the request in a stable, diffable text form: one line
// per block with its region, cache hint, volatility, tokens, hash and
// breakpoint, and the quoted text under it.
func (req *Request) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "tokens=%d system_tokens=%d system_hash=%016x\n", req.Tokens, req.SystemTokens, req.SystemHash)
	for i, blk := range req.System {
		fmt.Fprintf(bw, "system[%d] region=%s cache=%v volatility=%v tokens=%d hash=%016x breakpoint=%v\n  %q\n", i, blk.Region, blk.Cache, blk.Volatility, blk.Tokens, blk.Hash, blk.Breakpoint, blk.Text)
	}
	for i, m := range req.Messages {
		fmt.Fprintf(bw, "message[%d] role=%v breakpoint=%v\n", i, m.Role, m.Breakpoint)
		for _, blk := range m.Blocks {
			fmt.Fprintf(bw, "  %v region=%s tokens=%d hash=%016x", blk.Type, blk.Region, blk.Tokens, blk.Hash)
			if blk.ToolCallID != "" {
				fmt.Fprintf(bw, " id=%s", blk.ToolCallID)
			}
			if blk.ToolName != "" {
				fmt.Fprintf(bw, " tool=%s args=%s", blk.ToolName, blk.Args)
			}
			fmt.Fprintf(bw, "\n    %q\n", blk.Text)
		}
	}
	return bw.Flush()
}

// CacheChunkTokens is the size at which grows regions are cut into blocks.
const CacheChunkTokens = 2048

// chunkSlabBytes is the size of the buffers a grows region writes its
// chunks into, one after another: a buffer per chunk cost an allocation
// (and a fresh span) per chunk.
const chunkSlabBytes = 64 << 10

// maxSystemCacheRuns caps RecentlyChanged retagging (block_cache.rs).
const maxSystemCacheRuns = 3

// rendered is a region's cached rendering.
type rendered struct {
	valid   bool
	version uint64
	blocks  []Block
	// The region's newest write at the render, which its blocks share (for
	// RecentlyChanged).
	stamp       uint64
	chunkStarts []int
	msgs        []Message
	// Single-block regions that only grew since the last render extend
	// their text and hash instead of rebuilding them.
	text   strings.Builder
	count  int    // entries in text
	bodyAt int    // where the entries start in the one block's text; 0: not that shape
	hash   hasher // XXH64 state after text
	// Grows regions: the last chunk is text from at on (text is a slab
	// that holds the chunks one after another), with headTokens for its
	// heading and tailSum for its entries. A chunk's text is hashed whole
	// (hashText), not streamed: it is short (under CacheChunkTokens before
	// an append; elided content is encoded), and a second XXH64 code path
	// (the Digest's) would be code fetched for every request.
	at, headTokens, tailSum int
	cont                    string // the heading of every chunk but the first
	// Sliding windows: what finishMessages needs to know of msgs, and
	// where each message starts, kept as they are built (msgInfo[i].at is
	// the entry msgs[i] starts at, plus atOff); the leading messages the
	// last render kept as they were. Messages that leave from the front
	// leave room before msgs (and msgInfo) in their arrays, msgArr and
	// infoArr, where the render that would outgrow them moves them.
	msgInfo []msgInfo
	msgArr  []Message
	infoArr []msgInfo
	atOff   int
	// What msgInfo's sums (tokens, users, bad) count of the messages that
	// left from the front: a drop moves the sums down without rewriting them.
	base    struct{ tokens, users, bad int }
	kept    int
	sysKept int // leading blocks the last render kept as they were
	dropped int // leading messages the last render dropped, before kept
	// What is left of the slabs its entries' messages are cut from (a
	// window's entries leave in about the order they came).
	msgSlab   []Message
	blockSlab []Block
	// Messages of entries that left, in the order they left, with the
	// assembler's count then: a ring of maxRetired, of which the
	// retiredN from retiredAt on are held; now is its count at this
	// render.
	retired             []retiredMsg
	retiredAt, retiredN int
	now                 uint64
}

// maxRetired caps a window's retired messages (a power of two: the ring's
// indices wrap with a mask).
const maxRetired = 256

type retiredMsg struct {
	m  *Message
	at uint64
}

// msgInfo sums a sliding window's messages up to and including one, so
// that a request whose messages need no stripping nor dropping is finished
// without walking them all (finishPaired).
type msgInfo struct {
	at            int // the entry the message starts at, plus atOff
	tokens, users int
	// Messages that stripOrphans or the dropping of empty messages would
	// change: no blocks, empty, or not paired with the message before.
	bad           int
	uses, results bool // this message holds tool_use / tool_result blocks
}

// sysGroup is one region's system blocks, sorted by tier then hint, of
// which the first kept are as at the last build.
type sysGroup struct {
	tier, prio int
	blocks     []Block
	r          *region
	kept       int
	stamp      uint64 // its blocks'
}

// sysSlot is a region's place in the system blocks of a build.
type sysSlot struct {
	r          *region
	n          int // blocks
	tier, prio int
	// Every block of a region shares its stamp and hint: what retagging
	// needs of the slot.
	stamp uint64
	until bool // hint UntilChanged
	// Rendered since the last build (renderChanged says so): the other
	// slots' regions kept their n blocks, and keptLayout reads none of them.
	changed bool
}

// sysSum sums a build's system blocks up to and including one, for the
// next build to go on from the first block that changed.
type sysSum struct {
	tokens, runs, stableUpTo int
	hash                     uint64
	hint                     CacheHint
	allStable                bool
}

// sysMarks is what finishing a build changed in its blocks: the
// breakpoints it placed and the first block it retagged (-1: none).
type sysMarks struct {
	at    [2]int
	retag int
}

// maxChanged caps the system regions the assembler lists as changed
// between requests; past it, it walks them all.
const maxChanged = 8

type assembler struct {
	groups []sysGroup // reused by every request
	// The regions of the last build of the system blocks, in order.
	layout, spareLayout []sysSlot
	orderChanged        bool
	// The visible regions that give system blocks and the sliding windows,
	// in order, listed when the regions or their order last changed (or
	// anew when listed is false), and whether a custom region is visible.
	sysRegs, winRegs  []*region
	listed, hasCustom bool
	// A visible region of each side changed since its last build (set by
	// region.touch): Assemble walks no region to find out. The system
	// regions that changed are listed too, unless more than maxChanged
	// (manyChanged); spareChanged is the list not in use.
	sysTouched, msgTouched bool
	// The sliding windows that had messages at the last rebuild, in
	// order: the others, empty and untouched since, add nothing to a
	// request, and are walked only once one is touched (emptyTouched) or
	// the windows are listed anew.
	liveWins                 []*region
	emptyTouched             bool
	sysChanged, spareChanged []*region
	manyChanged              bool
	system                   []Block
	sysTokens                int
	sysHash                  uint64
	prevSysHash              uint64
	havePrev                 bool
	msgs                     []Message
	msgTokens                int
	// The slices the previous request but one was built in: a request's
	// slices stay as they are until the next-but-one Assemble, then are
	// reused (an allocation and its scanning per changed request).
	spareSys  []Block
	spareMsgs []Message
	sysLead   int // leading blocks of the last build as at the build before
	// The sums of the last build's system blocks, and what finishing the
	// last build (the one before) changed in system (spareSys).
	sysSums              []sysSum
	sysMarks, spareMarks sysMarks
	spareMark            []Block // markMessageBreakpoint's copies, likewise
	mark                 []Block
	msgSysChgd           bool
	// The sliding windows of the last rebuild of the messages (compared
	// with winRegs only if they were listed since: winsListed), and how
	// many of their leading messages were as at the rebuild before (lead).
	// msgsOK of msgs (spareOK of spareMsgs) hold the windows' messages of
	// their rebuild, but for the one marked (msgsMarked, spareMarked; -1).
	wins                    []*region
	winsListed              bool
	lead, msgsOK, spareOK   int
	moved                   bool // the last rebuild dropped leading messages
	general                 bool // tests: no fast path (grewOne, one window)
	msgsMarked, spareMarked int
	flagged                 int         // the message flagged in msgs, or -1
	begin, cont             Message     // finishing's "Begin." and "Continue."
	reqs                    *[3]Request // handed out in turn
	stableChanges           map[string]int
	uses, results           map[string]bool // finishMessages' tool call ids
	count                   uint64          // calls of Assemble
	// Lent requests (LendRequests): the last request's messages were the
	// window's own (plain) or a finished copy in own (lent either way), of
	// which the copying path above keeps nothing.
	lend, lent, plain bool
	own, spareOwn     []Message
	pure              bool // the last build's system blocks carry no flags
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Assemble runs the window-level cascade if usage crossed its trigger, then
// builds the request: system blocks ordered by volatility tier then cache
// hint, and every sliding_window region as messages. Only regions that
// changed since the last call are rendered again.
func (c *Context) Assemble() *Request {
	a := &c.asm
	a.count++
	c.maybeEvict()
	relist := a.orderChanged || !a.listed
	if relist {
		a.listRegions(c.regions)
	}
	hasCustom := a.hasCustom
	// Changes made while this request is built are left for the next one.
	sysTouched, msgTouched := a.sysTouched, a.msgTouched
	wins := a.liveWins
	if relist || a.emptyTouched || hasCustom {
		wins = a.winRegs
	}
	a.emptyTouched = false
	changed, many := a.sysChanged, a.manyChanged
	a.sysTouched, a.msgTouched = false, false
	a.sysChanged, a.manyChanged = a.spareChanged[:0], false
	sysDirty := relist || hasCustom || sysTouched || a.system == nil
	sameSys, sameMsgs, dropMsgs := len(a.system), len(a.msgs), 0
	var preamble []Message
	if sysDirty {
		sameSys, preamble = c.buildSystem(changed, relist || hasCustom || many)
	}
	a.spareChanged = changed[:0]
	sysChanged := a.havePrev && a.sysHash != a.prevSysHash
	msgDirty := a.orderChanged || hasCustom || msgTouched || a.msgs == nil || sysChanged != a.msgSysChgd
	if msgDirty && a.lend && len(wins) == 1 && len(preamble) == 0 && !a.winsListed && !a.general {
		sameMsgs, dropMsgs = c.lendWindow(wins[0], sysChanged)
	} else if msgDirty {
		if a.lent {
			// The window's own messages are not a buffer to build in.
			a.msgs, a.msgsOK, a.lent, a.plain = nil, 0, false, false
		}
		var msgs []Message
		var lead, drop, tokens, users, bad int
		if len(wins) == 1 && len(preamble) == 0 && !a.winsListed && !a.general {
			msgs, lead, drop, tokens, users, bad = c.oneWindow(wins[0])
		} else {
			msgs, lead, drop, tokens, users, bad = c.windows(wins, preamble)
		}
		if old := a.spareMsgs; len(old) > len(msgs) {
			clear(old[len(msgs):]) // holds no stale blocks
		}
		prevOK := a.msgsOK
		a.spareMsgs, a.spareOK, a.spareMarked = a.msgs, a.msgsOK, a.msgsMarked
		a.msgsOK, a.msgsMarked = 0, -1
		if bad == 0 {
			if len(preamble) == 0 {
				a.msgsOK = len(msgs)
			}
			a.msgs, a.msgTokens, a.msgsMarked = a.finishPaired(msgs, sysChanged, tokens, users > 0)
			a.flagged = a.msgsMarked
		} else {
			a.msgs, a.msgTokens, a.flagged = a.finishMessages(msgs, sysChanged)
		}
		a.lead = lead
		if drop > 0 {
			a.lead = 0
		}
		a.moved = drop > 0
		a.msgSysChgd = sysChanged
		dropMsgs = min(drop, len(a.spareMsgs))
		sameMsgs = sameMessages(a.spareMsgs[dropMsgs:], a.msgs, max(min(lead, prevOK-dropMsgs), 0))
	}
	a.orderChanged = false
	a.prevSysHash, a.havePrev = a.sysHash, true
	// A request is valid until the next-but-one Assemble: three serve.
	if a.reqs == nil {
		a.reqs = new([3]Request)
	}
	req := &a.reqs[a.count%uint64(len(a.reqs))]
	marks := a.sysMarks.at
	if marks[0] < 0 || marks[1] >= 0 && marks[1] < marks[0] {
		marks[0], marks[1] = marks[1], marks[0]
	}
	// Field by field: a composite literal is built aside, then copied.
	req.System, req.Messages = a.system, a.msgs
	req.Tokens, req.SystemTokens, req.SystemHash = a.sysTokens+a.msgTokens, a.sysTokens, a.sysHash
	req.SameSystem, req.SameMessages, req.DroppedMessages = sameSys, sameMsgs, dropMsgs
	req.SystemBreakpoints, req.FlaggedMessage = marks, a.flagged
	return req
}

// windows renders the sliding windows wins and lists their messages after
// preamble, in the spare buffer, with how many lead the last rebuild's as
// they were, how many left from the front, and the sums finishing needs.
func (c *Context) windows(wins []*region, preamble []Message) (msgs []Message, lead, drop, tokens, users, bad int) {
	a := &c.asm
	// Sized once (with room for finishMessages' "Begin."/"Continue.")
	// rather than grown region by region: the request keeps it.
	n := len(preamble) + 2
	// lead counts the leading window messages that are as they were at
	// the last rebuild, less the drop first ones that left with the
	// oldest entries of the first window that has messages: those of
	// windows not rendered again, then those the first window rendered
	// again kept.
	leading := len(preamble) == 0
	for _, r := range wins {
		rd := &r.rend
		before := len(rd.msgs)
		rd.kept, rd.dropped = before, 0 // unless rendered again
		if !rd.valid || rd.version != r.version {
			c.renderRegion(r)
		}
		n += len(rd.msgs)
		if leading && rd.dropped > 0 {
			if lead > 0 || drop > 0 {
				leading = false
			} else {
				drop = rd.dropped
			}
		}
		if leading {
			lead += rd.kept
			leading = rd.kept == before-rd.dropped && rd.kept == len(rd.msgs)
		}
	}
	if a.winsListed {
		if !slices.Equal(a.winRegs, a.wins) {
			lead, drop = 0, 0
		}
		a.wins, a.winsListed = append(a.wins[:0], a.winRegs...), false
	}
	if drop > 0 && lead == 0 {
		drop = 0
	}
	// The spare buffer holds the messages of the rebuild before last:
	// its leading slots that hold what they would be given (the same
	// since then, and not the one it marked) are left as they are.
	keep := min(lead, a.lead, a.spareOK)
	if drop > 0 {
		keep = 0 // the spare slots hold messages since moved
	}
	if cap(a.spareMsgs) < n {
		keep = 0
	}
	// The slot it marked is written again, alone.
	fix := -1
	if a.spareMarked >= 0 && a.spareMarked < keep {
		fix = a.spareMarked
	}
	msgs = append(slices.Grow(a.spareMsgs[:0], n), preamble...)
	// After a drop the spare slots, of the rebuild before it, hold
	// their messages elsewhere too.
	moved := a.moved
	// The windows' sums say whether finishMessages would strip or drop
	// anything; the seams between windows are checked here.
	bad = len(preamble)
	var last *Message
	var lastInfo msgInfo
	live := a.liveWins[:0]
	for _, r := range wins {
		if len(r.rend.msgs) > 0 {
			live = append(live, r)
			rd := &r.rend
			if drop > 0 || moved {
				msgs = append(msgs, rd.msgs...) // every slot moved: one copy
			} else {
				base := len(msgs)
				skip := min(max(keep-base, 0), len(rd.msgs))
				msgs = appendMessages(msgs[:base+skip], rd.msgs[skip:])
				if fix >= base && fix < base+skip {
					msgs[fix] = rd.msgs[fix-base]
				}
			}
			end := rd.msgInfo[len(rd.msgInfo)-1]
			end.tokens, end.users, end.bad = end.tokens-rd.base.tokens, end.users-rd.base.users, end.bad-rd.base.bad
			tokens, users, bad = tokens+end.tokens, users+end.users, bad+end.bad
			if last == nil && rd.msgInfo[0].results || last != nil && (lastInfo.uses || rd.msgInfo[0].results) && !pairOK(last, &rd.msgs[0]) {
				bad++
			}
			last, lastInfo = &rd.msgs[len(rd.msgs)-1], end
		}
	}
	a.liveWins = live
	if lastInfo.uses {
		bad++
	}
	return msgs, lead, drop, tokens, users, bad
}

// oneWindow is windows for the usual request: one window, no preamble,
// and windows not listed anew. Straight-line code: the walk's loops and
// seams cost as much again, in instructions and in code fetched.
func (c *Context) oneWindow(r *region) (msgs []Message, lead, drop, tokens, users, bad int) {
	a := &c.asm
	rd := &r.rend
	rd.kept, rd.dropped = len(rd.msgs), 0 // unless rendered again
	if !rd.valid || rd.version != r.version {
		c.renderRegion(r)
	}
	n := len(rd.msgs) + 2
	lead, drop = rd.kept, rd.dropped
	if lead == 0 {
		drop = 0
	}
	keep := min(lead, a.lead, a.spareOK)
	if drop > 0 || cap(a.spareMsgs) < n {
		keep = 0
	}
	msgs = slices.Grow(a.spareMsgs[:0], n)
	if len(rd.msgs) == 0 {
		a.liveWins = a.liveWins[:0]
		return msgs, lead, drop, 0, 0, 0
	}
	if len(a.liveWins) != 1 {
		a.liveWins = append(a.liveWins[:0], r) // else it lists r already
	}
	if drop > 0 || a.moved {
		msgs = append(msgs, rd.msgs...)
	} else {
		skip := min(keep, len(rd.msgs))
		msgs = appendMessages(msgs[:skip], rd.msgs[skip:])
		if fix := a.spareMarked; fix >= 0 && fix < skip {
			msgs[fix] = rd.msgs[fix]
		}
	}
	tokens, users, bad = rd.sums()
	return msgs, lead, drop, tokens, users, bad
}

// sums returns the rendered window's message tokens, user turns and faults
// that finishing mends (messages to strip or drop, results leading, calls
// ending), from the running totals; the window has messages.
func (rd *rendered) sums() (tokens, users, bad int) {
	end := rd.msgInfo[len(rd.msgInfo)-1]
	tokens, users, bad = end.tokens-rd.base.tokens, end.users-rd.base.users, end.bad-rd.base.bad
	if rd.msgInfo[0].results {
		bad++
	}
	if end.uses {
		bad++
	}
	return tokens, users, bad
}

// LendRequests makes the requests of the Context cheaper to build, for a
// caller that is done with each request before it calls Assemble again.
// From the next call of Assemble on, a request is valid only until the
// next call (not the next-but-one): the messages of a request of one
// sliding window are the window's own, not a copy, and a system block that
// grew is written over the last request's; no system block carries a
// Breakpoint flag nor is retagged RecentlyChanged (SystemBreakpoints says
// where the flags go), and the flagged message need not carry its flags
// (FlaggedMessage says which it is); and SameSystem and SameMessages may
// count fewer than the longest run (never more).
func (c *Context) LendRequests() {
	// The system blocks built so far may carry flags: the next request
	// builds them anew.
	a := &c.asm
	a.lend, a.system, a.spareSys, a.sysLead = true, nil, nil, 0
}

// lendWindow is oneWindow and finishing for a lent request: the messages
// are the window's own when they need no stripping nor dropping, else a
// finished copy. It returns SameMessages and DroppedMessages.
func (c *Context) lendWindow(r *region, sysChanged bool) (same, drop int) {
	a := &c.asm
	rd := &r.rend
	rd.kept, rd.dropped = len(rd.msgs), 0 // unless rendered again
	if !rd.valid || rd.version != r.version {
		c.renderRegion(r)
	}
	same, drop = rd.kept, rd.dropped
	if same == 0 {
		drop = 0
	}
	msgs := rd.msgs
	if len(msgs) == 0 {
		a.liveWins = a.liveWins[:0]
	} else if len(a.liveWins) != 1 {
		a.liveWins = append(a.liveWins[:0], r) // else it lists r already
	}
	tokens, users, bad := 0, 0, 1 // no messages: finished in full
	if len(msgs) > 0 {
		tokens, users, bad = rd.sums()
	}
	// The copying path's buffers hold nothing it may keep from now on.
	a.msgsOK, a.msgsMarked, a.spareOK, a.spareMarked, a.lead, a.moved = 0, -1, 0, -1, 0, true
	a.msgSysChgd = sysChanged
	// The last request's messages, to compare, unless they were the
	// window's: then those the render kept, alone, are as they were.
	prev, wasPlain := a.msgs, a.plain
	a.lent = true
	if bad > 0 {
		// Finished in a copy, in turn in one of two buffers: the other
		// holds the last request's, if it was finished so.
		own := append(a.spareOwn[:0], msgs...)
		a.spareOwn, a.own = a.own, own
		a.msgs, a.msgTokens, a.flagged = a.finishMessages(own, sysChanged)
		a.plain = false
		if wasPlain {
			return sameMessages(msgs[:same], a.msgs, 0), drop
		}
		drop = min(drop, len(prev))
		return sameMessages(prev[drop:], a.msgs, 0), drop
	}
	// finishPaired, with the flag left to FlaggedMessage.
	a.flagged = -1
	if !sysChanged && len(msgs) >= 5 {
		a.flagged = len(msgs) - 4
	} else if !sysChanged && len(msgs) >= 2 {
		a.flagged = 0
	}
	if users == 0 {
		msgs = append(msgs, a.filler(&a.begin, "Begin."))
		tokens += msgs[len(msgs)-1].Tokens()
	}
	if msgs[len(msgs)-1].Role == RoleAssistant {
		msgs = append(msgs, a.filler(&a.cont, "Continue."))
		tokens += msgs[len(msgs)-1].Tokens()
	}
	a.msgs, a.msgTokens, a.plain = msgs, tokens, true
	if !wasPlain {
		drop = min(drop, len(prev))
		return sameMessages(prev[drop:], msgs, 0), drop
	}
	return same, drop
}

// buildSystem builds the system blocks of a request, given the system
// regions that changed since the last build (all of them if anew), and
// returns how many leading blocks are as in the last request, and the
// custom regions' messages.
func (c *Context) buildSystem(changed []*region, anew bool) (int, []Message) {
	a := &c.asm
	var preamble []Message
	var blocks []Block
	lead, held := 0, 0
	kept := !anew && a.system != nil
	if kept && len(changed) == 1 && !a.general {
		if a.lend && a.pure {
			if same, ok := c.grewInPlace(changed[0]); ok {
				return same, nil
			}
		}
		blocks, lead, held = c.grewOne(changed[0])
	}
	if blocks != nil {
		// The commonest build: done.
	} else if kept && c.renderChanged(changed) {
		blocks, lead, held = a.keptLayout()
	} else {
		groups, n, pre := c.sortGroups()
		preamble = pre
		blocks, lead, held = a.newLayout(groups, n)
	}
	a.sysLead = lead
	if old := a.spareSys; len(old) > len(blocks) {
		clear(old[len(blocks):]) // holds no stale text
	}
	c.watchStable(a.system, blocks, lead)
	marks, tokens, hash := a.finishSystem(blocks, lead, held)
	a.spareSys, a.spareMarks = a.system, a.sysMarks
	a.system, a.sysMarks, a.sysTokens, a.sysHash = blocks, marks, tokens, hash
	a.pure = a.lend
	return sameBlocks(a.spareSys, a.system, lead), preamble
}

// grewInPlace is grewOne for a lent request whose one changed region kept
// its place and its count of blocks (an open chunk grew) or gained one (a
// chunk was added: the blocks after it move up one, in place): its blocks
// that changed are written over the last build's, which carry no flags
// (pure), and the request is finished. It compares each with the block it
// replaces first (SameSystem, watchStable). Otherwise it returns false,
// having changed nothing but the region's rendering.
func (c *Context) grewInPlace(r *region) (int, bool) {
	a := &c.asm
	c.renderRegion(r)
	rd := &r.rend
	bs := rd.blocks
	i, at := a.slotOf(r)
	if i == len(a.layout) || len(bs) == 0 {
		return 0, false
	}
	s := &a.layout[i]
	kept, added := min(rd.sysKept, len(bs)), len(bs)-s.n
	if added < 0 || added > 1 || kept == len(bs) || volTier(&bs[0]) != s.tier || bs[0].Cache.priority() != s.prio ||
		cap(a.system)-len(a.system) < added {
		return 0, false
	}
	blocks, lead, same, n := a.system, at+kept, -1, len(a.system)
	end := at + s.n // the first block after the region's, before
	if added > 0 {
		// Each block after the region's takes the next one's place.
		blocks = blocks[:len(blocks)+1]
		for k := end + 1; k < len(blocks)-1; k++ {
			if blocks[k-1].Volatility == VolatilityStable {
				c.watchStable(blocks[k:k+1], blocks[k-1:k], 0)
			}
		}
		copy(blocks[end+1:], blocks[end:])
		a.system, s.n = blocks, len(bs)
	}
	for k := lead; k < at+len(bs); k++ {
		b := &bs[k-at]
		if same < 0 && (k >= end || !sameBlock(&blocks[k], b)) { // past end: added
			same = k
		}
		if b.Volatility == VolatilityStable && k < n {
			c.watchStable(blocks[k:k+1], bs[k-at:k-at+1], 0)
		}
		blocks[k] = *b
	}
	if same < 0 {
		same = len(blocks) // the blocks after the region's are as they were
	}
	rd.sysKept = len(bs) // until rendered again
	s.stamp = rd.stamp
	// The spare buffer's leading blocks are as these are up to lead, at most.
	a.sysLead = min(a.sysLead, lead)
	a.sysMarks, a.sysTokens, a.sysHash = a.finishSystem(blocks, lead, 0)
	return same, true
}

// sortGroups renders every visible system region that changed and lists
// their groups of blocks in order, with the blocks' count and the custom
// regions' messages. Every block of a region shares its tier and hint, so
// sorting the regions (few) instead of the blocks (many) gives the same
// stable order.
func (c *Context) sortGroups() ([]sysGroup, int, []Message) {
	groups := c.asm.groups[:0]
	n := 0
	var preamble []Message
	for _, r := range c.asm.sysRegs {
		var bs []Block
		kept := 0
		var stamp uint64
		if r.kind == KindCustom {
			var ms []Message
			bs, ms = c.renderCustom(r)
			preamble = append(preamble, ms...)
			stamp = r.newestStamp()
		} else {
			// A region not rendered since the last build kept all its
			// blocks (sysKept says so from then on).
			c.renderRegion(r)
			bs, kept, stamp = r.rend.blocks, r.rend.sysKept, r.rend.stamp
		}
		if len(bs) == 0 {
			continue
		}
		groups = append(groups, sysGroup{volTier(&bs[0]), bs[0].Cache.priority(), bs, r, kept, stamp})
		n += len(bs)
	}
	slices.SortStableFunc(groups, func(x, y sysGroup) int {
		if x.tier != y.tier {
			return x.tier - y.tier
		}
		return x.prio - y.prio
	})
	return groups, n, preamble
}

// renderChanged renders the system regions that changed since the last
// build and reports whether each keeps its place in it: as many blocks as
// before, none or some, and the same tier and hint.
func (c *Context) renderChanged(changed []*region) bool {
	ok := true
	for _, r := range changed {
		c.renderRegion(r)
		i := slices.IndexFunc(c.asm.layout, func(s sysSlot) bool { return s.r == r })
		if bs := r.rend.blocks; i < 0 {
			ok = ok && len(bs) == 0
		} else {
			s := &c.asm.layout[i]
			s.changed = true
			ok = ok && len(bs) > 0 && volTier(&bs[0]) == s.tier && bs[0].Cache.priority() == s.prio
		}
	}
	return ok
}

// The system blocks are built in the spare buffer, which holds the build
// before last, of which the first sysLead blocks were as at the last
// build: those of them that are still so are left as they are, the fields
// finishSystem sets included. Each build returns its blocks, lead, the
// leading blocks that are as at the last build (those of regions in the
// same place that kept them), and held, the leading blocks left as they
// were.

// sysBuffer is the spare buffer with room for n blocks, and how many of
// its leading blocks hold the last build's.
func (a *assembler) sysBuffer(n int) ([]Block, int) {
	spareLead := a.sysLead
	if cap(a.spareSys) < n {
		spareLead = 0
	}
	return slices.Grow(a.spareSys[:0], n), spareLead
}

// keptLayout builds the system blocks in the last build's layout, which
// every region keeps (renderChanged said so): its slots' counts are updated
// in place, with no groups listed.
func (a *assembler) keptLayout() ([]Block, int, int) {
	n := 0
	for i := range a.layout {
		if s := &a.layout[i]; s.changed {
			n += len(s.r.rend.blocks)
		} else {
			n += s.n
		}
	}
	blocks, spareLead := a.sysBuffer(n)
	// The leading slots that did not change and that the spare buffer
	// holds whole (all of them but the changed one's, mostly) are skipped
	// in one step.
	i, lead := 0, 0
	for i < len(a.layout) && !a.layout[i].changed && lead+a.layout[i].n <= spareLead {
		lead += a.layout[i].n
		i++
	}
	blocks = blocks[:lead]
	held, leading := lead, true
	for ; i < len(a.layout); i++ {
		s := &a.layout[i]
		if !s.changed {
			// Its blocks are as at the last build, all kept.
			same := 0
			if leading {
				same = s.n
			}
			h := min(same, max(spareLead-lead, 0))
			if h == s.n && cap(blocks)-len(blocks) >= h {
				blocks = blocks[:len(blocks)+h] // held whole
			} else {
				blocks = appendBlocks(blocks, s.r.rend.blocks, h)
			}
			lead += same
			held += h
			continue
		}
		s.changed = false
		rd := &s.r.rend
		bs, kept := rd.blocks, rd.sysKept
		rd.sysKept = len(bs) // until rendered again
		same := 0
		if leading {
			same = min(kept, len(bs), s.n)
			leading = kept == len(bs) && kept == s.n
		}
		h := min(same, max(spareLead-lead, 0))
		if h == len(bs) && cap(blocks)-len(blocks) >= h {
			blocks = blocks[:len(blocks)+h] // held whole
		} else {
			blocks = appendBlocks(blocks, bs, h)
		}
		lead += same
		held += h
		s.n, s.stamp = len(bs), rd.stamp // the hint is kept (renderChanged)
	}
	return blocks, lead, held
}

// slotOf returns the index of region r's slot in the last build's layout
// (len(a.layout) if it has none) and the index of its first block.
func (a *assembler) slotOf(r *region) (i, at int) {
	for i < len(a.layout) && a.layout[i].r != r {
		at += a.layout[i].n
		i++
	}
	return i, at
}

// grewOne is renderChanged and keptLayout for the commonest build: the
// one region that changed keeps its place and its first blocks (a grows
// region's open chunk grew, or a chunk was added), and the spare buffer
// holds every block before the region's. Otherwise it returns no blocks,
// having changed nothing but the region's rendering.
func (c *Context) grewOne(r *region) ([]Block, int, int) {
	a := &c.asm
	c.renderRegion(r)
	rd := &r.rend
	bs := rd.blocks
	i, at := a.slotOf(r)
	if i == len(a.layout) || len(bs) == 0 {
		return nil, 0, 0
	}
	s := &a.layout[i]
	same := min(rd.sysKept, len(bs), s.n)
	n := len(a.system) - s.n + len(bs)
	if same == len(bs) && same == s.n || a.sysLead < at || cap(a.spareSys) < n ||
		volTier(&bs[0]) != s.tier || bs[0].Cache.priority() != s.prio {
		return nil, 0, 0
	}
	h := min(same, a.sysLead-at)
	blocks := appendBlocks(a.spareSys[:at], bs, h)
	// The blocks after the region's are not as at the last build.
	for j := i + 1; j < len(a.layout); j++ {
		blocks = appendBlocks(blocks, a.layout[j].r.rend.blocks, 0)
	}
	rd.sysKept = len(bs) // until rendered again
	s.n, s.stamp = len(bs), rd.stamp
	return blocks, at + same, at + h
}

// newLayout builds the n system blocks of groups, in their order, which
// becomes the layout.
func (a *assembler) newLayout(groups []sysGroup, n int) ([]Block, int, int) {
	blocks, spareLead := a.sysBuffer(n)
	lead, held, leading := 0, 0, true
	layout := a.spareLayout[:0]
	for i, g := range groups {
		g.r.rend.sysKept = len(g.blocks) // until rendered again
		same := 0
		if leading = leading && i < len(a.layout) && a.layout[i].r == g.r && g.r.kind != KindCustom; leading {
			same = min(g.kept, len(g.blocks), a.layout[i].n)
			leading = g.kept == len(g.blocks) && g.kept == a.layout[i].n
		}
		h := min(same, max(spareLead-lead, 0))
		blocks = appendBlocks(blocks, g.blocks, h)
		lead += same
		held += h
		layout = append(layout, sysSlot{g.r, len(g.blocks), g.tier, g.prio, g.stamp, g.blocks[0].Cache == CacheUntilChanged, false})
	}
	a.layout, a.spareLayout = layout, a.layout
	clear(groups) // holds no blocks between requests
	a.groups = groups
	return blocks, lead, held
}

// sameBlocks is how many leading blocks of next equal prev's (as
// Request.SameSystem says), of which the first from are known to.
func sameBlocks(prev, next []Block, from int) int {
	n := min(len(prev), len(next))
	for i := from; i < n; i++ {
		if !sameBlock(&prev[i], &next[i]) {
			return i
		}
	}
	return n
}

func sameBlock(x, y *Block) bool {
	return x.Hash == y.Hash && x.Tokens == y.Tokens && x.Role == y.Role && x.Type == y.Type &&
		x.Volatility == y.Volatility && x.IsError == y.IsError && x.Text == y.Text && x.Region == y.Region &&
		x.ToolCallID == y.ToolCallID && x.ToolName == y.ToolName && bytes.Equal(x.Args, y.Args)
}

// sameMessages is sameBlocks for messages, of which the first from are
// known to be the same. Both requests are live and the assembler writes
// neither while building the next one, so messages that share their
// blocks' array are the same without comparing the blocks.
func sameMessages(prev, next []Message, from int) int {
	n := min(len(prev), len(next))
	for i := from; i < n; i++ {
		x, y := &prev[i], &next[i]
		if x.Role != y.Role || len(x.Blocks) != len(y.Blocks) {
			return i
		}
		if len(x.Blocks) == 0 || &x.Blocks[0] == &y.Blocks[0] {
			continue
		}
		for j := range x.Blocks {
			if !sameBlock(&x.Blocks[j], &y.Blocks[j]) {
				return i
			}
		}
	}
	return n
}

// appendBlocks is append(dst, src...) for a dst whose spare capacity holds
// the request before last: its first same slots hold their blocks already,
// as the request before last had them (finishSystem sees to the fields it
// sets), and are left as they are.
func appendBlocks(dst, src []Block, same int) []Block {
	n := len(dst)
	if cap(dst)-n < len(src) {
		return append(dst, src...)
	}
	dst = dst[:n+len(src)]
	copy(dst[n+same:], src[same:])
	return dst
}

// appendMessages is append: a request copies only the messages after those
// the request before last left as they are, a few, so copying each whole
// costs less than comparing it with its slot first.
func appendMessages(dst, src []Message) []Message {
	return append(dst, src...)
}

// watchStable counts changes to blocks of regions declared stable (compared
// at the same index with the previous request) and warns once per region on
// the second change: a "stable" region that keeps changing breaks the cache.
// The first from blocks are known to be as they were.
func (c *Context) watchStable(prev, next []Block, from int) {
	for i := from; i < len(next); i++ {
		b := &next[i]
		if b.Volatility != VolatilityStable || i >= len(prev) || prev[i].Region != b.Region || prev[i].Hash == b.Hash {
			continue
		}
		if c.asm.stableChanges == nil {
			c.asm.stableChanges = map[string]int{}
		}
		c.asm.stableChanges[b.Region]++
		if c.asm.stableChanges[b.Region] == 2 {
			c.warn(b.Region, "region is declared volatility = \"stable\" but its content keeps changing, which invalidates the cached prefix behind it")
		}
	}
}

// listRegions lists the visible regions of each side, in order.
func (a *assembler) listRegions(regions []*region) {
	a.sysRegs, a.winRegs, a.hasCustom = a.sysRegs[:0], a.winRegs[:0], false
	for _, r := range regions {
		r.asm = a
		switch {
		case r.hidden:
		case r.kind == KindSlidingWindow:
			a.winRegs = append(a.winRegs, r)
		default:
			a.sysRegs = append(a.sysRegs, r)
			a.hasCustom = a.hasCustom || r.kind == KindCustom
		}
	}
	a.listed, a.winsListed = true, true
}

func volTier(b *Block) int {
	if b.Region == StageInstructions {
		return int(VolatilityRewritten) // always after every other pinned block
	}
	return int(b.Volatility)
}

// finishSystem retags and flags the system blocks (ENGINE.md §6.3) of a
// build in the layout, whose first from blocks are as at the last build and
// whose first held blocks are as the build before last finished them: the
// newest-changed tail of UntilChanged blocks becomes RecentlyChanged, and
// at most two breakpoints are placed the way the reference's Anthropic
// provider does (the deepest block whose whole prefix is stable, then the
// deepest other candidates: not rewritten, not Never, at least 1,024
// tokens of prefix). The sums go on from the last build's at from, and
// only the held blocks that finishing the two builds sets apart are
// written again. It returns what it changed, the blocks' tokens and their
// hash.
func (a *assembler) finishSystem(blocks []Block, from, held int) (sysMarks, int, uint64) {
	const minPrefix, maxMarks = 1024, 2
	cand := func(b *Block, cum int) bool {
		return b.Volatility != VolatilityRewritten && b.Cache != CacheNever && cum >= minPrefix
	}
	from = min(from, len(a.sysSums))
	if cap(a.sysSums) < len(blocks) {
		a.sysSums = slices.Grow(a.sysSums[:from], len(blocks)-from)
	}
	sums := a.sysSums[:len(blocks)]
	s := sysSum{hash: fnvOffset, stableUpTo: -1, allStable: true}
	if from > 0 {
		s = sums[from-1]
	}
	// The held blocks' hints may be retagged: from is past them, and
	// s.hint is the last one as rendered.
	for i := from; i < len(blocks); i++ {
		b := &blocks[i]
		s.tokens += b.Tokens
		s.hash = (s.hash ^ b.Hash) * fnvPrime
		if b.Cache != CacheNever && (i == 0 || s.hint != b.Cache) {
			s.runs++
		}
		s.hint = b.Cache
		s.allStable = s.allStable && b.Volatility == VolatilityStable && b.Cache != CacheNever
		if s.allStable && cand(b, s.tokens) {
			s.stableUpTo = i
		}
		sums[i] = s
	}
	a.sysSums = sums
	m := sysMarks{at: [2]int{-1, -1}, retag: -1}
	marks := 0
	if s.stableUpTo >= 0 {
		m.at[marks] = s.stableUpTo
		marks++
	}
	for i := len(blocks) - 1; i >= 0 && marks < maxMarks; i-- {
		if i != s.stableUpTo && cand(&blocks[i], sums[i].tokens) {
			m.at[marks] = i
			marks++
		}
	}
	// The newest-changed UntilChanged region's blocks and those after it
	// are retagged, unless the hints make maxSystemCacheRuns runs or more.
	if s.runs < maxSystemCacheRuns {
		first, newest, at := -1, -1, 0
		var stamp uint64
		for i := range a.layout {
			sl := &a.layout[i]
			if sl.until {
				if first < 0 {
					first = at
				}
				if newest < 0 || sl.stamp > stamp {
					newest, stamp = at, sl.stamp
				}
			}
			at += sl.n
		}
		if newest > first {
			m.retag = newest
		}
	}
	if a.lend {
		return m, s.tokens, s.hash // no flags to write (LendRequests)
	}
	old := a.spareMarks
	for _, i := range old.at {
		if i >= 0 && i < held {
			blocks[i].Breakpoint = false
		}
	}
	for _, i := range m.at {
		if i >= 0 {
			blocks[i].Breakpoint = true
		}
	}
	// Held blocks are as the old retagging left them: those between it
	// and the new one are set again; the rest are as rendered.
	oldAt, newAt := held, held
	if old.retag >= 0 {
		oldAt = min(old.retag, held)
	}
	if m.retag >= 0 {
		newAt = min(m.retag, held)
	}
	for i := min(oldAt, newAt); i < max(oldAt, newAt); i++ {
		if c := blocks[i].Cache; c == CacheUntilChanged || c == CacheRecentlyChanged {
			blocks[i].Cache = CacheUntilChanged
			if i >= newAt {
				blocks[i].Cache = CacheRecentlyChanged
			}
		}
	}
	if m.retag >= 0 {
		for i := max(m.retag, held); i < len(blocks); i++ {
			if blocks[i].Cache == CacheUntilChanged {
				blocks[i].Cache = CacheRecentlyChanged
			}
		}
	}
	return m, s.tokens, s.hash
}

// finishMessages strips unpaired tool blocks, flags the message breakpoint,
// drops empty messages and adds Begin./Continue. (ENGINE.md §6.3). It
// returns the messages, their tokens and the flagged one's index (-1).
func (a *assembler) finishMessages(msgs []Message, sysChanged bool) ([]Message, int, int) {
	if !pairedLocally(msgs) {
		msgs = a.stripOrphans(msgs)
	}
	marked := a.markMessageBreakpoint(msgs, sysChanged)
	flagged := -1
	// Messages are moved down only once one is dropped: copying each onto
	// itself would cost a write barrier per message for nothing.
	n := 0
	hasUser := false
	for i := range msgs {
		m := &msgs[i]
		empty := true
		for j := range m.Blocks {
			if b := &m.Blocks[j]; b.Type != BlockText || strings.TrimSpace(b.Text) != "" {
				empty = false
				break
			}
		}
		if empty {
			continue
		}
		hasUser = hasUser || m.Role == RoleUser
		if i == marked {
			flagged = n
		}
		if n != i {
			msgs[n] = *m
		}
		n++
	}
	clear(msgs[n:])
	msgs = msgs[:n]
	if !hasUser {
		msgs = append(msgs, a.filler(&a.begin, "Begin."))
	}
	if msgs[len(msgs)-1].Role == RoleAssistant {
		msgs = append(msgs, a.filler(&a.cont, "Continue."))
	}
	tokens := 0
	for _, m := range msgs {
		tokens += m.Tokens()
	}
	return msgs, tokens, flagged
}

// finishPaired is finishMessages for messages that are paired locally and
// none empty, holding tokens in all: nothing is stripped nor dropped.
func (a *assembler) finishPaired(msgs []Message, sysChanged bool, tokens int, hasUser bool) ([]Message, int, int) {
	marked := a.markMessageBreakpoint(msgs, sysChanged)
	if !hasUser {
		msgs = append(msgs, a.filler(&a.begin, "Begin."))
		tokens += msgs[len(msgs)-1].Tokens()
	}
	if msgs[len(msgs)-1].Role == RoleAssistant {
		msgs = append(msgs, a.filler(&a.cont, "Continue."))
		tokens += msgs[len(msgs)-1].Tokens()
	}
	return msgs, tokens, marked
}

// markMessageBreakpoint flags the message breakpoint, on a copy of the
// message's blocks, unless the system blocks changed. It returns the
// message's index, or -1.
func (a *assembler) markMessageBreakpoint(msgs []Message, sysChanged bool) int {
	if sysChanged {
		return -1
	}
	idx := -1
	if len(msgs) >= 5 {
		idx = len(msgs) - 4
	} else if len(msgs) >= 2 {
		idx = 0
	}
	if idx >= 0 {
		m := msgs[idx]
		m.Breakpoint = true
		m.Blocks = append(a.spareMark[:0], m.Blocks...)
		m.Blocks[len(m.Blocks)-1].Breakpoint = true
		a.spareMark, a.mark = a.mark, m.Blocks
		msgs[idx] = m
	}
	return idx
}

// pairOK reports whether every tool_use of a has its result in b and every
// tool_result of b its call in a (pairedLocally, for one pair of messages).
func pairOK(a, b *Message) bool {
	// Mostly b answers a's calls in their order: one pass tells.
	i, k := 0, 0
	for {
		for i < len(a.Blocks) && a.Blocks[i].Type != BlockToolUse {
			i++
		}
		for k < len(b.Blocks) && b.Blocks[k].Type != BlockToolResult {
			k++
		}
		if i == len(a.Blocks) || k == len(b.Blocks) {
			if i == len(a.Blocks) && k == len(b.Blocks) {
				return true
			}
			break
		}
		if a.Blocks[i].ToolCallID != b.Blocks[k].ToolCallID {
			break
		}
		i, k = i+1, k+1
	}
	for j := range a.Blocks {
		if u := &a.Blocks[j]; u.Type == BlockToolUse && !holdsTool(b, BlockToolResult, u.ToolCallID) {
			return false
		}
	}
	for j := range b.Blocks {
		if r := &b.Blocks[j]; r.Type == BlockToolResult && !holdsTool(a, BlockToolUse, r.ToolCallID) {
			return false
		}
	}
	return true
}

// pairedLocally reports whether every message has blocks, every tool_use
// its result in the next message and every tool_result its call in the
// previous one: then stripOrphans would change nothing, and the id sets need
// not be built (the usual case).
func pairedLocally(msgs []Message) bool {
	for i := range msgs {
		if len(msgs[i].Blocks) == 0 {
			return false
		}
		for j := range msgs[i].Blocks {
			b := &msgs[i].Blocks[j]
			switch b.Type {
			case BlockToolUse:
				if i+1 >= len(msgs) || !holdsTool(&msgs[i+1], BlockToolResult, b.ToolCallID) {
					return false
				}
			case BlockToolResult:
				if i == 0 || !holdsTool(&msgs[i-1], BlockToolUse, b.ToolCallID) {
					return false
				}
			}
		}
	}
	return true
}

func holdsTool(m *Message, t BlockType, id string) bool {
	for j := range m.Blocks {
		if m.Blocks[j].Type == t && m.Blocks[j].ToolCallID == id {
			return true
		}
	}
	return false
}

// stripOrphans drops tool_use blocks without a result anywhere in the
// request and tool_result blocks without a call, then empty messages.
func (a *assembler) stripOrphans(msgs []Message) []Message {
	// The id sets are kept between requests: cleared, not rebuilt.
	if a.uses == nil {
		a.uses, a.results = map[string]bool{}, map[string]bool{}
	}
	uses, results := a.uses, a.results
	clear(uses)
	clear(results)
	// Blocks are walked by index: they are large to copy.
	for i := range msgs {
		for j := range msgs[i].Blocks {
			b := &msgs[i].Blocks[j]
			switch b.Type {
			case BlockToolUse:
				uses[b.ToolCallID] = true
			case BlockToolResult:
				results[b.ToolCallID] = true
			}
		}
	}
	out := msgs[:0]
	for _, m := range msgs {
		orphan := false
		for j := range m.Blocks {
			b := &m.Blocks[j]
			if (b.Type == BlockToolUse && !results[b.ToolCallID]) || (b.Type == BlockToolResult && !uses[b.ToolCallID]) {
				orphan = true
			}
		}
		if orphan {
			kept := make([]Block, 0, len(m.Blocks))
			for j := range m.Blocks {
				b := &m.Blocks[j]
				if (b.Type == BlockToolUse && !results[b.ToolCallID]) || (b.Type == BlockToolResult && !uses[b.ToolCallID]) {
					continue
				}
				kept = append(kept, *b)
			}
			m.Blocks = kept
		}
		if len(m.Blocks) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// filler is the user message of text that finishing adds, made once: its
// blocks are never written (a breakpoint is flagged on a copy).
func (a *assembler) filler(m *Message, text string) Message {
	if m.Blocks == nil {
		*m = textMessage(RoleUser, "", text)
	}
	return *m
}

func textMessage(role Role, region, text string) Message {
	return Message{Role: role, Blocks: []Block{{Region: region, Role: role, Type: BlockText, Text: text, Tokens: estimateTokens(text), Cache: CacheSlidingPrefix, Volatility: VolatilityRewritten, Hash: hashText(text)}}}
}

// renderRegion refreshes a region's cached rendering if it changed.
func (c *Context) renderRegion(r *region) {
	if r.rend.valid && r.rend.version == r.version {
		return
	}
	dirty := r.dirtyFrom
	if !r.rend.valid {
		dirty = 0
	}
	r.rend.sysKept, r.rend.stamp = 0, 0
	switch r.kind {
	case KindSlidingWindow:
		r.rend.msgs = c.renderMessages(r, dirty)
	case KindPinned, KindCompactHistory:
		c.renderChunked(r, CacheAlways, true, dirty)
	case KindCompacting:
		c.renderChunked(r, CacheUntilChanged, false, dirty)
	case KindTemporary, KindClearable:
		hint := CacheUntilChanged
		if r.def.Volatility == VolatilityRewritten {
			hint = CacheNever
		}
		c.renderChunked(r, hint, false, dirty)
	case KindChecklist:
		r.rend.blocks = nil
		if body := r.renderChecklist(); body != "" {
			r.rend.blocks = []Block{c.sysBlock(r, labelled(r, body), CacheUntilChanged, r.tokens)}
		}
	case KindHashMap:
		r.rend.blocks = nil
		if len(r.entries) > 0 {
			parts := make([]string, len(r.entries))
			for i, e := range r.entries {
				if e.hasKey {
					parts[i] = "### [" + e.key + "]\n" + e.content
				} else {
					parts[i] = e.content
				}
			}
			r.rend.blocks = []Block{c.sysBlock(r, "["+r.name+"]:\n"+strings.Join(parts, "\n\n"), CacheUntilChanged, r.tokens)}
		}
	}
	r.rend.valid, r.rend.version, r.dirtyFrom = true, r.version, -1
	r.shifted, r.shiftedBytes, r.changedFrom = 0, 0, -1
}

func (r *region) newestStamp() uint64 { return r.lastStamp }

func labelled(r *region, body string) string {
	if r.def.DescribeInPrompt && r.def.Description != "" {
		return "## " + r.name + "\n" + r.def.Description + "\n\n" + body
	}
	return "## " + r.name + "\n" + body
}

// sysBlock makes a system block; entryTokens were counted when written, so
// only the heading is counted here.
func (c *Context) sysBlock(r *region, text string, hint CacheHint, entryTokens int) Block {
	head := len(text)
	if nl := strings.IndexByte(text, '\n'); nl >= 0 {
		head = nl + 1
	}
	return Block{
		Region: r.name, Role: RoleSystem, Type: BlockText, Text: text,
		Tokens: c.counter.Count(text[:head]) + entryTokens,
		Cache:  hint, Volatility: r.def.Volatility, Hash: hashText(text),
	}
}

// renderChunked renders a region as one block, or, for grows regions, as
// chunks of about CacheChunkTokens; chunks wholly before the first changed
// entry are kept as they were.
func (c *Context) renderChunked(r *region, hint CacheHint, label bool, dirty int) {
	if len(r.entries) == 0 {
		r.rend.blocks, r.rend.chunkStarts, r.rend.bodyAt = nil, nil, 0
		return
	}
	head := func(first bool) string {
		switch {
		case label && first:
			return labelled(r, "")
		case first:
			return "[" + r.name + "]:\n"
		}
		// Made once, not per chunk.
		if r.rend.cont == "" {
			r.rend.cont = "[" + r.name + " continued]:\n"
			if label {
				r.rend.cont = "## " + r.name + " (continued)\n"
			}
		}
		return r.rend.cont
	}
	r.rend.stamp = r.newestStamp()
	if r.def.Volatility != VolatilityGrows {
		rd := &r.rend
		from := rd.text.Len()
		if kept := rd.count - r.shifted; dirty == 0 && r.shifted > 0 && kept >= 1 && kept <= len(r.entries) &&
			(r.changedFrom < 0 || r.changedFrom >= kept) && len(rd.blocks) == 1 && rd.bodyAt > 0 {
			// Only the oldest entries left (and some may have been
			// appended): the text of the ones kept follows theirs in the
			// last text, so it is copied in one piece.
			old := rd.blocks[0].Text[rd.bodyAt+r.shiftedBytes:]
			h := head(true)
			rd.text = strings.Builder{}
			size := len(h) + len(old)
			for _, e := range r.entries[kept:] {
				size += len(e.content) + 2
			}
			rd.text.Grow(size + size/4)
			rd.text.WriteString(h)
			rd.text.WriteString(old)
			rd.count, rd.hash, rd.bodyAt, rd.at, from = kept, newHasher(), len(h), 0, 0
			dirty = kept
		}
		if dirty <= 0 || dirty != rd.count || len(rd.blocks) != 1 || rd.count > len(r.entries) || rd.at != 0 {
			rd.text = strings.Builder{}
			size := len(head(true)) + 2*len(r.entries)
			for _, e := range r.entries {
				size += len(e.content)
			}
			rd.text.Grow(size + size/4) // room to append before the next copy
			h := head(true)
			rd.text.WriteString(h)
			rd.count, rd.hash, rd.bodyAt, rd.at, from = 0, newHasher(), len(h), 0, 0
		}
		for i := rd.count; i < len(r.entries); i++ {
			if i > 0 {
				rd.text.WriteString("\n\n")
			}
			rd.text.WriteString(r.entries[i].content)
		}
		rd.count = len(r.entries)
		text := rd.text.String()
		rd.hash.WriteString(text[from:])
		head0 := head(true)
		b := Block{
			Region: r.name, Role: RoleSystem, Type: BlockText, Text: text,
			Tokens: c.counter.Count(head0) + r.tokens, Cache: hint, Volatility: r.def.Volatility,
			Hash: rd.hash.Sum(),
		}
		rd.blocks, rd.chunkStarts = []Block{b}, []int{0}
		return
	}
	// Keep chunks that end before the first changed entry.
	rd := &r.rend
	rd.bodyAt = 0
	reused := dirty == 0 && r.shifted > 0
	if reused {
		dirty = c.reuseShiftedChunks(r, hint, head)
	}
	// The last chunk that starts at or before dirty (it is near the end).
	keep := max(len(rd.chunkStarts)-1, 0)
	for keep > 0 && rd.chunkStarts[keep] > dirty {
		keep--
	}
	if dirty <= 0 || keep > len(rd.blocks) {
		keep = 0
	}
	if !reused {
		rd.sysKept = keep // reused chunks moved
	}
	// The region's block slice is private (requests copy it), so kept chunks
	// stay where they are and only the changed tail is rewritten.
	blocks := rd.blocks[:keep]
	starts := rd.chunkStarts[:keep]
	start := 0
	if keep > 0 {
		start = rd.chunkStarts[keep]
	}
	if keep == len(rd.blocks)-1 && dirty > 0 && dirty == rd.count && rd.count <= len(r.entries) {
		// Only appended to. A closed last chunk stays as it is (building it
		// again would end it at the same entry); an open one extends its
		// text and hash (a Builder only appends, so the text earlier
		// requests hold stays as it was) instead of being built again.
		end := rd.count
		if rd.tailSum < CacheChunkTokens {
			n, size, sum := end, 0, rd.tailSum
			for n < len(r.entries) && sum < CacheChunkTokens {
				size += 2 + len(r.entries[n].content)
				sum += r.entries[n].tokens
				n++
			}
			open := rd.blocks[keep].Text
			if l := rd.text.Len(); rd.text.Cap()-l < size || l-rd.at != len(open) || rd.text.String()[rd.at:] != open {
				// The slab is full, or the open chunk does not end it (a
				// fold's summary was written after it, or in a new slab:
				// summaryBuf): it moves to a new one (growing the Builder
				// would copy the closed chunks too).
				rd.text = strings.Builder{}
				rd.text.Grow(max(chunkSlabBytes, len(open)+size))
				rd.text.WriteString(open)
				rd.at = 0
			}
			for ; end < n; end++ {
				rd.text.WriteString("\n\n")
				rd.text.WriteString(r.entries[end].content)
			}
			rd.tailSum = sum
			text := rd.text.String()[rd.at:]
			rd.blocks[keep] = Block{
				Region: r.name, Role: RoleSystem, Type: BlockText, Text: text,
				Tokens: rd.headTokens + rd.tailSum, Cache: hint, Volatility: r.def.Volatility,
				Hash: hashText(text),
			}
		}
		keep++
		blocks, starts, start = rd.blocks[:keep], rd.chunkStarts[:keep], end
	}
	for start < len(r.entries) {
		sum, end, size := 0, start, 0
		for end < len(r.entries) {
			sum += r.entries[end].tokens
			size += len(r.entries[end].content) + 2
			end++
			if sum >= CacheChunkTokens {
				break
			}
		}
		h := head(start == 0)
		size += len(h)
		if end == len(r.entries) && sum < CacheChunkTokens {
			size += CacheChunkTokens * 4 // room for the open last chunk to grow
		}
		// The chunk follows the last one in the slab (a Builder only
		// appends, so the texts earlier requests hold stay as they were),
		// or starts a new slab; or the slab ends with its heading and first
		// entry already (a fold's summary, written there by summaryBuf).
		i := start
		if start == 0 && rd.endsWith(h, r.entries[0].content, size) {
			i++
		} else {
			if rd.text.Cap()-rd.text.Len() < size {
				rd.text = strings.Builder{}
				rd.text.Grow(max(chunkSlabBytes, size))
			}
			rd.at = rd.text.Len()
			rd.text.WriteString(h)
		}
		for ; i < end; i++ {
			if i > start {
				rd.text.WriteString("\n\n")
			}
			rd.text.WriteString(r.entries[i].content)
		}
		text := rd.text.String()[rd.at:]
		headLen := len(text)
		if nl := strings.IndexByte(text, '\n'); nl >= 0 {
			headLen = nl + 1
		}
		rd.headTokens, rd.tailSum = c.counter.Count(text[:headLen]), sum
		blocks = append(blocks, Block{
			Region: r.name, Role: RoleSystem, Type: BlockText, Text: text,
			Tokens: rd.headTokens + sum, Cache: hint, Volatility: r.def.Volatility,
			Hash: hashText(text),
		})
		starts = append(starts, start)
		start = end
	}
	rd.blocks, rd.chunkStarts, rd.count = blocks, starts, len(r.entries)
}

// endsWith reports whether the chunk slab ends with head and then content,
// with room left for the rest of a chunk of size bytes, and if so starts
// the chunk there. Where content is that text (the same bytes), comparing
// them takes no time.
func (rd *rendered) endsWith(head, content string, size int) bool {
	n, k := rd.text.Len(), len(head)+len(content)
	if n < k || rd.text.Cap()-n < size-k {
		return false
	}
	text := rd.text.String()[n-k:]
	if text[len(head):] != content || text[:len(head)] != head {
		return false
	}
	rd.at = n - k
	return true
}

// reuseShiftedChunks serves a grows region whose oldest entries left (and
// that may have been appended to since): chunks are cut again from the new
// front, the same greedy way, and once a cut falls where an old chunk
// started, that chunk and those after it hold the same entries and text as
// before and are kept, with the open last chunk's state. It returns the
// entry the usual path renders from: the first entry past the old ones, or
// 0 (everything) when the cuts never meet an old start.
func (c *Context) reuseShiftedChunks(r *region, hint CacheHint, head func(bool) string) int {
	rd := &r.rend
	kept := rd.count - r.shifted
	if kept < 1 || kept > len(r.entries) || (r.changedFrom >= 0 && r.changedFrom < kept) ||
		len(rd.blocks) < 2 || len(rd.blocks) != len(rd.chunkStarts) {
		return 0
	}
	k, start, cuts := 1, 0, 0
	for {
		for k < len(rd.chunkStarts) && rd.chunkStarts[k]-r.shifted < start {
			k++
		}
		if k == len(rd.chunkStarts) {
			return 0
		}
		if start > 0 && rd.chunkStarts[k]-r.shifted == start {
			break
		}
		sum, end := 0, start
		for end < kept && sum < CacheChunkTokens {
			sum += r.entries[end].tokens
			end++
		}
		if sum < CacheChunkTokens {
			return 0 // an open chunk before any old start
		}
		start = end
		cuts++
	}
	blocks := make([]Block, 0, cuts+len(rd.blocks)-k)
	starts := make([]int, 0, cap(blocks))
	for from := 0; from < start; {
		sum, end, size := 0, from, 0
		for sum < CacheChunkTokens {
			sum += r.entries[end].tokens
			size += len(r.entries[end].content) + 2
			end++
		}
		h := head(from == 0)
		var b strings.Builder
		b.Grow(size + len(h))
		b.WriteString(h)
		for i := from; i < end; i++ {
			if i > from {
				b.WriteString("\n\n")
			}
			b.WriteString(r.entries[i].content)
		}
		text := b.String()
		headLen := len(text) // the heading's first line, as renderChunked counts it
		if nl := strings.IndexByte(text, '\n'); nl >= 0 {
			headLen = nl + 1
		}
		blocks = append(blocks, Block{
			Region: r.name, Role: RoleSystem, Type: BlockText, Text: text,
			Tokens: c.counter.Count(text[:headLen]) + sum, Cache: hint, Volatility: r.def.Volatility,
			Hash: hashText(text),
		})
		starts = append(starts, from)
		from = end
	}
	blocks = append(blocks, rd.blocks[k:]...)
	for _, st := range rd.chunkStarts[k:] {
		starts = append(starts, st-r.shifted)
	}
	rd.blocks, rd.chunkStarts, rd.count = blocks, starts, kept
	return kept
}

// renderMessages turns a sliding window into messages (ENGINE.md §6.2),
// reusing each entry's cached message. Messages wholly before the first
// changed entry are kept: after an append only the last message (tool
// results merge into it) and the new ones are built.
func (c *Context) renderMessages(r *region, dirty int) []Message {
	rd := &r.rend
	rd.dropped, rd.now = 0, c.asm.count
	if dirty == 0 && r.shifted > 0 {
		dirty = dropShiftedMessages(r)
	}
	k, from := 0, 0 // first message and entry to build
	if dirty > 0 && dirty <= rd.count && len(rd.msgInfo) == len(rd.msgs) {
		// The message holding entry dirty-1 is built again: entries after
		// it may merge into it. It is near the end, mostly.
		k = len(rd.msgInfo) - 1
		for k > 0 && rd.msgInfo[k].at-rd.atOff > dirty-1 {
			k--
		}
		k = max(k, 0)
		if k < len(rd.msgInfo) {
			from = rd.msgInfo[k].at - rd.atOff
			// Unless it ends there and nothing merges into it (a tool
			// result after a tool result): then it is kept too.
			end := rd.count
			if k+1 < len(rd.msgInfo) {
				end = rd.msgInfo[k+1].at - rd.atOff
			}
			if end == dirty && dirty <= len(r.entries) && (dirty == len(r.entries) || r.entries[dirty-1].kind != EntryToolResult || r.entries[dirty].kind != EntryToolResult) {
				k, from = k+1, dirty
			}
		}
	}
	// Assemble copies the messages out, so the slice is reused; the blocks
	// of merged tool results are new (requests hold them).
	out, info := rd.msgs[:k], rd.msgInfo[:k]
	if k == 0 {
		rd.atOff = 0
		rd.base.tokens, rd.base.users, rd.base.bad = 0, 0, 0
	}
	// Room for the messages, and for the two that finishing a lent
	// request may append (lendWindow).
	if need := k + len(r.entries) - from + 2; cap(out) < need || cap(info) < need {
		// The messages move down to the start of their arrays, or to new
		// ones with as much room again for the window to slide through.
		if cap(rd.msgArr) < need || cap(rd.infoArr) < need {
			rd.msgArr, rd.infoArr = make([]Message, 2*need), make([]msgInfo, 2*need)
		}
		out = append(rd.msgArr[:0], out...)
		info = append(rd.infoArr[:0], info...)
	}
	// Each message is summed as it is built, from the sums of the one
	// before.
	var x msgInfo
	if k > 0 {
		x = info[k-1]
	}
	for i := from; i < len(r.entries); {
		e := r.entries[i]
		if e.msg == nil {
			e.msg = c.entryMessage(r, e)
		}
		x.at = i + rd.atOff
		i++
		if e.kind != EntryToolResult {
			out = append(out, *e.msg)
		} else {
			// A run of tool results is one user message. One result's
			// blocks serve as they are (capped, so that a second result
			// is appended to a copy).
			blocks := e.msg.Blocks[:len(e.msg.Blocks):len(e.msg.Blocks)]
			for ; i < len(r.entries) && r.entries[i].kind == EntryToolResult; i++ {
				e := r.entries[i]
				if e.msg == nil {
					e.msg = c.entryMessage(r, e)
				}
				blocks = append(blocks, e.msg.Blocks...)
			}
			out = append(out, Message{Role: RoleUser, Blocks: blocks})
		}
		m := &out[len(out)-1]
		if m.Role == RoleUser {
			x.users++
		}
		prevUses := x.uses
		x.uses, x.results = false, false
		empty := true // as emptyMessage says, in the same pass
		for j := range m.Blocks {
			b := &m.Blocks[j]
			x.tokens += b.Tokens
			switch b.Type {
			case BlockToolUse:
				x.uses, empty = true, false
			case BlockToolResult:
				x.results, empty = true, false
			default:
				empty = empty && strings.TrimSpace(b.Text) == ""
			}
		}
		// Messages with no tool blocks between them pair.
		if empty || len(out) > 1 && (prevUses || x.results) && !pairOK(&out[len(out)-2], m) {
			x.bad++ // no blocks is empty too
		}
		info = append(info, x)
	}
	rd.msgInfo, rd.count, rd.kept = info, len(r.entries), k
	return out
}

// dropShiftedMessages serves a window whose oldest entries left (and that
// may have been appended to since): when they held whole messages, the
// messages after those are kept (rend.dropped says how many went before
// them), with their sums less the dropped ones'. It returns the entry the
// usual path renders from, or 0 (everything).
func dropShiftedMessages(r *region) int {
	rd := &r.rend
	kept := rd.count - r.shifted
	if r.changedFrom >= 0 {
		kept = min(kept, r.changedFrom)
	}
	if kept < 1 || kept > len(r.entries) || len(rd.msgInfo) != len(rd.msgs) {
		return 0
	}
	// The messages that went: a few, from the front.
	j, at := 0, r.shifted+rd.atOff
	for j < len(rd.msgInfo) && rd.msgInfo[j].at < at {
		j++
	}
	if j == 0 || j == len(rd.msgInfo) || rd.msgInfo[j].at != at {
		return 0
	}
	// The first message kept had one before it, now gone: only its
	// emptiness counts against it.
	gone, first := rd.msgInfo[j-1], rd.msgInfo[j]
	bad := first.bad - gone.bad
	// The messages kept stay where they are in their arrays (the next
	// render that needs the room moves them down), and their starts are
	// read less the entries gone (atOff).
	clear(rd.msgs[:j]) // holds no stale blocks
	rd.msgs, rd.msgInfo, rd.atOff = rd.msgs[j:], rd.msgInfo[j:], at
	if emptyMessage(&rd.msgs[0]) {
		bad--
	}
	rd.base.tokens, rd.base.users, rd.base.bad = gone.tokens, gone.users, gone.bad+bad
	rd.count -= r.shifted
	rd.dropped = j
	return kept
}

// emptyMessage reports whether m has no blocks but blank text ones.
func emptyMessage(m *Message) bool {
	for j := range m.Blocks {
		if b := &m.Blocks[j]; b.Type != BlockText || strings.TrimSpace(b.Text) != "" {
			return false
		}
	}
	return true
}

func (c *Context) entryMessage(r *region, e *entry) *Message {
	region := r.name
	switch e.kind {
	case EntryUser:
		m, b := r.rend.oneBlockMessage(RoleUser)
		b.set(region, RoleUser, BlockText, e.content, e.tokens, hashText(e.content), "", "", nil, false)
		return m
	case EntryAssistant:
		callTokens := 0
		for i := range e.calls {
			if i < len(e.callTok) {
				callTokens += e.callTok[i]
			}
		}
		text := len(e.calls) == 0 || e.content != ""
		n := len(e.calls)
		if text {
			n++
		}
		m := r.rend.newMessage(RoleAssistant, n)
		m.Blocks = m.Blocks[:n] // its room
		bs := m.Blocks
		if text {
			bs[0].set(region, RoleAssistant, BlockText, e.content, e.tokens-callTokens, hashText(e.content), "", "", nil, false)
			bs = bs[1:]
		}
		for i, tc := range e.calls {
			t := 0
			if i < len(e.callTok) {
				t = e.callTok[i]
			}
			bs[i].set(region, RoleAssistant, BlockToolUse, "", t, hashCall(tc.ID, tc.Name, tc.Args), tc.ID, tc.Name, tc.Args, false)
		}
		return m
	case EntryToolResult:
		m, b := r.rend.oneBlockMessage(RoleUser)
		b.set(region, RoleUser, BlockToolResult, e.content, e.tokens, hashPair(e.callID, e.content), e.callID, e.tool, nil, e.isError)
		return m
	}
	role, text := RoleUser, e.content
	t := strings.TrimSpace(e.content)
	switch {
	case strings.HasPrefix(t, "Assistant: "):
		role, text = RoleAssistant, strings.TrimPrefix(t, "Assistant: ")
	case strings.HasPrefix(t, "User: "):
		text = strings.TrimPrefix(t, "User: ")
	}
	m, b := r.rend.oneBlockMessage(role)
	b.set(region, role, BlockText, text, e.tokens, hashText(text), "", "", nil, false)
	return m
}

// set makes b a block of a message, written in place: a composite literal
// is built aside from a template in memory (data-cache misses) and then
// copied.
func (b *Block) set(region string, role Role, typ BlockType, text string, tokens int, hash uint64, id, name string, args json.RawMessage, isError bool) {
	b.Region, b.Text, b.Tokens, b.Hash = region, text, tokens, hash
	b.ToolCallID, b.ToolName, b.Args = id, name, args
	b.Role, b.Type, b.Cache, b.Volatility, b.Breakpoint, b.IsError = role, typ, CacheSlidingPrefix, VolatilityRewritten, false, isError
}

// oneBlockMessage makes a message of one block (most entries' messages
// are), and returns it with the block to write.
func (a *rendered) oneBlockMessage(role Role) (*Message, *Block) {
	m := a.newMessage(role, 1)
	m.Blocks = m.Blocks[:1]
	return m, &m.Blocks[0]
}

// newMessage returns an entry's message with room for n blocks: a retired
// one with that room, or one cut from slabs (an allocation or two per
// message were a quarter of a run's).
func (a *rendered) newMessage(role Role, n int) *Message {
	for a.retiredN > 0 && a.retired[a.retiredAt].at+2 <= a.now {
		m := a.retired[a.retiredAt].m
		a.retired[a.retiredAt] = retiredMsg{}
		a.retiredAt, a.retiredN = (a.retiredAt+1)&(maxRetired-1), a.retiredN-1
		if cap(m.Blocks) == n {
			m.Role, m.Blocks, m.Breakpoint = role, m.Blocks[:0], false
			return m
		}
	}
	const slab = 64
	if len(a.msgSlab) == 0 {
		a.msgSlab = make([]Message, slab)
	}
	if len(a.blockSlab) < n {
		a.blockSlab = make([]Block, max(slab, n))
	}
	m := &a.msgSlab[0]
	m.Role, m.Blocks = role, a.blockSlab[:0:n]
	a.msgSlab, a.blockSlab = a.msgSlab[1:], a.blockSlab[n:]
	return m
}

// retire takes the message of an entry that left the window at the
// assembler's count now, for newMessage to reuse from the next-but-one
// Assemble on, when no request it is in is valid any longer.
func (a *rendered) retire(m *Message, now uint64) {
	if a.retired == nil {
		a.retired = make([]retiredMsg, maxRetired)
	}
	if a.retiredN == maxRetired {
		// Not assembled for a while: the oldest is left to the GC.
		a.retired[a.retiredAt] = retiredMsg{}
		a.retiredAt, a.retiredN = (a.retiredAt+1)&(maxRetired-1), a.retiredN-1
	}
	a.retired[(a.retiredAt+a.retiredN)&(maxRetired-1)] = retiredMsg{m, now}
	a.retiredN++
}

// renderCustom runs a custom region's render hook on every assembly; a
// failure falls back to a plain [name]: block (seed 001).
func (c *Context) renderCustom(r *region) ([]Block, []Message) {
	fallback := func(why string) ([]Block, []Message) {
		c.warn(r.name, why+"; region rendered as a plain block")
		if len(r.entries) == 0 {
			return nil, nil
		}
		return []Block{c.sysBlock(r, "["+r.name+"]:\n"+r.joined(), CacheNever, r.tokens)}, nil
	}
	if r.script == nil {
		return fallback("no script")
	}
	out, err := r.script.Render(c.scriptCtx(r))
	c.scriptOutput(r, "render")
	if err != nil {
		return fallback("render failed: " + err.Error())
	}
	hint := CacheUntilChanged
	if r.def.Persistent {
		hint = CacheAlways
	}
	var blocks []Block
	emitted := 0
	for _, s := range out.System {
		if s == "" {
			continue
		}
		t := c.counter.Count(s)
		emitted += t
		blocks = append(blocks, Block{Region: r.name, Role: RoleSystem, Type: BlockText, Text: s, Tokens: t, Cache: hint, Volatility: VolatilityRewritten, Hash: hashText(s)})
	}
	var msgs []Message
	for i, sm := range out.Messages {
		var role Role
		switch sm.Role {
		case "user":
			role = RoleUser
		case "assistant":
			role = RoleAssistant
		default:
			return fallback(fmt.Sprintf("render returned message %d with role %q", i, sm.Role))
		}
		m := Message{Role: role}
		if sm.Content != "" || (len(sm.ToolCalls) == 0 && len(sm.ToolResults) == 0) {
			t := c.counter.Count(sm.Content)
			emitted += t
			m.Blocks = append(m.Blocks, Block{Region: r.name, Role: role, Type: BlockText, Text: sm.Content, Tokens: t, Cache: CacheSlidingPrefix, Volatility: VolatilityRewritten, Hash: hashText(sm.Content)})
		}
		for _, tc := range sm.ToolCalls {
			t := c.counter.Count(tc.Name) + c.counter.Count(string(tc.Args))
			emitted += t
			m.Blocks = append(m.Blocks, Block{Region: r.name, Role: role, Type: BlockToolUse, ToolCallID: tc.ID, ToolName: tc.Name, Args: tc.Args, Tokens: t, Cache: CacheSlidingPrefix, Volatility: VolatilityRewritten, Hash: hashCall(tc.ID, tc.Name, tc.Args)})
		}
		for _, tr := range sm.ToolResults {
			t := c.counter.Count(tr.Content)
			emitted += t
			m.Blocks = append(m.Blocks, Block{Region: r.name, Role: role, Type: BlockToolResult, ToolCallID: tr.ToolCallID, Text: tr.Content, IsError: tr.IsError, Tokens: t, Cache: CacheSlidingPrefix, Volatility: VolatilityRewritten, Hash: hashParts(tr.ToolCallID, tr.Content)})
		}
		msgs = append(msgs, m)
	}
	if emitted <= r.max {
		r.overBudget = 0
		return blocks, msgs
	}
	// Warn once per distinct over-budget render, not at every assembly
	// that re-sends it: a report counts conditions, not requests.
	d := mix(uint64(r.max), uint64(len(blocks)))
	for _, b := range blocks {
		d = mix(d, b.Hash)
	}
	for _, m := range msgs {
		d = mix(d, uint64(m.Role)<<8|uint64(len(m.Blocks)))
		for _, b := range m.Blocks {
			d = mix(d, b.Hash^uint64(b.Type))
		}
	}
	d |= 1 // never 0, which means "not over budget"
	if d != r.overBudget {
		r.overBudget = d
		c.warn(r.name, fmt.Sprintf("render emitted %d tokens, over the region's budget of %d; sent anyway", emitted, r.max))
	}
	return blocks, msgs
}

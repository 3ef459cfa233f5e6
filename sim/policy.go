package sim

import (
	"math"
	"strings"
	"unsafe"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// policy is one context policy: it observes the trace's events and says what
// request it would send at an inference.
type policy interface {
	// observe applies one event. ev is valid only during the call.
	observe(ev *trace.Event)
	// request returns the request for the next inference. The returned value
	// is valid until the next call of observe or request.
	request() *Request
}

// env is what policies share with the run: the tokenizer that makes blocks,
// the window and the counters policies report into.
type env struct {
	tok     Tokenizer
	prof    Profile
	window  int
	content map[string]int32    // content id -> 1 + the number of its stat, see statAt
	factIdx map[string][]*Block // fact id -> blocks that list it
	arrived int64               // tokens of content that has entered the context so far
	// cur is the content stat of the tool result being observed, curID its
	// id: its block is recorded without looking the id up again.
	cur   *contentStat
	curID string
	// refetching marks blocks made while the agent re-fetches evicted results.
	refetching bool
	// series: a SeriesSink reads each request's Regions (nothing else does).
	series bool
	// rebuild: see Config.rebuild.
	rebuild bool
	// literalRuns: see Config.literalRuns.
	literalRuns bool
	// toolResults is how many tool results the run will have, if known: a
	// size for maps with an entry per result.
	toolResults int

	// regionNames lists the regions blocks came from, in order of first
	// block; a block's slot indexes it.
	regionNames []string

	evictions     int
	compactions   int
	compactionSeq int
	sumIn         int // summariser input tokens
	sumOut        int // summariser output tokens
	warnings      []string

	// scratch holds what the run reuses of earlier runs' (nil in tests).
	scratch *runScratch

	// Blocks and content stats are allocated a slab at a time: a run keeps
	// every block it makes (content stats list them), and its slabs serve
	// later runs (a run's blocks were two fifths of its allocation).
	blockSlab []Block
	slabs     []*[slabLen]Block // the first nslabs are in use
	stats     []*[slabLen]contentStat
	nslabs    int
	nstat     int // content stats made, numbered in order from 0
}

// slabLen is how many blocks or content stats a slab holds.
const slabLen = 64

// allocBlock returns a zero block from the current slab.
func (e *env) allocBlock() *Block {
	if len(e.blockSlab) == 0 {
		if e.nslabs == len(e.slabs) {
			e.slabs = append(e.slabs, new([slabLen]Block))
		}
		e.blockSlab = e.slabs[e.nslabs][:]
		e.nslabs++
	}
	b := &e.blockSlab[0]
	e.blockSlab = e.blockSlab[1:]
	return b
}

// release zeroes the slabs in use, for later runs: no block or content
// stat may be used after it.
func (e *env) release() {
	for _, s := range e.slabs[:e.nslabs] {
		*s = [slabLen]Block{}
	}
	for _, s := range e.stats[:(e.nstat+slabLen-1)/slabLen] {
		*s = [slabLen]contentStat{}
	}
	e.nslabs, e.nstat, e.blockSlab = 0, 0, nil
}

// statAt returns the content stat numbered i.
func (e *env) statAt(i int) *contentStat {
	return &e.stats[i/slabLen][i%slabLen]
}

// newBlock makes a block, counting its tokens once.
func (e *env) newBlock(kind BlockKind, id, text string, size int, facts []trace.Fact) *Block {
	return e.newBlockHashed(kind, id, text, size, facts, hashContent(kind, id, text, size))
}

// newBlockHashed is newBlock for content whose hash is known already.
func (e *env) newBlockHashed(kind BlockKind, id, text string, size int, facts []trace.Fact, hash uint64) *Block {
	b := e.makeBlockSigned(kind, id, text, size, facts, hash)
	e.record(b, e.observed(id))
	return b
}

// makeBlockSigned is makeBlock counting the tokens, and signing the text
// for the meter in the same pass (it finds the runs of filler that signing
// skips anyway).
func (e *env) makeBlockSigned(kind BlockKind, id, text string, size int, facts []trace.Fact, hash uint64) *Block {
	if text == "" {
		return e.makeBlock(kind, id, text, size, facts, hash, e.tok.CountBytes(size))
	}
	var s signer // countSigned's, whose size the meter wants too
	tokens, _, _, _ := countSegments(e.tok, text, 0, 0, &s)
	b := e.makeBlock(kind, id, text, size, facts, hash, tokens)
	b.sigState, b.textLen = 2, s.size
	if s.plain <= sigMaxBytes {
		b.sig, b.sigState = s.sig, 1
	}
	return b
}

// makeBlock makes a block that record has yet to enter in env.content.
func (e *env) makeBlock(kind BlockKind, id, text string, size int, facts []trace.Fact, hash uint64, tokens int) *Block {
	b := e.makeTextBlock(kind, text, hash, tokens)
	b.ID, b.Size = id, size
	if len(facts) > 0 {
		b.Facts = append([]trace.Fact(nil), facts...)
	}
	return b
}

// makeTextBlock is makeBlock(kind, "", text, 0, nil, hash, tokens): the
// region policy's blocks, a dozen thousand in a run, are made with half the
// arguments.
func (e *env) makeTextBlock(kind BlockKind, text string, hash uint64, tokens int) *Block {
	// The block is zero: set field by field, not copied whole (224 bytes,
	// with a write barrier on every pointer while the GC marks).
	b := e.allocBlock()
	b.Kind, b.Text = kind, text
	b.since, b.nextUse = -1, -1
	b.exempt, b.Refetched = kind == BlockTask || kind == BlockSystem, e.refetching
	b.Tokens = tokens
	b.Hash = hash
	return b
}

// stat returns the content stat of id, made if new. A new id, as most are
// (a tool result's), is entered in one map access that adds to its value,
// undone if the id was there already: not looked up, then entered.
func (e *env) stat(id string) *contentStat {
	n, had := e.nstat, len(e.content)
	e.content[id] += int32(n + 1)
	if len(e.content) == had {
		e.content[id] -= int32(n + 1)
		return e.statAt(int(e.content[id]) - 1)
	}
	if n%slabLen == 0 && n/slabLen == len(e.stats) {
		e.stats = append(e.stats, new([slabLen]contentStat))
	}
	e.nstat++
	st := e.statAt(n)
	st.blocks = st.first[:0]
	return st
}

// lookup returns the content stat of id, or nil if it has none.
func (e *env) lookup(id string) *contentStat {
	if i := e.content[id]; i != 0 {
		return e.statAt(int(i) - 1)
	}
	return nil
}

// observed returns the content stat of id if id is the tool result being
// observed, else nil.
func (e *env) observed(id string) *contentStat {
	if e.cur != nil && e.curID == id {
		return e.cur
	}
	return nil
}

// record enters block b under its content id, whose stat st is if not nil,
// counting the content's arrival the first time it enters the context.
func (e *env) record(b *Block, st *contentStat) {
	if st == nil {
		st = e.stat(b.ID)
	}
	if !st.entered {
		e.arrived += int64(b.Tokens)
		st.arrivedAt, st.entered = e.arrived, true
	}
	if !b.Refetched {
		st.blocks = append(st.blocks, b)
		for _, f := range b.Facts {
			e.factIdx[f.ID] = append(e.factIdx[f.ID], b)
		}
	}
}

// eventBlock makes the block of a trace event, or nil for events that carry
// no context content.
func (e *env) eventBlock(ev *trace.Event) *Block {
	var kind BlockKind
	text := ev.Text
	switch ev.Kind {
	case trace.KindSystem:
		kind = BlockSystem
	case trace.KindTask:
		kind = BlockTask
	case trace.KindUser:
		kind = BlockUser
	case trace.KindAssistant:
		kind = BlockAssistant
		text = assistantText(ev)
	case trace.KindToolResult:
		kind = BlockToolResult
	default:
		return nil
	}
	size := ev.Size
	if text != "" {
		size = 0
	}
	return e.newBlock(kind, ev.ID, text, size, ev.Facts)
}

// assistantText renders a reply with its tool calls, as a provider would
// serialise them into the next request.
func assistantText(ev *trace.Event) string {
	if len(ev.ToolCalls) == 0 {
		if ev.Text == "" && ev.Size > 0 {
			return ""
		}
		return ev.Text
	}
	const fixed = len("\n<tool_use id=\"\" name=\"\"></tool_use>")
	n := len(ev.Text)
	for _, c := range ev.ToolCalls {
		n += fixed + len(c.ID) + len(c.Name) + len(c.Args)
	}
	var sb strings.Builder
	sb.Grow(n) // grown as it is written, the text took three times its bytes
	sb.WriteString(ev.Text)
	for _, c := range ev.ToolCalls {
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString("<tool_use id=\"")
		sb.WriteString(c.ID)
		sb.WriteString("\" name=\"")
		sb.WriteString(c.Name)
		sb.WriteString("\">")
		sb.Write(c.Args)
		sb.WriteString("</tool_use>")
	}
	return sb.String()
}

// reserveFor is the reply reserve: the part of the window kept free for the
// answer. Claude Code reserves up to 20,000 tokens for output (PEERS.md §B.6);
// a model's own max output and a quarter of the window cap it.
func reserveFor(p Profile, window int) int {
	r := 20000
	if p.MaxOutput > 0 && p.MaxOutput < r {
		r = p.MaxOutput
	}
	if window/4 < r {
		r = window / 4
	}
	return r
}

// flatPolicy is one message list: the flat baselines, unbounded and
// clairvoyant differ only in what they do when the list is too long. The list
// is kept in request order (pinned system and task blocks first when
// keepSystem), and dirty records the lowest index changed since the last
// request, so that measuring an append-only request costs only what was
// appended.
type flatPolicy struct {
	env        *env
	budget     int // window minus reserve; math.MaxInt when unbounded
	keepSystem bool

	// flat-compact
	compactAt   int // 0 = off
	compactKeep int
	summaryMax  int

	// flat-clear-tools
	clearAt   int // 0 = off
	clearKeep int

	// clairvoyant
	oracle *future
	next   []int // evictFurthest's, by index in all
	top    []int // evictFurthest's

	all    []*Block // the request, in order
	npin   int      // pinned blocks at the front of all
	tokens int      // tokens of all
	dirty  int
	sent   int // len(all) at the last request

	req Request
}

func (p *flatPolicy) observe(ev *trace.Event) {
	b := p.env.eventBlock(ev)
	if b == nil {
		return
	}
	p.add(b)
}

func (p *flatPolicy) add(b *Block) {
	p.tokens += b.Tokens
	if p.keepSystem && (b.Kind == BlockSystem || b.Kind == BlockTask) {
		p.all = append(p.all, nil)
		copy(p.all[p.npin+1:], p.all[p.npin:])
		p.all[p.npin] = b
		p.touch(p.npin)
		p.npin++
		return
	}
	p.all = append(p.all, b)
}

func (p *flatPolicy) touch(i int) {
	if i < p.dirty {
		p.dirty = i
	}
}

// dropOldest drops the oldest unpinned messages until the list fits and
// returns how many it dropped.
func (p *flatPolicy) dropOldest() int {
	// The newest message always stays: an agent sends at least what it just
	// received. When that message alone is over the window, the request is
	// too, and the over_window_requests metric counts it, instead of an
	// empty request that would look free.
	k := p.npin
	for k < len(p.all)-1 && p.tokens > p.budget {
		p.tokens -= p.all[k].Tokens
		k++
	}
	n := k - p.npin
	if n == 0 {
		return 0
	}
	p.env.evictions += n
	p.touch(p.npin)
	if p.npin == 0 {
		clear(p.all[:n])
		p.all = p.all[n:]
		return n
	}
	m := copy(p.all[p.npin:], p.all[k:])
	clear(p.all[p.npin+m:])
	p.all = p.all[:p.npin+m]
	return n
}

func (p *flatPolicy) request() *Request {
	if p.clearAt > 0 && p.tokens > p.clearAt {
		p.clearTools()
	}
	if p.compactAt > 0 && p.tokens > p.compactAt {
		p.compact()
	}
	if p.oracle != nil && p.tokens > p.budget {
		p.evictFurthest()
	}
	p.req.dropped = 0
	if p.tokens > p.budget {
		// Only appended to since the last request: its blocks but those
		// dropped are carried in order, which the meter need not walk.
		appended := p.dirty >= p.sent
		if n := p.dropOldest(); appended {
			p.req.dropped = min(n, p.sent-p.npin)
		}
	}
	p.req.Blocks = p.all
	p.req.same = p.dirty
	p.dirty = math.MaxInt
	p.sent = len(p.all)
	p.req.Marks = flatMarks(p.req.Marks[:0], p.req.Blocks)
	return &p.req
}

// flatMarks places the cache breakpoints a typical agent uses: the end of the
// leading system blocks, and the end of the request (automatic caching).
func flatMarks(marks []CacheMark, blocks []*Block) []CacheMark {
	sys := -1
	for i, b := range blocks {
		if b.Kind != BlockSystem {
			break
		}
		sys = i
	}
	if sys >= 0 && sys < len(blocks)-1 {
		marks = append(marks, CacheMark{Index: sys, TTL: "5m"})
	}
	if len(blocks) > 0 {
		marks = append(marks, CacheMark{Index: len(blocks) - 1, TTL: "5m"})
	}
	return marks
}

// clearTools replaces every tool result but the last clearKeep with a
// placeholder, as Anthropic's clear_tool_uses_20250919 does server-side.
// Cleared results stay cleared: the full history only grows, so the server
// would clear them again on every later request.
func (p *flatPolicy) clearTools() {
	kept := 0
	for i := len(p.all) - 1; i >= p.npin; i-- {
		b := p.all[i]
		if b.Kind != BlockToolResult {
			if b.Kind == BlockPlaceholder && kept >= p.clearKeep {
				break // everything older is cleared already
			}
			continue
		}
		kept++
		if kept <= p.clearKeep {
			continue
		}
		ph := p.env.newBlock(BlockPlaceholder, b.ID+"#cleared", clearedPlaceholder, 0, nil)
		p.tokens += ph.Tokens - b.Tokens
		p.all[i] = ph
		p.touch(i)
		p.env.evictions++
	}
}

const clearedPlaceholder = "[tool result cleared to save context]"

// compact summarises all messages but the last compactKeep into one summary
// block placed after the system blocks.
func (p *flatPolicy) compact() {
	live := p.all[p.npin:]
	// Keep the last compactKeep messages, but no more than half the
	// threshold of them, or every request would compact again.
	n, kept := len(live), 0
	for n > 0 && len(live)-n < p.compactKeep && kept+live[n-1].Tokens <= p.compactAt/2 {
		n--
		kept += live[n].Tokens
	}
	if n <= 0 {
		return
	}
	var sys, old []*Block
	for _, b := range live[:n] {
		if b.Kind == BlockSystem {
			sys = append(sys, b)
		} else {
			old = append(old, b)
		}
	}
	if len(old) == 0 {
		return
	}
	p.env.compactions++
	sum := summarize(p.env, old, p.summaryMax)
	rest := append([]*Block(nil), live[n:]...)
	all := append([]*Block(nil), p.all[:p.npin]...)
	all = append(append(append(all, sys...), sum), rest...)
	p.all = all
	p.touch(0)
	p.tokens = 0
	for _, b := range p.all {
		p.tokens += b.Tokens
	}
}

// evictFurthest is Bélády's rule: while the list is over budget, evict the
// block whose next use (a later probe of its content) is furthest away;
// content never used again goes first, oldest first. The task and system
// prompt are used by every request and go last, newest first.
func (p *flatPolicy) evictFurthest() {
	if p.tokens <= p.budget {
		return
	}
	// Each block's next use is found once; the blocks evicted are then
	// picked among these numbers, not the blocks, and dropped at once.
	next := p.next[:0]
	for i, b := range p.all {
		if b.Kind == BlockTask || b.Kind == BlockSystem {
			next = append(next, -1-i) // used by every request
			continue
		}
		if b.nextUse < p.oracle.pos {
			b.nextUse = p.oracle.nextUse(b.ID)
		}
		next = append(next, b.nextUse)
	}
	p.next = next
	first, n, pinned := len(next), 0, 0
	for p.tokens > p.budget && n < len(next) {
		p.top = furthest(next, p.top[:0])
		for _, best := range p.top {
			if p.tokens <= p.budget {
				break
			}
			next[best] = gone
			p.tokens -= p.all[best].Tokens
			n++
			if best < p.npin {
				pinned++
			}
			first = min(first, best)
		}
	}
	p.env.evictions += n
	p.npin -= pinned
	kept := first
	for i, b := range p.all[first:] {
		if next[first+i] != gone {
			p.all[kept] = b
			kept++
		}
	}
	clear(p.all[kept:])
	p.all = p.all[:kept]
	p.touch(first)
}

// gone marks an evicted block's next use.
const gone = math.MinInt

// furthest appends to top the indices of the greatest of next but those
// gone, in order: the order evictFurthest evicts them in.
func furthest(next, top []int) []int {
	m := gone
	for _, x := range next {
		m = max(m, x)
	}
	for i, x := range next {
		if x == m {
			top = append(top, i)
		}
	}
	return top
}

// future knows, for clairvoyant, where each content is next used.
type future struct {
	uses map[string][]int // content id -> positions of the probes that use it
	pos  int              // current position (events read so far)
}

func (f *future) nextUse(id string) int {
	u := f.uses[id]
	for len(u) > 0 && u[0] < f.pos {
		u = u[1:]
	}
	f.uses[id] = u
	if len(u) == 0 {
		return math.MaxInt
	}
	return u[0]
}

// countText counts text with tok, except that runs of the filler that stands
// in for elided content count as bytes (a BPE would make a few tokens of them).
func countText(tok Tokenizer, text string) int {
	n, _, _, _ := countSegments(tok, text, 0, 0, nil)
	return n
}

// fillerMark is the shortest run of fillerByte counted as bytes.
const fillerMark = "~~~~~~~~~~~~~~~~"

// countSegments is countText from offset from, where before tokens were
// counted for text[:from] (from must start a segment). It also returns where
// the text's last segment starts and the tokens before it: what follows can
// change if the text grows, what precedes cannot; open reports that the last
// segment is a run of filler written out reaching the end of text. Each
// segment (plain text, or a run of filler, encoded or written out) is
// counted on its own, so the sum resumes exactly. If s is not nil, the
// segments are signed into it as well.
func countSegments(tok Tokenizer, text string, from, before int, s *signer) (n, last, beforeLast int, open bool) {
	// bytes/N is called directly: an interface call per segment cost more
	// than counting.
	bp, perBytes := tok.(bytesPer)
	n, pos := before, from
	lit := literalRun(text, pos) // the next run written out
	enc := pos                   // no encoded run starts in text[pos:enc]
	for {
		// The next run: written out (lit) or encoded, whichever comes first.
		i, k, size := len(text), 0, 0
		for enc < lit {
			j := strings.IndexByte(text[enc:lit], 0xFF)
			if j < 0 {
				enc = lit
				break
			}
			enc += j
			if k, size = engine.FillerAt(text[enc:]); size > 0 {
				i = enc
				break
			}
			enc++
		}
		if size == 0 && lit < len(text) {
			i = lit
			k = fillerRun(text[lit:])
			size = k
		}
		if i == len(text) {
			break
		}
		if perBytes {
			n += bp.CountBytes(i - pos)
		} else {
			n += tok.Count(text[pos:i])
		}
		if s != nil {
			s.add(text, pos, i)
			s.size += k
		}
		j := i + size
		if j == len(text) && size == k {
			// The run may go on as the text grows.
			return n + tok.CountBytes(k), i, n, true
		}
		if perBytes {
			n += bp.CountBytes(k)
		} else {
			n += tok.CountBytes(k)
		}
		pos, enc = j, j
		if lit < pos {
			lit = literalRun(text, pos)
		}
	}
	if s != nil {
		s.add(text, pos, len(text))
	}
	if perBytes {
		return n + bp.CountBytes(len(text)-pos), pos, n, false
	}
	return n + tok.Count(text[pos:]), pos, n, false
}

// literalRun is where the first run of filler written out in text[pos:]
// starts, len(text) if none: most texts have no filler byte at all, which
// one IndexByte tells.
func literalRun(text string, pos int) int {
	i := strings.IndexByte(text[pos:], fillerByte[0])
	if i < 0 {
		return len(text)
	}
	if j := strings.Index(text[pos+i:], fillerMark); j >= 0 {
		return pos + i + j
	}
	return len(text)
}

// runs finds the runs of filler of a text, written out (fillerMark or more
// of fillerByte) or encoded (engine.AppendFiller), in order: it remembers
// where the next of each form is, so that a text with many of one form is
// not searched to its end for the other at each.
type runs struct {
	text     string
	lit, enc int // the next run of each form from the last position asked; len(text) if none
	n, size  int // the encoded one's filler bytes and size
}

func runsOf(text string) runs { return runs{text: text, lit: -1, enc: -1} }

// next is the first run at or after pos: where it starts (len(text) if
// there is none), its bytes of filler, and its size in text (n for a run
// written out).
func (r *runs) next(pos int) (at, n, size int) {
	if r.lit < pos {
		r.lit = len(r.text)
		if i := strings.Index(r.text[pos:], fillerMark); i >= 0 {
			r.lit = pos + i
		}
	}
	if r.enc < pos {
		r.enc = len(r.text)
		if i, n, size := engine.NextFiller(r.text[pos:]); i >= 0 {
			r.enc, r.n, r.size = pos+i, n, size
		}
	}
	switch {
	case r.lit < r.enc:
		n := fillerRun(r.text[r.lit:])
		return r.lit, n, n
	case r.enc < len(r.text):
		return r.enc, r.n, r.size
	}
	return len(r.text), 0, 0
}

// signer computes a text's signature as signText does with limit
// sigMaxBytes, one segment at a time.
type signer struct {
	sig   gramSig
	plain int // bytes outside runs of filler so far; the signature is whole while at most sigMaxBytes
	size  int // bytes so far, runs written out
}

// add signs the segment text[pos:end] of plain text, which a run of filler
// follows unless end is the text's end, and one precedes unless pos is 0:
// the trigrams of the segment with "~~" before it and "~~~" after it.
func (s *signer) add(text string, pos, end int) {
	s.size += end - pos
	if s.plain += end - pos; s.plain > sigMaxBytes {
		return
	}
	s.sig.addSpan(text[pos:end], pos > 0, end < len(text))
}

// countSigned is countText that also computes the signature signText would
// with limit sigMaxBytes, reporting false (and no signature) where signText
// would: both walk the same runs of filler.
func countSigned(tok Tokenizer, text string) (n int, g gramSig, ok bool) {
	var s signer
	n, _, _, _ = countSegments(tok, text, 0, 0, &s)
	if s.plain > sigMaxBytes {
		return n, gramSig{}, false
	}
	return n, s.sig, true
}

// grownCount remembers the last text counted for a block that grows by
// appending (a region's open last chunk), so that counting and signing its
// next version scans only what follows the last segment.
type grownCount struct {
	text       string // the text counted
	last       int    // where its last segment starts
	beforeLast int    // tokens of text[:last]
	open       bool   // the last segment is a run of filler reaching the end
	signed     bool   // s.sig is the text's signature
	grew       bool   // text is the text counted before, and more bytes
	s          signer // its plain bytes and size are those of text[:last]
	// The first segment of the last text counted from its start, a new
	// chunk's heading (the same in most), and its trigrams.
	head    string
	headSig gramSig
}

// size is the length of the text counted, its runs written out.
func (g *grownCount) size() int { return g.s.size + len(g.text) - g.last }

// count counts text as countText does, and signs it as countSigned does. A
// text that extends the counted one resumes at its last segment (signing it
// again adds no trigram the text lacks); it is known to extend it at once
// when it shares its bytes (same data pointer: strings are immutable), else
// by one comparison, which costs far less than scanning for filler.
func (g *grownCount) count(tok Tokenizer, text string) (n int, sig gramSig, ok bool) {
	old := g.text
	extends := len(old) > 0 && len(text) >= len(old) &&
		(unsafe.StringData(text) == unsafe.StringData(old) || text[:len(old)] == old)
	g.grew = extends && len(text) > len(old)
	switch {
	case !extends:
		g.s = signer{}
		n = g.resume(tok, text, 0, 0)
	case g.open:
		// The run went on to len(old): only the bytes after it are new.
		j := len(old) + fillerRun(text[len(old):])
		if j == len(text) {
			g.text = text
			n = g.beforeLast + tok.CountBytes(j-g.last)
		} else {
			g.s.size += j - g.last
			n = g.resume(tok, text, j, g.beforeLast+tok.CountBytes(j-g.last))
		}
	default:
		n = g.resume(tok, text, g.last, g.beforeLast)
	}
	if !g.signed {
		return n, gramSig{}, false
	}
	return n, g.s.sig, true
}

// resume counts and signs text from offset from, where before tokens
// precede it.
func (g *grownCount) resume(tok Tokenizer, text string, from, before int) int {
	if bp, ok := tok.(bytesPer); ok && g.s.plain+len(text)-from <= sigMaxBytes {
		if n, ok := g.resumeEncoded(bp, text, from, before); ok {
			return n
		}
	}
	n, last, beforeLast, open := countSegments(tok, text, from, before, &g.s)
	g.signed = g.s.plain <= sigMaxBytes
	if !open {
		g.s.plain -= len(text) - last // the last segment is signed again as it grows
	}
	g.s.size -= len(text) - last // the last segment's bytes are its length
	g.text, g.last, g.beforeLast, g.open = text, last, beforeLast, open
	return n
}

// resumeEncoded is resume for a bytes/N tokenizer where text[from:] has
// no run written out and is signed whole: a chunk's growth by an entry of
// elided content (a few lines between encoded runs), which countSegments
// took some hundred instructions a segment for. One pass over the bytes
// finds the runs and adds the trigrams: those of the text written out are
// those of each run taken as "~~~". It reports false, having done nothing
// but keep a heading, if text starts with less than two bytes before a run
// or text[from:] holds a run written out (found in the same pass: a search
// for one before cost a call per chunk).
func (g *grownCount) resumeEncoded(bp bytesPer, text string, from, before int) (int, bool) {
	const f = engine.FillerByte
	var w gramSig                // the trigrams from text[from:] on
	i, x := from, uint32(f)<<8|f // the last two bytes: a run precedes from > 0
	if from == 0 {
		if h := g.head; len(h) >= 2 && strings.HasPrefix(text, h) {
			i, x, w = len(h), uint32(h[len(h)-2])<<8|uint32(h[len(h)-1]), g.headSig
		} else if len(text) < 2 || text[0]|0x81 == 0xFF || text[1]|0x81 == 0xFF { // or '~'
			return 0, false
		} else {
			i, x = 2, uint32(text[0])<<8|uint32(text[1])
		}
	}
	n, pos, plain, fill := before, from, 0, 0
	stray := false // a 0xFF that starts no run: none may be in a heading kept
	for {
		// The plain bytes up to the next 0xFF, in a loop of their own:
		// with nothing else live in it, it keeps its registers.
		// Bytes 0x7E ('~'), 0x7F, 0xFE and 0xFF leave it.
		for i < len(text) && text[i]|0x81 != 0xFF {
			x = x<<8 | uint32(text[i])
			p := (x & 0xFFFFFF) * gramMul
			w[p>>30] |= 1 << (p >> 24 & 63)
			i++
		}
		if i == len(text) {
			break
		}
		k, m := engine.FillerAt(text[i:])
		if m == 0 { // a byte as any, unless it starts a run written out
			c := text[i]
			if c == fillerByte[0] && strings.HasPrefix(text[i:], fillerMark) {
				return 0, false
			}
			x = x<<8 | uint32(c)
			p := (x & 0xFFFFFF) * gramMul
			w[p>>30] |= 1 << (p >> 24 & 63)
			i++
			stray = stray || c == 0xFF
			continue
		}
		if pos == 0 && !stray {
			g.head, g.headSig = text[:i], w
		}
		// The segment text[pos:i], then k bytes of filler.
		n += bp.CountBytes(i-pos) + bp.CountBytes(k)
		plain += i - pos
		fill += k
		// The trigrams across the run's start; "~~~" is added once below.
		x = x<<8 | f
		p := (x & 0xFFFFFF) * gramMul
		w[p>>30] |= 1 << (p >> 24 & 63)
		x = x<<8 | f
		p = (x & 0xFFFFFF) * gramMul
		w[p>>30] |= 1 << (p >> 24 & 63)
		i += m
		pos = i
	}
	// As resume leaves it: the last segment counted and signed, but not in
	// plain and size.
	if fill > 0 {
		w.add3(f, f, f)
	}
	g.s.sig = g.s.sig.union(w)
	g.s.plain += plain
	g.s.size += plain + fill
	g.signed = true
	g.text, g.last, g.beforeLast, g.open = text, pos, n, false
	return n + bp.CountBytes(len(text)-pos), true
}

// fillerRun is the length of the run of fillerByte that starts s: compared a
// chunk at a time (a memequal), since stand-ins are kilobytes of it.
func fillerRun(s string) int {
	// Gallop: compare doubling spans (up to all of filler) while they match,
	// then halving ones, so that a run of r bytes takes about 2·log2(r/64)
	// comparisons instead of r/64.
	n, step := 0, 64
	for len(s)-n >= step && s[n:n+step] == filler[:step] {
		n += step
		step = min(2*step, len(filler))
	}
	for step > 8 {
		step /= 2
		if len(s)-n >= step && s[n:n+step] == filler[:step] {
			n += step
		}
	}
	for n < len(s) && s[n] == fillerByte[0] {
		n++
	}
	return n
}

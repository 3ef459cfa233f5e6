package sim

import (
	"encoding/json"
	"math"
	"strings"

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
	content map[string]*contentStat
	factIdx map[string][]*contentStat
	arrived int64 // tokens of content that has entered the context so far
	// refetching marks blocks made while the agent re-fetches evicted results.
	refetching bool

	evictions     int
	compactions   int
	compactionSeq int
	sumIn         int // summariser input tokens
	sumOut        int // summariser output tokens
	warnings      []string
}

func (e *env) stat(id string, exempt bool) *contentStat {
	st, ok := e.content[id]
	if !ok {
		st = &contentStat{exempt: exempt}
		e.content[id] = st
	}
	return st
}

// newBlock makes a block, counting its tokens once.
func (e *env) newBlock(kind BlockKind, id, text string, size int, facts []trace.Fact) *Block {
	b := &Block{ID: id, Kind: kind, Text: text, Size: size}
	if len(facts) > 0 {
		b.Facts = append([]trace.Fact(nil), facts...)
	}
	if text != "" {
		b.Tokens = e.tok.Count(text)
	} else {
		b.Tokens = e.tok.CountBytes(size)
	}
	b.Hash = hashContent(kind, id, text, size)
	_, known := e.content[id]
	b.stat = e.stat(id, kind == BlockTask || kind == BlockSystem)
	b.Refetched = e.refetching
	if !known {
		b.stat.arrivedAt = e.arrived
		e.arrived += int64(b.Tokens)
		for _, f := range b.Facts {
			e.factIdx[f.ID] = append(e.factIdx[f.ID], b.stat)
		}
	}
	return b
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
	var sb strings.Builder
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
		sb.Write(compactJSON(c.Args))
		sb.WriteString("</tool_use>")
	}
	return sb.String()
}

func compactJSON(raw json.RawMessage) []byte {
	return raw
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
// clairvoyant differ only in what they do when the list is too long.
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

	pinned []*Block // system and task blocks when keepSystem
	msgs   []*Block // oldest first, from head
	head   int
	tokens int // tokens of pinned + msgs[head:]

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
		p.pinned = append(p.pinned, b)
		return
	}
	p.msgs = append(p.msgs, b)
}

func (p *flatPolicy) live() []*Block { return p.msgs[p.head:] }

func (p *flatPolicy) dropOldest() bool {
	if p.head >= len(p.msgs) {
		return false
	}
	p.tokens -= p.msgs[p.head].Tokens
	p.msgs[p.head] = nil
	p.head++
	p.env.evictions++
	if p.head > 1024 && p.head*2 > len(p.msgs) {
		p.msgs = append([]*Block(nil), p.msgs[p.head:]...)
		p.head = 0
	}
	return true
}

func (p *flatPolicy) request() *Request {
	if p.clearAt > 0 && p.tokens > p.clearAt {
		p.clearTools()
	}
	if p.compactAt > 0 && p.tokens > p.compactAt {
		p.compact()
	}
	if p.oracle != nil {
		p.evictFurthest()
	}
	for p.tokens > p.budget && p.dropOldest() {
	}
	p.req.Blocks = append(p.req.Blocks[:0], p.pinned...)
	p.req.Blocks = append(p.req.Blocks, p.live()...)
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
func (p *flatPolicy) clearTools() {
	live := p.live()
	kept := 0
	for i := len(live) - 1; i >= 0; i-- {
		b := live[i]
		if b.Kind != BlockToolResult {
			continue
		}
		kept++
		if kept <= p.clearKeep {
			continue
		}
		ph := p.env.newBlock(BlockPlaceholder, b.ID+"#cleared", clearedPlaceholder, 0, nil)
		p.tokens += ph.Tokens - b.Tokens
		live[i] = ph
		p.env.evictions++
	}
}

const clearedPlaceholder = "[tool result cleared to save context]"

// compact summarises all messages but the last compactKeep into one summary
// block placed at the front of the messages.
func (p *flatPolicy) compact() {
	live := p.live()
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
	var sys []*Block
	var old []*Block
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
	p.msgs = append(append(append(p.msgs[:0], sys...), sum), rest...)
	p.head = 0
	p.tokens = 0
	for _, b := range p.pinned {
		p.tokens += b.Tokens
	}
	for _, b := range p.msgs {
		p.tokens += b.Tokens
	}
}

// evictFurthest is Bélády's rule: while the list is over budget, evict the
// block whose next use (a later probe of its content) is furthest away;
// content never used again goes first, oldest first. The task and system
// prompt are used by every request and go last.
func (p *flatPolicy) evictFurthest() {
	for p.tokens > p.budget {
		live := p.live()
		best, bestNext := -1, -1
		for i, b := range live {
			if b.Kind == BlockTask || b.Kind == BlockSystem {
				// Used by every request: a candidate only when nothing else is left.
				if best < 0 {
					best = i
				}
				continue
			}
			next := p.oracle.nextUse(b.ID)
			if next > bestNext {
				best, bestNext = i, next
			}
		}
		if best < 0 {
			return
		}
		b := live[best]
		p.tokens -= b.Tokens
		copy(p.msgs[p.head+1:p.head+best+1], p.msgs[p.head:p.head+best])
		p.msgs[p.head] = nil
		p.head++
		p.env.evictions++
	}
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

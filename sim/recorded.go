package sim

import (
	"fmt"
	"math"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// recordedPolicy replays the recorded agent's own context. When the trace
// records the exact request (a usage event with Request, as claude-trace
// logs have), that request is what is measured; otherwise the list grows
// without bound and applies the compactions the agent recorded (dropping the
// events it forgot, or everything before the summary).
type recordedPolicy struct {
	env      *env
	list     []*Block
	next     *trace.Request // the recorded request for the next inference
	recorded map[uint64]*Block
	req      Request
	sawExact bool
	dirty    int // lowest list index changed since the last request
}

func (p *recordedPolicy) observe(ev *trace.Event) {
	switch ev.Kind {
	case trace.KindUsage:
		if ev.Usage != nil && ev.Usage.Request != nil && !ev.Usage.Side {
			p.next = ev.Usage.Request
			p.sawExact = true
		}
	case trace.KindCompaction:
		p.applyCompaction(ev)
	default:
		if b := p.env.eventBlock(ev); b != nil {
			p.list = append(p.list, b)
		}
	}
}

func (p *recordedPolicy) applyCompaction(ev *trace.Event) {
	c := ev.Compaction
	p.env.compactions++
	var kept []*Block
	if len(c.Forgot) > 0 {
		forgot := make(map[string]bool, len(c.Forgot))
		for _, id := range c.Forgot {
			forgot[id] = true
		}
		for _, b := range p.list {
			if forgot[b.ID] {
				p.env.evictions++
				continue
			}
			kept = append(kept, b)
		}
	} else {
		for _, b := range p.list {
			if b.Kind == BlockSystem {
				kept = append(kept, b)
			} else {
				p.env.evictions++
			}
		}
	}
	if c.Summary != "" {
		kept = append(kept, p.env.newBlock(BlockSummary, ev.ID, c.Summary, 0, ev.Facts))
	}
	p.list = kept
	p.dirty = 0
}

func (p *recordedPolicy) request() *Request {
	p.req.Marks = p.req.Marks[:0]
	p.req.repeats = true // identical recorded blocks share one
	if p.next == nil {
		p.req.Blocks = p.list
		p.req.same = p.dirty
		p.dirty = math.MaxInt
		p.req.Marks = flatMarks(p.req.Marks, p.req.Blocks)
		return &p.req
	}
	p.dirty = 0
	p.req.same = 0
	r := p.next
	p.next = nil
	p.req.Blocks = nil
	addBlock := func(kind BlockKind, b trace.Block) {
		h := hashContent(kind, "", b.Text, 0)
		blk, ok := p.recorded[h]
		if !ok {
			blk = p.env.newBlock(kind, fmt.Sprintf("recorded#%016x", h), b.Text, 0, nil)
			p.recorded[h] = blk
		}
		p.req.Blocks = append(p.req.Blocks, blk)
		if b.Cache != "" {
			p.req.Marks = append(p.req.Marks, CacheMark{Index: len(p.req.Blocks) - 1, TTL: b.Cache})
		}
	}
	if r.Tools != "" {
		addBlock(BlockSystem, trace.Block{Type: "text", Text: r.Tools})
	}
	for _, b := range r.System {
		addBlock(BlockSystem, b)
	}
	for _, m := range r.Messages {
		kind := BlockUser
		if m.Role == "assistant" {
			kind = BlockAssistant
		}
		for _, b := range m.Blocks {
			k := kind
			if b.Type == "tool_result" {
				k = BlockToolResult
			}
			addBlock(k, b)
		}
	}
	return &p.req
}

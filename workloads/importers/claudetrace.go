package importers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// claude-trace raw Anthropic API logs (spec/TRACES.md §5): one HTTP exchange
// per line. Each main-model request carries the exact context; the events
// are what each request adds to the previous one, and each usage event keeps
// the request itself (Usage.Request) for as-recorded replay.

type ctLine struct {
	Request struct {
		Timestamp float64         `json:"timestamp"`
		URL       string          `json:"url"`
		Body      json.RawMessage `json:"body"`
	} `json:"request"`
	Response *struct {
		Timestamp  float64         `json:"timestamp"`
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
		BodyRaw    string          `json:"body_raw"`
	} `json:"response"`
}

// anthRequest is an Anthropic Messages request body.
type anthRequest struct {
	Model     string          `json:"model"`
	System    json.RawMessage `json:"system"`
	Tools     json.RawMessage `json:"tools"`
	Messages  []anthMsg       `json:"messages"`
	MaxTokens int             `json:"max_tokens"`
}

type anthMsg struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// anthResponse is a non-streaming Messages response (or the message of a
// message_start event).
type anthResponse struct {
	ID      string      `json:"id"`
	Type    string      `json:"type"`
	Model   string      `json:"model"`
	Content []anthBlock `json:"content"`
	Usage   *anthUsage  `json:"usage"`
}

type ctExchange struct {
	line   int
	status int
	t      float64
	rt     float64
	req    anthRequest
	resp   *anthResponse // nil when the exchange failed
}

type ctState struct {
	main      string
	conv      *ctConv            // the main agent's conversation
	subs      map[uint64]*ctConv // subagent conversations (Task), by first message
	summaries map[string]bool
	seed      maphash.Seed
}

// ctConv is one conversation of the main model: the main agent's, or a
// subagent's (Claude Code's Task tool runs one with its own messages and a
// smaller tool set).
type ctConv struct {
	prev  map[uint64]int // blocks of the previous request and its response
	prevN int            // blocks of the previous request
	first uint64         // hash of the first message
	tools uint64         // hash of the tool schemas
	respT float64
	side  bool
}

func importClaudeTrace(b *builder, br *bufio.Reader) error {
	ls := newLines(br)
	st := &ctState{main: b.opt.MainModel, seed: maphash.MakeSeed(), summaries: map[string]bool{}, conv: &ctConv{}, subs: map[uint64]*ctConv{}}
	var held []ctExchange // requests seen before the main model is known
	for {
		line, ok := ls.next()
		if !ok {
			break
		}
		var l ctLine
		if err := json.Unmarshal(line, &l); err != nil {
			if err := b.warn(ls.line, "claude-trace: %v", err); err != nil {
				return err
			}
			continue
		}
		if len(l.Request.Body) == 0 || l.Request.Body[0] != '{' {
			if err := b.warn(ls.line, "claude-trace: request.body: want a Messages API request object"); err != nil {
				return err
			}
			continue
		}
		x := ctExchange{line: ls.line, t: l.Request.Timestamp}
		if err := json.Unmarshal(l.Request.Body, &x.req); err != nil {
			if err := b.warn(ls.line, "claude-trace: request.body: %v", err); err != nil {
				return err
			}
			continue
		}
		if !strings.Contains(l.Request.URL, "/v1/messages") || strings.Contains(l.Request.URL, "count_tokens") || x.req.Model == "" {
			b.side++ // not a Messages call (token counting, telemetry)
			continue
		}
		if l.Response != nil {
			x.rt, x.status = l.Response.Timestamp, l.Response.StatusCode
			resp, err := ctParseResponse(l.Response.StatusCode, l.Response.Body, l.Response.BodyRaw)
			if err != nil && l.Response.StatusCode != 0 && l.Response.StatusCode != 200 {
				err = nil // a refusal, not a bad line: reported when the request is handled
			}
			if err != nil {
				if err := b.warn(ls.line, "claude-trace: response: %v", err); err != nil {
					return err
				}
			}
			x.resp = resp
		}
		if st.main == "" && len(x.req.Tools) > 2 {
			st.main = x.req.Model
		}
		if st.main == "" {
			held = append(held, x)
			continue
		}
		for i := range held {
			if err := ctHandle(b, st, &held[i]); err != nil {
				return err
			}
		}
		held = nil
		if err := ctHandle(b, st, &x); err != nil {
			return err
		}
	}
	if err := ls.err(b.name); err != nil {
		return err
	}
	if st.main == "" && len(held) > 0 {
		st.main = held[0].req.Model // no request carried tools: the first model is the agent's
	}
	for i := range held {
		if err := ctHandle(b, st, &held[i]); err != nil {
			return err
		}
	}
	return nil
}

func ctHandle(b *builder, st *ctState, x *ctExchange) error {
	b.clock(unixTime(x.t)) // side calls still set the session start
	if x.req.Model != st.main {
		b.side++
		return nil
	}
	if x.resp == nil {
		// A refused or failed call (429, 529, a dropped stream): the agent
		// retries it, so it is no inference of the session.
		b.note(x.line, "claude-trace: main-model request without a successful response (status %d): skipped", x.status)
		return nil
	}
	b.setModel(st.main)
	t := b.clock(unixTime(x.t))
	req, err := b.anthRequest(&x.req)
	if err != nil {
		return b.warn(x.line, "claude-trace: request.body: %v", err)
	}
	// Hash every block of the request; a block the previous request (or its
	// response) already carried is not new. Counting with multiplicity keeps
	// a block that repeats (the same reminder twice) honest.
	type blk struct {
		msg, idx int
		h        uint64
		raw      *anthBlock
	}
	var blocks []blk
	raws := make([][]anthBlock, len(x.req.Messages))
	for i := range x.req.Messages {
		_, bl, _ := anthContent(x.req.Messages[i].Content)
		raws[i] = bl
		for j := range req.Messages[i].Blocks {
			var raw *anthBlock
			if j < len(bl) {
				raw = &bl[j]
			}
			blocks = append(blocks, blk{i, j, blockHash(st.seed, req.Messages[i].Role, &req.Messages[i].Blocks[j], raw), raw})
		}
	}
	var firstH uint64
	for _, bk := range blocks {
		if bk.msg == 0 {
			firstH = firstH*31 + bk.h
		}
	}
	toolsH := maphash.String(st.seed, req.Tools)
	match := func(c *ctConv) (int, []bool) {
		counts := make(map[uint64]int, len(c.prev))
		for k, v := range c.prev {
			counts[k] = v
		}
		n := 0
		seen := make([]bool, len(blocks))
		for i := range blocks {
			if counts[blocks[i].h] > 0 {
				counts[blocks[i].h]--
				seen[i] = true
				n++
			}
		}
		return n, seen
	}
	conv := st.conv
	matched, seen := match(conv)
	summary := ctSummary(&x.req)
	summaryNew := summary != "" && !st.summaries[summary]
	restart := false
	switch {
	case conv.prevN == 0 || firstH == conv.first || 2*matched >= conv.prevN:
		// The same conversation, grown (or re-sent with blocks dropped, as
		// the /compact summarisation request is).
	case summaryNew:
		restart = true // restarted from a summary (/compact, auto-compact)
	case toolsH != conv.tools:
		// Another tool set and another first message: a subagent.
		conv = st.subs[firstH]
		if conv == nil {
			conv = &ctConv{side: true}
			st.subs[firstH] = conv
		}
		_, seen = match(conv)
	default:
		restart = true // the same agent started over without a summary (/clear)
	}
	if conv.side && !b.opt.Sidechains {
		b.side++
		return nil
	}
	if conv.prevN == 0 {
		// The system prompt and tool schemas, as the conversation's first
		// request sent them (texts already redacted); later requests of the
		// conversation carry the same ones.
		for _, bl := range req.System {
			if err := b.out(&trace.Event{Kind: trace.KindSystem, T: t, Text: bl.Text, Sidechain: conv.side}); err != nil {
				return err
			}
		}
		if req.Tools != "" {
			if err := b.out(&trace.Event{Kind: trace.KindSystem, T: t, Text: req.Tools, Sidechain: conv.side}); err != nil {
				return err
			}
		}
	}
	if conv.prevN == 0 || restart {
		conv.first, conv.tools = firstH, toolsH
	}
	if restart {
		// The context is what this request carries.
		trigger := "auto"
		if strings.Contains(blocksTextOf(x.req.Messages), "<command-name>compact</command-name>") {
			trigger = "manual"
		}
		if summary == "" {
			trigger = "restart"
		}
		if err := b.compaction(trace.Compaction{Trigger: trigger, Summary: summary}, t); err != nil {
			return err
		}
		clear(seen)
	}
	if summary != "" {
		st.summaries[summary] = true
	}
	lat := 0.0
	if conv.respT > 0 && x.t > conv.respT {
		lat = x.t - conv.respT
	}
	side := conv.side
	var asst *turn
	flushAsst := func() error {
		if asst == nil {
			return nil
		}
		a := asst
		asst = nil
		// An assistant message the log has no response for (a restarted
		// conversation carries earlier turns): emitted without usage.
		return b.assistant(a)
	}
	for i := range blocks {
		if seen[i] {
			continue
		}
		bk := blocks[i]
		role := x.req.Messages[bk.msg].Role
		text := req.Messages[bk.msg].Blocks[bk.idx].Text
		typ := req.Messages[bk.msg].Blocks[bk.idx].Type
		if role == "assistant" {
			if asst == nil || (i > 0 && blocks[i-1].msg != bk.msg) {
				if err := flushAsst(); err != nil {
					return err
				}
				asst = &turn{T: t, Sidechain: side}
			}
			switch {
			case typ == "tool_use" && bk.raw != nil:
				asst.Calls = append(asst.Calls, trace.ToolCall{ID: bk.raw.ID, RawName: bk.raw.Name, Args: bk.raw.Input})
			case typ == "text":
				if asst.Text != "" {
					asst.Text += "\n"
				}
				asst.Text += text
			}
			continue
		}
		if err := flushAsst(); err != nil {
			return err
		}
		switch typ {
		case "tool_result":
			id := ""
			isErr := false
			if bk.raw != nil {
				id, isErr = bk.raw.ToolUseID, bk.raw.IsError
			}
			if _, err := b.toolResult(id, "", text, isErr, t, lat, side); err != nil {
				return err
			}
		case "text", "image", "document":
			if strings.HasPrefix(text, summaryPrefix) {
				continue // carried by the compaction event
			}
			if side {
				if err := b.out(&trace.Event{Kind: trace.KindUser, T: t, Text: text, Sidechain: true}); err != nil {
					return err
				}
				continue
			}
			if err := b.user(text, t, typ != "text" || isNotice(text)); err != nil {
				return err
			}
		}
	}
	if err := flushAsst(); err != nil {
		return err
	}
	u := x.resp.Usage
	if u == nil {
		u = &anthUsage{}
	}
	usage := u.usage(x.req.Model)
	usage.Request = req
	tn := &turn{T: t, Usage: usage, Sidechain: side}
	next := make(map[uint64]int, len(blocks)+len(x.resp.Content))
	for _, bk := range blocks {
		next[bk.h]++
	}
	for i := range x.resp.Content {
		bl := &x.resp.Content[i]
		tb := b.block(bl)
		next[blockHash(st.seed, "assistant", &tb, bl)]++
		bl.addTo(tn)
	}
	conv.prev, conv.prevN = next, len(blocks)
	conv.respT = x.rt
	return b.assistant(tn)
}

// ctMessage emits one request message as events (Anthropic request/response
// pairs, where every message is new).
func ctMessage(b *builder, m *anthMsg, t, lat float64) error {
	s, blocks, err := anthContent(m.Content)
	if err != nil {
		return err
	}
	if m.Role == "assistant" {
		tn := &turn{T: t, Text: s}
		for i := range blocks {
			blocks[i].addTo(tn)
		}
		return b.assistant(tn)
	}
	if s != "" {
		return b.user(s, t, isNotice(s))
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "tool_result":
			if _, err := b.toolResult(bl.ToolUseID, "", resultText(bl.Content), bl.IsError, t, lat, false); err != nil {
				return err
			}
		case "text":
			if err := b.user(bl.Text, t, isNotice(bl.Text)); err != nil {
				return err
			}
		case "image", "document":
			if err := b.user("[image]", t, true); err != nil {
				return err
			}
		}
	}
	return nil
}

const summaryPrefix = "This session is being continued from a previous conversation"

// ctSummary finds the summary a restarted conversation begins with.
func ctSummary(req *anthRequest) string {
	for _, m := range req.Messages {
		s, blocks, _ := anthContent(m.Content)
		if strings.HasPrefix(s, summaryPrefix) {
			return s
		}
		for _, bl := range blocks {
			if bl.Type == "text" && strings.HasPrefix(bl.Text, summaryPrefix) {
				return bl.Text
			}
		}
	}
	return ""
}

func blocksTextOf(ms []anthMsg) string {
	var sb strings.Builder
	for _, m := range ms {
		s, blocks, _ := anthContent(m.Content)
		sb.WriteString(s)
		sb.WriteString(blocksText(blocks))
	}
	return sb.String()
}

// anthRequest reduces a request body to trace.Request, redacting block texts.
func (b *builder) anthRequest(r *anthRequest) (*trace.Request, error) {
	out := &trace.Request{}
	if len(r.System) > 0 {
		s, blocks, err := anthContent(r.System)
		if err != nil {
			return nil, fmt.Errorf("system: %w", err)
		}
		if s != "" {
			out.System = append(out.System, trace.Block{Type: "text", Text: b.text(s)})
		}
		for i := range blocks {
			out.System = append(out.System, b.block(&blocks[i]))
		}
	}
	if len(r.Tools) > 0 && string(r.Tools) != "null" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, r.Tools); err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
		out.Tools = b.text(buf.String())
	}
	out.Messages = make([]trace.Message, 0, len(r.Messages))
	for i, m := range r.Messages {
		s, blocks, err := anthContent(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		msg := trace.Message{Role: m.Role}
		if s != "" || blocks == nil {
			msg.Blocks = append(msg.Blocks, trace.Block{Type: "text", Text: b.text(s)})
		}
		for j := range blocks {
			msg.Blocks = append(msg.Blocks, b.block(&blocks[j]))
		}
		out.Messages = append(out.Messages, msg)
	}
	return out, nil
}

// block renders one content block as the text it puts into the context.
func (b *builder) block(bl *anthBlock) trace.Block {
	out := trace.Block{Type: bl.Type}
	switch bl.Type {
	case "text":
		out.Text = bl.Text
	case "thinking":
		out.Text = bl.Thinking
	case "redacted_thinking":
		out.Text = ""
	case "tool_use":
		in := bl.Input
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		var buf bytes.Buffer
		if json.Compact(&buf, in) != nil {
			buf.Reset()
			buf.Write(in)
		}
		out.Text = bl.Name + " " + buf.String()
	case "tool_result":
		out.Text = resultText(bl.Content)
	case "image", "document":
		out.Text = "[image]"
	default:
		out.Text = ""
	}
	out.Text = b.text(out.Text)
	if bl.CacheCtl != nil {
		out.Cache = "5m"
		if bl.CacheCtl.TTL == "1h" {
			out.Cache = "1h"
		}
	}
	return out
}

// blockHash identifies a block by role, type, ids and text (cache markers
// move between requests and do not count).
func blockHash(seed maphash.Seed, role string, bl *trace.Block, raw *anthBlock) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(role)
	h.WriteByte(0)
	h.WriteString(bl.Type)
	h.WriteByte(0)
	if raw != nil {
		h.WriteString(raw.ID)
		h.WriteString(raw.ToolUseID)
		h.WriteByte(0)
	}
	h.WriteString(bl.Text)
	return h.Sum64()
}

// ctParseResponse reads a JSON body or rebuilds the message from SSE text.
func ctParseResponse(status int, body json.RawMessage, raw string) (*anthResponse, error) {
	if status != 0 && status != 200 {
		return nil, fmt.Errorf("status %d", status)
	}
	if len(body) > 0 && body[0] == '{' {
		var r anthResponse
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, err
		}
		if r.Type == "error" {
			return nil, fmt.Errorf("error response")
		}
		return &r, nil
	}
	if raw == "" {
		return nil, fmt.Errorf("no body")
	}
	return parseSSE(raw)
}

// parseSSE rebuilds a Messages response from its event stream: usage from
// message_start and message_delta, content from the content_block events.
func parseSSE(raw string) (*anthResponse, error) {
	var r *anthResponse
	inputs := map[int]*strings.Builder{}
	for line := range strings.Lines(raw) {
		line = strings.TrimSpace(line)
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue
		}
		var ev struct {
			Type         string          `json:"type"`
			Index        int             `json:"index"`
			Message      *anthResponse   `json:"message"`
			ContentBlock *anthBlock      `json:"content_block"`
			Delta        json.RawMessage `json:"delta"`
			Usage        *anthUsage      `json:"usage"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil {
			return nil, fmt.Errorf("SSE data: %v", err)
		}
		switch ev.Type {
		case "message_start":
			if ev.Message == nil {
				return nil, fmt.Errorf("SSE message_start without message")
			}
			r = ev.Message
			r.Content = nil
		case "content_block_start":
			if r == nil || ev.ContentBlock == nil {
				continue
			}
			for len(r.Content) <= ev.Index && ev.Index < 1024 {
				r.Content = append(r.Content, anthBlock{})
			}
			if ev.Index < len(r.Content) {
				r.Content[ev.Index] = *ev.ContentBlock
				if ev.ContentBlock.Type == "tool_use" {
					inputs[ev.Index] = &strings.Builder{}
				}
			}
		case "content_block_delta":
			if r == nil || ev.Index >= len(r.Content) || ev.Index < 0 {
				continue
			}
			var d struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Thinking    string `json:"thinking"`
				PartialJSON string `json:"partial_json"`
			}
			if json.Unmarshal(ev.Delta, &d) != nil {
				continue
			}
			bl := &r.Content[ev.Index]
			switch d.Type {
			case "text_delta":
				bl.Text += d.Text
			case "thinking_delta":
				bl.Thinking += d.Thinking
			case "input_json_delta":
				if sb := inputs[ev.Index]; sb != nil {
					sb.WriteString(d.PartialJSON)
				}
			}
		case "message_delta":
			if r != nil && ev.Usage != nil {
				if r.Usage == nil {
					r.Usage = &anthUsage{}
				}
				r.Usage.OutputTokens = ev.Usage.OutputTokens
			}
		case "error":
			return nil, fmt.Errorf("SSE error event")
		}
	}
	if r == nil {
		return nil, fmt.Errorf("SSE without message_start")
	}
	for i, sb := range inputs {
		if sb.Len() > 0 && json.Valid([]byte(sb.String())) {
			r.Content[i].Input = json.RawMessage(sb.String())
		}
	}
	return r, nil
}

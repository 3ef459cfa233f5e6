package importers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// Claude Code session JSONL (spec/TRACES.md §1).

type ccLine struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	UUID             string          `json:"uuid"`
	IsSidechain      bool            `json:"isSidechain"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	Timestamp        string          `json:"timestamp"`
	CompactMetadata  *ccCompact      `json:"compactMetadata"`
	Message          *ccMessage      `json:"message"`
	Content          json.RawMessage `json:"content"`
}

type ccCompact struct {
	Trigger   string `json:"trigger"`
	PreTokens int    `json:"preTokens"`
}

type ccMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *anthUsage      `json:"usage"`
}

// anthUsage is the Anthropic usage object (disjoint fields).
type anthUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

func (u *anthUsage) usage(model string) *trace.Usage {
	return anthropicUsage(model, u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens, u.OutputTokens)
}

// anthBlock is an Anthropic content block.
type anthBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    json.RawMessage `json:"source"`
	CacheCtl  *struct {
		Type string `json:"type"`
		TTL  string `json:"ttl"`
	} `json:"cache_control"`
}

// addTo adds an assistant's block to its turn: text joins the turn's text on
// a new line, a tool_use becomes a call; other blocks (thinking) add nothing.
func (bl *anthBlock) addTo(tn *turn) {
	switch bl.Type {
	case "text":
		if tn.Text != "" {
			tn.Text += "\n"
		}
		tn.Text += bl.Text
	case "tool_use":
		tn.Calls = append(tn.Calls, trace.ToolCall{ID: bl.ID, RawName: bl.Name, Args: bl.Input})
	}
}

// anthContent decodes a content field that is a string or a list of blocks.
func anthContent(raw json.RawMessage) (string, []anthBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		s, err := unquote(raw)
		return s, nil, err
	}
	bl := []anthBlock{}
	err := forElems(raw, func(v []byte) error {
		var b anthBlock
		if err := b.decode(v); err != nil {
			return err
		}
		bl = append(bl, b)
		return nil
	})
	return "", bl, err
}

// blocksText joins the text of text blocks (and tool_result contents) with
// newlines; images count as a placeholder.
func blocksText(bl []anthBlock) string {
	var sb strings.Builder
	for i := range bl {
		var t string
		switch bl[i].Type {
		case "text":
			t = bl[i].Text
		case "image", "document":
			t = "[image]"
		case "tool_result":
			t = resultText(bl[i].Content)
		default:
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(t)
	}
	return sb.String()
}

// resultText flattens a tool_result content (a string or blocks).
func resultText(raw json.RawMessage) string {
	s, bl, err := anthContent(raw)
	if err != nil {
		return string(raw)
	}
	if bl != nil {
		return blocksText(bl)
	}
	return s
}

// ccChain is the open API response of one chain (main or sidechain): lines
// with the same message.id, and the tool results that arrived between them.
type ccChain struct {
	id      string
	turn    turn
	results []ccResult
	callT   map[string]float64
}

type ccResult struct {
	callID string
	text   string
	isErr  bool
	t      float64
}

func (c *ccChain) open() bool { return c.id != "" }

func importClaudeCode(b *builder, br *bufio.Reader) error {
	b.estimateSystem() // the session file has no system prompt or tool schemas
	ls := newLines(br)
	var chains [2]ccChain // 0 main, 1 sidechain
	for i := range chains {
		chains[i].callT = make(map[string]float64)
	}
	flush := func(side int) error {
		c := &chains[side]
		if !c.open() {
			return nil
		}
		if err := b.assistant(&c.turn); err != nil {
			return err
		}
		for _, r := range c.results {
			lat := 0.0
			if ct, ok := c.callT[r.callID]; ok && r.t > ct {
				lat = r.t - ct
			}
			if _, err := b.toolResult(r.callID, "", r.text, r.isErr, r.t, lat, side == 1); err != nil {
				return err
			}
		}
		c.id, c.turn, c.results = "", turn{}, c.results[:0]
		clear(c.callT)
		return nil
	}
	flushAll := func() error {
		if err := flush(0); err != nil {
			return err
		}
		return flush(1)
	}
	var pending *trace.Compaction
	var pendingT float64
	var agentFile, decided bool
	emitCompaction := func() error {
		if pending == nil {
			return nil
		}
		c := *pending
		pending = nil
		return b.compaction(c, pendingT)
	}
	for {
		line, ok := ls.next()
		if !ok {
			break
		}
		// The bulk of a session is progress and file-history lines; skip them
		// before decoding.
		if bytes.HasPrefix(line, []byte(`{"type":"file-history-snapshot"`)) || bytes.HasPrefix(line, []byte(`{"type":"queue-operation"`)) {
			continue
		}
		var l ccLine
		if err := l.decode(line); err != nil {
			if err := b.warn(ls.line, "claude-code: %v", err); err != nil {
				return err
			}
			continue
		}
		switch l.Type {
		case "user", "assistant", "system":
		case "":
			if err := b.warn(ls.line, "claude-code: a line without \"type\""); err != nil {
				return err
			}
			continue
		default:
			continue
		}
		if !decided && (l.Type == "user" || l.Type == "assistant") {
			// A file whose conversation starts on a sidechain is a subagent's
			// own transcript (agent-*.jsonl): its sidechain is its main chain.
			agentFile, decided = l.IsSidechain, true
		}
		sidechain := l.IsSidechain && !agentFile
		if sidechain && !b.opt.Sidechains {
			continue
		}
		side := 0
		if sidechain {
			side = 1
		}
		t := b.clock(parseTime(l.Timestamp))
		switch l.Type {
		case "system":
			if l.Subtype != "compact_boundary" {
				continue
			}
			if err := flushAll(); err != nil {
				return err
			}
			if err := emitCompaction(); err != nil {
				return err
			}
			pending = &trace.Compaction{Trigger: "auto"}
			if m := l.CompactMetadata; m != nil {
				if m.Trigger != "" {
					pending.Trigger = m.Trigger
				}
				pending.PreTokens = m.PreTokens
			}
			pendingT = t
		case "assistant":
			if l.Message == nil {
				if err := b.warn(ls.line, "claude-code: assistant line without \"message\""); err != nil {
					return err
				}
				continue
			}
			if side == 0 {
				if err := emitCompaction(); err != nil {
					return err
				}
			}
			m := l.Message
			c := &chains[side]
			if c.open() && c.id != m.ID {
				if err := flush(side); err != nil {
					return err
				}
			}
			_, blocks, err := anthContent(m.Content)
			if err != nil {
				if err := b.warn(ls.line, "claude-code: message.content: %v", err); err != nil {
					return err
				}
				continue
			}
			if !c.open() {
				c.id = m.ID
				if c.id == "" {
					c.id = "line" // a line without message.id is a response of its own
				}
				c.turn = turn{T: t, Sidechain: side == 1}
			}
			if m.Usage != nil && m.Model != "<synthetic>" {
				c.turn.Usage = m.Usage.usage(m.Model) // the last line carries the final output count
			}
			if side == 0 {
				b.setModel(m.Model)
			}
			for i := range blocks {
				bl := &blocks[i]
				bl.addTo(&c.turn)
				if bl.Type == "tool_use" {
					c.callT[bl.ID] = t
				}
			}
			if m.ID == "" {
				if err := flush(side); err != nil {
					return err
				}
			}
		case "user":
			if l.Message == nil {
				if err := b.warn(ls.line, "claude-code: user line without \"message\""); err != nil {
					return err
				}
				continue
			}
			s, blocks, err := anthContent(l.Message.Content)
			if err != nil {
				if err := b.warn(ls.line, "claude-code: message.content: %v", err); err != nil {
					return err
				}
				continue
			}
			if l.IsCompactSummary && side == 0 {
				if pending == nil {
					pending = &trace.Compaction{Trigger: "auto"}
					pendingT = t
				}
				pending.Summary = s
				if blocks != nil {
					pending.Summary = blocksText(blocks)
				}
				if err := flushAll(); err != nil {
					return err
				}
				if err := emitCompaction(); err != nil {
					return err
				}
				continue
			}
			var results []ccResult
			var rest []anthBlock
			for i := range blocks {
				if blocks[i].Type == "tool_result" {
					results = append(results, ccResult{callID: blocks[i].ToolUseID, text: resultText(blocks[i].Content), isErr: blocks[i].IsError, t: t})
				} else {
					rest = append(rest, blocks[i])
				}
			}
			c := &chains[side]
			if len(results) > 0 && c.open() {
				c.results = append(c.results, results...)
				results = nil
			}
			if len(results) > 0 || s != "" || len(rest) > 0 {
				if err := flush(side); err != nil {
					return err
				}
				if side == 0 {
					if err := emitCompaction(); err != nil {
						return err
					}
				}
			}
			for _, r := range results {
				if _, err := b.toolResult(r.callID, "", r.text, r.isErr, r.t, 0, side == 1); err != nil {
					return err
				}
			}
			text := s
			if len(rest) > 0 {
				text = blocksText(rest)
			}
			if text == "" {
				continue
			}
			if side == 1 {
				if err := b.out(&trace.Event{Kind: trace.KindUser, T: t, Text: b.text(text), Sidechain: true}); err != nil {
					return err
				}
				continue
			}
			if err := b.user(text, t, l.IsMeta || isNotice(text)); err != nil {
				return err
			}
		}
	}
	if err := ls.err(b.name); err != nil {
		return err
	}
	if err := flushAll(); err != nil {
		return err
	}
	return emitCompaction()
}

// isNotice reports text that Claude Code injects rather than the user typing
// it (slash-command wrappers, reminders, caveats).
func isNotice(s string) bool {
	s = strings.TrimSpace(s)
	for _, p := range []string{"<command-name>", "<command-message>", "<local-command-", "<system-reminder>", "Caveat:", "<user-prompt-submit-hook>"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// decode fills the fields the importer uses, skipping the rest (progress
// data, toolUseResult copies of tool output) without decoding it.
func (l *ccLine) decode(line []byte) error {
	return decodeFields(line, func(k, v []byte) (err error) {
		switch string(k) {
		case "type":
			l.Type, err = rawString(v)
		case "subtype":
			l.Subtype, err = rawString(v)
		case "uuid":
			l.UUID, err = rawString(v)
		case "timestamp":
			l.Timestamp, err = rawString(v)
		case "isSidechain":
			l.IsSidechain, err = rawBool(v)
		case "isMeta":
			l.IsMeta, err = rawBool(v)
		case "isCompactSummary":
			l.IsCompactSummary, err = rawBool(v)
		case "compactMetadata":
			if string(v) != "null" {
				l.CompactMetadata = &ccCompact{}
				err = json.Unmarshal(v, l.CompactMetadata)
			}
		case "message":
			if string(v) != "null" {
				l.Message = &ccMessage{}
				err = l.Message.decode(v)
			}
		case "content":
			l.Content = v
		}
		return err
	})
}

func (m *ccMessage) decode(v []byte) error {
	return decodeFields(v, func(k, v []byte) (err error) {
		switch string(k) {
		case "id":
			m.ID, err = rawString(v)
		case "role":
			m.Role, err = rawString(v)
		case "model":
			m.Model, err = rawString(v)
		case "content":
			m.Content = v
		case "usage":
			if string(v) != "null" {
				m.Usage = &anthUsage{}
				err = json.Unmarshal(v, m.Usage)
			}
		}
		return err
	})
}

// decode reads one content block, skipping what the importers do not use.
func (bl *anthBlock) decode(v []byte) error {
	return decodeFields(v, func(k, v []byte) (err error) {
		switch string(k) {
		case "type":
			bl.Type, err = rawString(v)
		case "text":
			bl.Text, err = unquote(v)
		case "thinking":
			bl.Thinking, err = unquote(v)
		case "id":
			bl.ID, err = rawString(v)
		case "name":
			bl.Name, err = rawString(v)
		case "input":
			if !json.Valid(v) {
				err = fmt.Errorf("invalid JSON")
			}
			bl.Input = bytes.Clone(v) // the line buffer is reused
		case "tool_use_id":
			bl.ToolUseID, err = rawString(v)
		case "content":
			bl.Content = v
		case "is_error":
			bl.IsError, err = rawBool(v)
		case "cache_control":
			if string(v) != "null" {
				bl.CacheCtl = &struct {
					Type string `json:"type"`
					TTL  string `json:"ttl"`
				}{}
				err = json.Unmarshal(v, bl.CacheCtl)
			}
		}
		return err
	})
}

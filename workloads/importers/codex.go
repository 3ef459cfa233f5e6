package importers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// Codex CLI rollouts (spec/TRACES.md §2), current and legacy. Only
// response_items enter the context; event_msg lines duplicate them for the UI,
// except token_count, which is the per-request usage.

type cxLine struct {
	Timestamp  string          `json:"timestamp"`
	Type       string          `json:"type"`
	Payload    json.RawMessage `json:"payload"`
	RecordType string          `json:"record_type"`
	// legacy first line
	ID           string `json:"id"`
	Instructions string `json:"instructions"`
}

type cxItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   []cxContent     `json:"content"`
	Summary   json.RawMessage `json:"summary"` // reasoning: [{type,text}]; turn_context: "auto"
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     string          `json:"input"`
	Action    json.RawMessage `json:"action"` // local_shell_call: {"type":"exec","command":[…]}
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	// session_meta / turn_context / compacted / event_msg fields
	Instructions string       `json:"instructions"`
	Model        string       `json:"model"`
	Message      string       `json:"message"`
	Info         *cxTokenInfo `json:"info"`
}

type cxContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type cxTokenInfo struct {
	Total  *cxTokens `json:"total_token_usage"`
	Last   *cxTokens `json:"last_token_usage"`
	Window int       `json:"model_context_window"`
}

type cxTokens struct {
	Input     int `json:"input_tokens"`
	Cached    int `json:"cached_input_tokens"`
	Output    int `json:"output_tokens"`
	Reasoning int `json:"reasoning_output_tokens"`
	Total     int `json:"total_tokens"`
}

type cxResult struct {
	callID, text string
	isErr        bool
	t, latency   float64
}

func importCodex(b *builder, br *bufio.Reader) error {
	ls := newLines(br)
	var (
		tn      *turn
		results []cxResult
		model   string
		lastTot = -1
		callT   = map[string]float64{}
	)
	flush := func() error {
		if tn != nil {
			if err := b.assistant(tn); err != nil {
				return err
			}
			tn = nil
		}
		for _, r := range results {
			if _, err := b.toolResult(r.callID, "", r.text, r.isErr, r.t, r.latency, false); err != nil {
				return err
			}
		}
		results = results[:0]
		return nil
	}
	// open returns the response that an assistant-side item belongs to: a new
	// one once tool outputs have followed the previous.
	open := func(t float64) (*turn, error) {
		if tn != nil && len(results) > 0 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if tn == nil {
			tn = &turn{T: t}
		}
		return tn, nil
	}
	for {
		line, ok := ls.next()
		if !ok {
			break
		}
		var l cxLine
		if err := json.Unmarshal(line, &l); err != nil {
			if err := b.warn(ls.line, "codex: %v", err); err != nil {
				return err
			}
			continue
		}
		t := b.clock(parseTime(l.Timestamp))
		var it cxItem
		payload := l.Payload
		switch {
		case l.RecordType != "":
			continue // legacy state separator
		case l.Type == "" && l.Instructions != "" || l.Type == "" && l.ID != "" && len(l.Payload) == 0:
			if l.Instructions != "" { // legacy first line
				if err := b.system(l.Instructions, t); err != nil {
					return err
				}
			}
			continue
		case l.Type == "session_meta", l.Type == "turn_context", l.Type == "event_msg", l.Type == "response_item", l.Type == "compacted":
		default:
			payload = line // legacy: a bare Responses item
			l.Type = "response_item"
		}
		if len(payload) == 0 || payload[0] != '{' {
			if err := b.warn(ls.line, "codex: %s line without a payload object", l.Type); err != nil {
				return err
			}
			continue
		}
		if err := json.Unmarshal(payload, &it); err != nil {
			if err := b.warn(ls.line, "codex: payload: %v", err); err != nil {
				return err
			}
			continue
		}
		switch l.Type {
		case "session_meta":
			if it.Instructions != "" {
				if err := b.system(it.Instructions, t); err != nil {
					return err
				}
			}
		case "turn_context":
			if it.Model != "" {
				model = it.Model
				b.setModel(model)
			}
		case "compacted":
			if err := flush(); err != nil {
				return err
			}
			if err := b.compaction(trace.Compaction{Trigger: "auto", Summary: it.Message}, t); err != nil {
				return err
			}
		case "event_msg":
			if it.Type != "token_count" || it.Info == nil || it.Info.Last == nil {
				continue
			}
			if it.Info.Window > 0 && b.hdr.Window == 0 {
				b.hdr.Window = it.Info.Window
			}
			if it.Info.Total != nil {
				if it.Info.Total.Total == lastTot {
					continue // the CLI repeats token_count lines
				}
				lastTot = it.Info.Total.Total
			}
			if tn == nil || tn.Usage != nil {
				if err := b.warn(ls.line, "codex: token_count without a response to attach it to: skipped"); err != nil {
					return err
				}
				continue
			}
			u := it.Info.Last
			tn.Usage = openAIUsage(model, u.Input, u.Cached, 0, u.Output)
			if err := flush(); err != nil {
				return err
			}
		case "response_item":
			switch it.Type {
			case "message":
				text := joinCx(it.Content)
				switch it.Role {
				case "assistant":
					r, err := open(t)
					if err != nil {
						return err
					}
					if r.Text != "" {
						r.Text += "\n"
					}
					r.Text += text
				case "developer", "system":
					if err := flush(); err != nil {
						return err
					}
					if err := b.system(text, t); err != nil {
						return err
					}
				default:
					if err := flush(); err != nil {
						return err
					}
					if err := b.user(text, t, isCodexNotice(text)); err != nil {
						return err
					}
				}
			case "reasoning":
				if _, err := open(t); err != nil {
					return err
				}
			case "function_call", "custom_tool_call", "local_shell_call":
				r, err := open(t)
				if err != nil {
					return err
				}
				args := cxArgs(it.Arguments, it.Input)
				name := it.Name
				if it.Type == "local_shell_call" {
					name = "local_shell"
					if len(it.Action) > 0 && json.Valid(it.Action) {
						args = it.Action
					}
				}
				r.Calls = append(r.Calls, trace.ToolCall{ID: it.CallID, RawName: name, Args: args})
				callT[it.CallID] = t
			case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
				text, isErr, lat := cxOutput(it.Output)
				if lat == 0 {
					if ct, ok := callT[it.CallID]; ok && t > ct {
						lat = t - ct
					}
				}
				r := cxResult{callID: it.CallID, text: text, isErr: isErr, t: t, latency: lat}
				if tn != nil {
					results = append(results, r)
					continue
				}
				if _, err := b.toolResult(r.callID, "", r.text, r.isErr, r.t, r.latency, false); err != nil {
					return err
				}
			}
		}
	}
	if err := ls.err(b.name); err != nil {
		return err
	}
	return flush()
}

func joinCx(cs []cxContent) string {
	var sb strings.Builder
	for _, c := range cs {
		if c.Text == "" {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(c.Text)
	}
	return sb.String()
}

// isCodexNotice reports user-role items that the CLI injects (AGENTS.md,
// environment context) rather than the user typing them.
func isCodexNotice(s string) bool {
	s = strings.TrimSpace(s)
	for _, p := range []string{"# AGENTS.md instructions", "<environment_context>", "<user_instructions>", "<INSTRUCTIONS>", "<turn_aborted>"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// cxArgs returns call arguments as JSON: function_call.arguments is JSON text
// inside a JSON string; a custom tool's input is plain text.
func cxArgs(arguments json.RawMessage, input string) json.RawMessage {
	if len(arguments) > 0 {
		var s string
		if arguments[0] == '"' && json.Unmarshal(arguments, &s) == nil {
			if json.Valid([]byte(s)) {
				return json.RawMessage(s)
			}
			raw, _ := json.Marshal(map[string]string{"arguments": s})
			return raw
		}
		if json.Valid(arguments) {
			return arguments
		}
	}
	if input != "" {
		raw, _ := json.Marshal(map[string]string{"input": input})
		return raw
	}
	return nil
}

// cxOutput reads a tool output: plain text, or (legacy and older CLIs) a
// JSON string {"output":…, "metadata":{"exit_code","duration_seconds"}}.
func cxOutput(raw json.RawMessage) (text string, isErr bool, latency float64) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false, 0
	}
	var s string
	switch raw[0] {
	case '"':
		if json.Unmarshal(raw, &s) != nil {
			return string(raw), false, 0
		}
	case '{':
		// Newer CLIs: {"content": "...", "success": bool}.
		var o struct {
			Content *string `json:"content"`
			Success *bool   `json:"success"`
		}
		if json.Unmarshal(raw, &o) == nil && o.Content != nil {
			return *o.Content, o.Success != nil && !*o.Success, 0
		}
		s = string(raw)
	default:
		s = string(raw)
	}
	if strings.HasPrefix(s, `{"output"`) {
		var o struct {
			Output   string `json:"output"`
			Metadata struct {
				ExitCode        int     `json:"exit_code"`
				DurationSeconds float64 `json:"duration_seconds"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(s), &o) == nil {
			return o.Output, o.Metadata.ExitCode != 0, max(o.Metadata.DurationSeconds, 0)
		}
	}
	if strings.HasPrefix(s, "Exit code: ") && !strings.HasPrefix(s, "Exit code: 0\n") {
		isErr = true
	}
	if strings.Contains(s, "Process exited with code ") && !strings.Contains(s, "Process exited with code 0\n") {
		isErr = true
	}
	return s, isErr, 0
}

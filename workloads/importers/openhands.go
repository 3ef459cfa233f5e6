package importers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// OpenHands V1 conversations (spec/TRACES.md §3): events.json, an array in
// order, with usage per LLM response in state.json (Options.State).

type ohEvent struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Source    string `json:"source"`
	Kind      string `json:"kind"`
	// SystemPromptEvent
	SystemPrompt *struct {
		Text string `json:"text"`
	} `json:"system_prompt"`
	Tools json.RawMessage `json:"tools"`
	// MessageEvent
	LLMMessage *struct {
		Role    string      `json:"role"`
		Content []cxContent `json:"content"`
	} `json:"llm_message"`
	// ActionEvent
	ToolName string `json:"tool_name"`
	ToolCall *struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool_call"`
	Thought       []cxContent `json:"thought"`
	LLMResponseID string      `json:"llm_response_id"`
	// ObservationEvent
	ToolCallID  string `json:"tool_call_id"`
	Observation *struct {
		Content  json.RawMessage `json:"content"`
		IsError  bool            `json:"is_error"`
		ExitCode *int            `json:"exit_code"`
	} `json:"observation"`
	// Condensation
	ForgottenEventIDs []string `json:"forgotten_event_ids"`
	Summary           *string  `json:"summary"`
}

type ohState struct {
	BaseState *struct {
		Stats struct {
			UsageToMetrics map[string]struct {
				TokenUsages []struct {
					Model            string `json:"model"`
					PromptTokens     int    `json:"prompt_tokens"`
					CompletionTokens int    `json:"completion_tokens"`
					CacheReadTokens  int    `json:"cache_read_tokens"`
					CacheWriteTokens int    `json:"cache_write_tokens"`
					ContextWindow    int    `json:"context_window"`
					ResponseID       string `json:"response_id"`
				} `json:"token_usages"`
				Model string `json:"model_name"`
			} `json:"usage_to_metrics"`
		} `json:"stats"`
	} `json:"baseState"`
}

// ohUsage indexes state.json usage by response id (the agent's LLM only;
// condenser calls are side calls).
func ohUsage(state []byte) (map[string]*trace.Usage, int, error) {
	if len(state) == 0 {
		return nil, 0, nil
	}
	var st ohState
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, 0, fmt.Errorf("state.json: %w", err)
	}
	out := map[string]*trace.Usage{}
	window := 0
	if st.BaseState == nil {
		return out, 0, nil
	}
	for key, m := range st.BaseState.Stats.UsageToMetrics {
		if key != "agent" {
			continue
		}
		for _, u := range m.TokenUsages {
			// LiteLLM's prompt_tokens includes cache reads and writes.
			out[u.ResponseID] = openAIUsage(u.Model, u.PromptTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CompletionTokens)
			window = max(window, u.ContextWindow)
		}
	}
	return out, window, nil
}

func importOpenHands(b *builder, br *bufio.Reader) error {
	usage, window, err := ohUsage(b.opt.State)
	if err != nil {
		return err
	}
	if window > 0 {
		b.hdr.Window = window
	}
	dec := json.NewDecoder(br)
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('[') {
		return &trace.ParseError{File: b.name, Line: 1, Err: fmt.Errorf("openhands: want a JSON array of events")}
	}
	var (
		tn      *turn
		respID  string
		results []func() error
		idx     int
	)
	flush := func() error {
		if tn != nil {
			if u := usage[respID]; u != nil {
				tn.Usage = u
				b.setModel(u.Model)
			}
			if err := b.assistant(tn); err != nil {
				return err
			}
			tn, respID = nil, ""
		}
		for _, r := range results {
			if err := r(); err != nil {
				return err
			}
		}
		results = results[:0]
		return nil
	}
	for dec.More() {
		idx++
		var ev ohEvent
		if err := dec.Decode(&ev); err != nil {
			// A syntax error leaves the decoder unusable: stop in both modes.
			return &trace.ParseError{File: b.name, Line: idx, Err: fmt.Errorf("openhands: event %d: %v", idx, err)}
		}
		t := b.clock(parseTime(ev.Timestamp))
		switch ev.Kind {
		case "SystemPromptEvent":
			if err := flush(); err != nil {
				return err
			}
			if ev.SystemPrompt != nil {
				if err := b.system(ev.SystemPrompt.Text, t); err != nil {
					return err
				}
				b.ids[ev.ID] = b.lastID
			}
			if len(ev.Tools) > 2 {
				if err := b.system(string(ev.Tools), t); err != nil {
					return err
				}
			}
		case "MessageEvent":
			if ev.LLMMessage == nil {
				if err := b.warn(idx, "openhands: MessageEvent %s without llm_message", ev.ID); err != nil {
					return err
				}
				continue
			}
			text := joinCx(ev.LLMMessage.Content)
			if ev.LLMMessage.Role == "assistant" || ev.Source == "agent" {
				if err := flush(); err != nil {
					return err
				}
				tn, respID = &turn{T: t, Text: text, SourceIDs: []string{ev.ID}}, ev.LLMResponseID
				if err := flush(); err != nil {
					return err
				}
				continue
			}
			if err := flush(); err != nil {
				return err
			}
			if err := b.user(text, t, false); err != nil {
				return err
			}
			b.ids[ev.ID] = b.lastID
		case "ActionEvent":
			if ev.ToolCall == nil {
				if err := b.warn(idx, "openhands: ActionEvent %s without tool_call", ev.ID); err != nil {
					return err
				}
				continue
			}
			// Parallel calls of one LLM response share its llm_response_id.
			if tn != nil && (respID != ev.LLMResponseID || len(results) > 0) {
				if err := flush(); err != nil {
					return err
				}
			}
			if tn == nil {
				tn, respID = &turn{T: t}, ev.LLMResponseID
			}
			if th := joinCx(ev.Thought); th != "" {
				if tn.Text != "" {
					tn.Text += "\n"
				}
				tn.Text += th
			}
			args := cxArgs(ev.ToolCall.Arguments, "")
			name := ev.ToolCall.Name
			if name == "" {
				name = ev.ToolName
			}
			tn.Calls = append(tn.Calls, trace.ToolCall{ID: ev.ToolCall.ID, RawName: name, Args: args})
			tn.SourceIDs = append(tn.SourceIDs, ev.ID)
		case "ObservationEvent", "UserRejectObservation", "AgentErrorEvent":
			text, isErr := "", ev.Kind != "ObservationEvent"
			if o := ev.Observation; o != nil {
				text = ohContent(o.Content)
				isErr = isErr || o.IsError || o.ExitCode != nil && *o.ExitCode != 0
			}
			callID, raw, srcID := ev.ToolCallID, ev.ToolName, ev.ID
			emit := func() error {
				id, err := b.toolResult(callID, raw, text, isErr, t, 0, false)
				b.ids[srcID] = id
				return err
			}
			if tn != nil {
				results = append(results, emit)
				continue
			}
			if err := emit(); err != nil {
				return err
			}
		case "Condensation":
			if err := flush(); err != nil {
				return err
			}
			c := trace.Compaction{Trigger: "condenser"}
			if ev.Summary != nil {
				c.Summary = *ev.Summary
			}
			for _, id := range ev.ForgottenEventIDs {
				if e := b.ids[id]; e != "" {
					c.Forgot = append(c.Forgot, e)
				}
			}
			if err := b.compaction(c, t); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return &trace.ParseError{File: b.name, Line: idx + 1, Err: fmt.Errorf("openhands: after event %d: %v", idx, err)}
	}
	return flush()
}

// ohContent flattens an observation content: text blocks, or a string.
func ohContent(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	var cs []cxContent
	if json.Unmarshal(raw, &cs) == nil {
		return joinCx(cs)
	}
	return strings.TrimSpace(string(raw))
}

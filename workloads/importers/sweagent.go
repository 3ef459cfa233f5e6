package importers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// SWE-agent trajectories (spec/TRACES.md §4): 0.x (history + trajectory),
// 1.0 (trajectory[].messages) and 1.1 (trajectory[].query). The conversation
// comes from history; trajectory gives each step's execution time.

type sweTraj struct {
	History    []sweMsg  `json:"history"`
	Trajectory []sweStep `json:"trajectory"`
	Info       struct {
		ModelStats *struct {
			TokensSent     int `json:"tokens_sent"`
			TokensReceived int `json:"tokens_received"`
			APICalls       int `json:"api_calls"`
		} `json:"model_stats"`
		Version    string `json:"swe_agent_version"`
		ExitStatus string `json:"exit_status"`
	} `json:"info"`
	ReplayConfig json.RawMessage `json:"replay_config"`
}

type sweMsg struct {
	Role        string          `json:"role"`
	Content     json.RawMessage `json:"content"`
	Thought     string          `json:"thought"`
	Action      string          `json:"action"`
	IsDemo      bool            `json:"is_demo"`
	MsgType     string          `json:"message_type"`
	ToolCalls   []oaToolCall    `json:"tool_calls"`
	ToolCallIDs []string        `json:"tool_call_ids"`
}

type sweStep struct {
	Response      string          `json:"response"`
	Thought       string          `json:"thought"`
	Action        string          `json:"action"`
	Observation   string          `json:"observation"`
	ExecutionTime float64         `json:"execution_time"`
	Query         json.RawMessage `json:"query"`
	Messages      json.RawMessage `json:"messages"`
}

func importSWEAgent(b *builder, br *bufio.Reader) error {
	data, err := readDoc(b, br)
	if err != nil {
		return err
	}
	var tr sweTraj
	if err := json.Unmarshal(data, &tr); err != nil {
		return &trace.ParseError{File: b.name, Line: lineOf(data, err), Err: fmt.Errorf("swe-agent: %v", err)}
	}
	if tr.History == nil {
		// Some 1.x files keep only the trajectory: the last step's query (or
		// messages) is the whole conversation up to that step.
		if tr.History, err = sweFromSteps(tr.Trajectory); err != nil {
			return &trace.ParseError{File: b.name, Line: 1, Err: fmt.Errorf("swe-agent: %v", err)}
		}
	}
	version := "0.x"
	for _, s := range tr.Trajectory {
		if len(s.Query) > 0 && string(s.Query) != "null" {
			version = "1.1"
			break
		}
		if len(s.Messages) > 0 && string(s.Messages) != "null" {
			version = "1.0"
		}
	}
	b.hdr.Meta["swe_agent_format"] = version
	if tr.Info.Version != "" {
		b.hdr.Meta["swe_agent_version"] = tr.Info.Version
	}
	if ms := tr.Info.ModelStats; ms != nil {
		b.hdr.Meta["tokens_sent"] = strconv.Itoa(ms.TokensSent)
		b.hdr.Meta["tokens_received"] = strconv.Itoa(ms.TokensReceived)
		b.hdr.Meta["api_calls"] = strconv.Itoa(ms.APICalls)
	}
	b.setModel(sweModel(tr.ReplayConfig))

	var (
		t       float64
		step    int
		pending []string // call ids waiting for an observation
		nCalls  int
	)
	for i, m := range tr.History {
		text := ohContent(m.Content)
		switch m.Role {
		case "system":
			if err := b.system(text, t); err != nil {
				return err
			}
		case "assistant":
			tn := &turn{T: t, Text: text}
			if tn.Text == "" {
				tn.Text = m.Thought
			}
			pending = pending[:0]
			for i := range m.ToolCalls {
				tn.Calls = append(tn.Calls, m.ToolCalls[i].call())
				pending = append(pending, m.ToolCalls[i].ID)
			}
			if len(m.ToolCalls) == 0 && strings.TrimSpace(m.Action) != "" {
				nCalls++
				id := "swe-call-" + strconv.Itoa(nCalls)
				name, args := sweAction(m.Action)
				tn.Calls = append(tn.Calls, trace.ToolCall{ID: id, RawName: name, Args: args})
				pending = append(pending, id)
			}
			if err := b.assistant(tn); err != nil {
				return err
			}
			if step < len(tr.Trajectory) {
				t += max(tr.Trajectory[step].ExecutionTime, 0)
			}
			step++
		case "tool", "user":
			if m.IsDemo {
				if err := b.user(text, t, true); err != nil {
					return err
				}
				continue
			}
			if len(pending) == 0 {
				if err := b.user(text, t, false); err != nil {
					return err
				}
				continue
			}
			ids := m.ToolCallIDs
			if len(ids) == 0 {
				ids = pending[:1]
			}
			lat := 0.0
			if step-1 >= 0 && step-1 < len(tr.Trajectory) {
				lat = max(tr.Trajectory[step-1].ExecutionTime, 0)
			}
			for _, id := range ids {
				if _, err := b.toolResult(id, "", text, false, t, lat, false); err != nil {
					return err
				}
				pending = removeString(pending, id)
			}
		default:
			if err := b.warn(i+1, "swe-agent: history[%d]: unknown role %q", i, m.Role); err != nil {
				return err
			}
		}
	}
	return nil
}

// sweFromSteps rebuilds the conversation from the last step that carries
// its message list, adding that step's own action and observation.
func sweFromSteps(steps []sweStep) ([]sweMsg, error) {
	for i := len(steps) - 1; i >= 0; i-- {
		list := steps[i].Query
		if len(list) == 0 || string(list) == "null" {
			list = steps[i].Messages
		}
		if len(list) == 0 || string(list) == "null" {
			continue
		}
		var msgs []sweMsg
		if err := json.Unmarshal(list, &msgs); err != nil {
			return nil, fmt.Errorf("trajectory[%d]: %v", i, err)
		}
		last := &steps[i]
		content, _ := json.Marshal(last.Response)
		msgs = append(msgs, sweMsg{Role: "assistant", Content: content, Thought: last.Thought, Action: last.Action})
		if last.Observation != "" {
			obs, _ := json.Marshal(last.Observation)
			msgs = append(msgs, sweMsg{Role: "user", Content: obs})
		}
		return msgs, nil
	}
	return nil, fmt.Errorf("no \"history\" array and no trajectory step with \"query\" or \"messages\"")
}

// sweCommands are SWE-agent's own tools; any other first word is a shell
// command, which SWE-agent runs through its bash tool.
var sweCommands = map[string]bool{
	"open": true, "goto": true, "scroll_down": true, "scroll_up": true, "create": true, "edit": true,
	"search_dir": true, "search_file": true, "find_file": true, "submit": true,
	"str_replace_editor": true, "file_editor": true, "bash": true,
}

// sweAction names a text action by its first word; str_replace_editor keeps
// its sub-command so that view and create map to read_file and write_file.
func sweAction(action string) (string, json.RawMessage) {
	f := strings.Fields(action)
	name := f[0]
	if !sweCommands[name] {
		name = "bash"
	}
	m := map[string]string{"action": strings.TrimSpace(action)}
	if (name == "str_replace_editor" || name == "file_editor") && len(f) > 1 {
		m["command"] = f[1]
	}
	raw, _ := json.Marshal(m)
	return name, raw
}

func sweModel(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		raw = json.RawMessage(s)
	}
	var rc struct {
		Agent struct {
			Model struct {
				Name string `json:"name"`
			} `json:"model"`
		} `json:"agent"`
	}
	if json.Unmarshal(raw, &rc) != nil {
		return ""
	}
	return rc.Agent.Model.Name
}

func removeString(s []string, x string) []string {
	for i, v := range s {
		if v == x {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

// lineOf gives the 1-based line of a JSON syntax or type error in data.
func lineOf(data []byte, err error) int {
	var off int64
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
	default:
		return 1
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return 1 + strings.Count(string(data[:off]), "\n")
}

package importers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// An OpenAI Chat Completions message list, bare or as {"model","messages",
// "usage"}; and an Anthropic Messages request/response pair.

type oaMsg struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []oaToolCall    `json:"tool_calls"`
	Usage      *oaUsage        `json:"usage"`
}

// oaToolCall is one entry of an OpenAI chat message's tool_calls.
type oaToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // JSON text in a JSON string
	} `json:"function"`
}

func (tc *oaToolCall) call() trace.ToolCall {
	return trace.ToolCall{ID: tc.ID, RawName: tc.Function.Name, Args: cxArgs(tc.Function.Arguments, "")}
}

type oaUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *oaUsage) usage(model string) *trace.Usage {
	cached := 0
	if u.PromptTokensDetails != nil {
		cached = u.PromptTokensDetails.CachedTokens
	}
	return openAIUsage(model, u.PromptTokens, cached, 0, u.CompletionTokens)
}

func readDoc(b *builder, br *bufio.Reader) ([]byte, error) {
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.name, err)
	}
	return data, nil
}

func importOpenAIChat(b *builder, br *bufio.Reader) error {
	data, err := readDoc(b, br)
	if err != nil {
		return err
	}
	var doc struct {
		Model    string   `json:"model"`
		Messages []oaMsg  `json:"messages"`
		Usage    *oaUsage `json:"usage"`
	}
	trimmed := trimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		err = json.Unmarshal(data, &doc.Messages)
	} else {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil {
		return &trace.ParseError{File: b.name, Line: lineOf(data, err), Err: fmt.Errorf("openai-chat: %v", err)}
	}
	b.setModel(doc.Model)
	lastAsst := -1
	for i, m := range doc.Messages {
		if m.Role == "assistant" {
			lastAsst = i
		}
	}
	if doc.Usage != nil && lastAsst >= 0 && doc.Messages[lastAsst].Usage == nil {
		doc.Messages[lastAsst].Usage = doc.Usage
	}
	for i, m := range doc.Messages {
		text := ohContent(m.Content)
		if text == "null" {
			text = ""
		}
		switch m.Role {
		case "system", "developer":
			if err := b.system(text, 0); err != nil {
				return err
			}
		case "user":
			if err := b.user(text, 0, false); err != nil {
				return err
			}
		case "assistant":
			tn := &turn{Text: text}
			for i := range m.ToolCalls {
				tn.Calls = append(tn.Calls, m.ToolCalls[i].call())
			}
			if m.Usage != nil {
				tn.Usage = m.Usage.usage(doc.Model)
			}
			if err := b.assistant(tn); err != nil {
				return err
			}
		case "tool", "function":
			if _, err := b.toolResult(m.ToolCallID, m.Name, text, false, 0, 0, false); err != nil {
				return err
			}
		default:
			if err := b.warn(lineOf(data, nil), "openai-chat: messages[%d]: unknown role %q (want system, developer, user, assistant or tool)", i, m.Role); err != nil {
				return err
			}
		}
	}
	return nil
}

func importAnthropicMessages(b *builder, br *bufio.Reader) error {
	data, err := readDoc(b, br)
	if err != nil {
		return err
	}
	var doc struct {
		Request  *anthRequest  `json:"request"`
		Response *anthResponse `json:"response"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return &trace.ParseError{File: b.name, Line: lineOf(data, err), Err: fmt.Errorf("anthropic-messages: %v", err)}
	}
	if doc.Request == nil {
		return &trace.ParseError{File: b.name, Line: 1, Err: fmt.Errorf("anthropic-messages: no \"request\" object")}
	}
	req, err := b.anthRequest(doc.Request)
	if err != nil {
		return &trace.ParseError{File: b.name, Line: 1, Err: fmt.Errorf("anthropic-messages: request: %v", err)}
	}
	b.setModel(doc.Request.Model)
	for _, bl := range req.System {
		if err := b.out(&trace.Event{Kind: trace.KindSystem, Text: bl.Text}); err != nil {
			return err
		}
	}
	if req.Tools != "" {
		if err := b.out(&trace.Event{Kind: trace.KindSystem, Text: req.Tools}); err != nil {
			return err
		}
	}
	for i := range doc.Request.Messages {
		if err := ctMessage(b, &doc.Request.Messages[i], 0, 0); err != nil {
			return &trace.ParseError{File: b.name, Line: 1, Err: fmt.Errorf("anthropic-messages: request.messages[%d]: %v", i, err)}
		}
	}
	if doc.Response == nil {
		return nil
	}
	tn := &turn{}
	if doc.Response.Usage != nil {
		tn.Usage = doc.Response.Usage.usage(doc.Request.Model)
		tn.Usage.Request = req
	}
	for i := range doc.Response.Content {
		doc.Response.Content[i].addTo(tn)
	}
	return b.assistant(tn)
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

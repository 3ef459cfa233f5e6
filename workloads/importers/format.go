package importers

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// Format is a recorded-session format (spec/TRACES.md).
type Format int

// The formats Import reads.
const (
	FormatUnknown           Format = iota
	FormatCanonical                // a ctxsim canonical trace (passed through)
	FormatClaudeCode               // Claude Code session JSONL
	FormatCodex                    // Codex CLI rollout JSONL (session_meta / response_item / event_msg)
	FormatCodexLegacy              // Codex CLI rollout from before session_meta (bare Responses items)
	FormatOpenHands                // OpenHands V1 events.json
	FormatSWEAgent                 // SWE-agent .traj (0.x, 1.0 messages, 1.1 query)
	FormatClaudeTrace              // claude-trace raw Anthropic API log
	FormatAider                    // Aider .aider.chat.history.md
	FormatOpenAIChat               // an OpenAI Chat Completions message list
	FormatAnthropicMessages        // an Anthropic Messages request/response pair
)

var formatNames = [...]string{
	FormatUnknown:           "unknown",
	FormatCanonical:         "canonical",
	FormatClaudeCode:        "claude-code",
	FormatCodex:             "codex",
	FormatCodexLegacy:       "codex-legacy",
	FormatOpenHands:         "openhands",
	FormatSWEAgent:          "swe-agent",
	FormatClaudeTrace:       "claude-trace",
	FormatAider:             "aider",
	FormatOpenAIChat:        "openai-chat",
	FormatAnthropicMessages: "anthropic-messages",
}

func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Formats lists every importable format, in a stable order.
func Formats() []Format {
	out := make([]Format, 0, len(formatNames)-1)
	for f := FormatCanonical; int(f) < len(formatNames); f++ {
		out = append(out, f)
	}
	return out
}

// ParseFormat parses a format name as printed by String ("auto" and "" give
// FormatUnknown, meaning detect).
func ParseFormat(s string) (Format, error) {
	if s == "" || s == "auto" {
		return FormatUnknown, nil
	}
	for f, n := range formatNames {
		if n == s && f != int(FormatUnknown) {
			return Format(f), nil
		}
	}
	names := make([]string, 0, len(formatNames))
	for _, f := range Formats() {
		names = append(names, f.String())
	}
	return FormatUnknown, fmt.Errorf("unknown format %q (want auto, %s)", s, strings.Join(names, ", "))
}

// HeadSize is how many leading bytes Detect wants to see.
const HeadSize = 64 << 10

// Detect tells the format of a file from its name and its first bytes (up to
// HeadSize). It looks for the markers each format's first record carries, so
// a truncated first line is fine.
func Detect(name string, head []byte) (Format, error) {
	h := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	ext := strings.ToLower(filepath.Ext(name))
	base := strings.ToLower(filepath.Base(name))
	switch {
	case len(h) == 0:
		return FormatUnknown, fmt.Errorf("%s: empty file: cannot detect its format", name)
	case bytes.HasPrefix(h, []byte(`{"schema":"ctxsim-trace"`)):
		return FormatCanonical, nil
	case h[0] == '#' || ext == ".md" || bytes.Contains(firstLines(h, 5), []byte("# aider chat started at")):
		if bytes.Contains(h, []byte("# aider chat started at")) {
			return FormatAider, nil
		}
		return FormatUnknown, fmt.Errorf("%s: Markdown without an \"# aider chat started at\" line: not an Aider chat history", name)
	case h[0] == '[':
		return detectArray(name, h)
	case h[0] != '{':
		return FormatUnknown, fmt.Errorf("%s: starts with %q: want JSON, JSON Lines or an Aider Markdown history", name, clip(h, 20))
	}
	line := firstLine(h)
	if len(bytes.TrimSpace(line)) < 2 {
		line = h // pretty-printed JSON: look at the whole head
	}
	has := func(s string) bool { return bytes.Contains(line, []byte(s)) }
	hasAny := func(ss ...string) bool {
		for _, s := range ss {
			if has(s) {
				return true
			}
		}
		return false
	}
	switch {
	case has(`"schema":"ctxsim-trace"`) || has(`"schema": "ctxsim-trace"`):
		return FormatCanonical, nil
	case ext == ".traj" || has(`"trajectory"`) && (has(`"history"`) || has(`"info"`)):
		return FormatSWEAgent, nil
	case hasAny(`"type":"session_meta"`, `"type":"response_item"`, `"type":"event_msg"`, `"type":"turn_context"`) && has(`"payload"`):
		return FormatCodex, nil
	case has(`"record_type"`) || has(`"instructions"`) && has(`"id"`) && !has(`"messages"`) && !has(`"request"`) ||
		hasAny(`{"type":"message","role"`, `{"type":"function_call"`, `{"type":"reasoning"`, `{"type":"function_call_output"`):
		return FormatCodexLegacy, nil
	case has(`"request"`) && has(`"response"`) && hasAny(`"url"`, `"logged_at"`, `"method"`, `"body_raw"`):
		return FormatClaudeTrace, nil
	case has(`"request"`) && has(`"response"`) || has(`"request":`) && ext == ".json":
		return FormatAnthropicMessages, nil
	case hasAny(`"sessionId"`, `"parentUuid"`, `"type":"file-history-snapshot"`, `"type":"summary"`, `"isSidechain"`):
		return FormatClaudeCode, nil
	case has(`"messages"`):
		return FormatOpenAIChat, nil
	}
	if base == "events.json" {
		return FormatOpenHands, nil
	}
	return FormatUnknown, fmt.Errorf("%s: first record %q matches no known format; pass --format (one of %s)", name, clip(line, 80), formatList())
}

func detectArray(name string, h []byte) (Format, error) {
	first := h
	if len(first) > 4096 {
		first = first[:4096]
	}
	has := func(s string) bool { return bytes.Contains(first, []byte(s)) }
	switch {
	case has(`"kind"`) && (has(`"source"`) || has(`"timestamp"`)):
		return FormatOpenHands, nil
	case has(`"role"`):
		return FormatOpenAIChat, nil
	}
	return FormatUnknown, fmt.Errorf("%s: a JSON array whose first element has neither \"kind\" (OpenHands events) nor \"role\" (OpenAI messages)", name)
}

func formatList() string {
	names := make([]string, 0, len(formatNames))
	for _, f := range Formats() {
		names = append(names, f.String())
	}
	return strings.Join(names, ", ")
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

func firstLines(b []byte, n int) []byte {
	end := 0
	for k := 0; k < n && end < len(b); k++ {
		i := bytes.IndexByte(b[end:], '\n')
		if i < 0 {
			return b
		}
		end += i + 1
	}
	return b[:end]
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

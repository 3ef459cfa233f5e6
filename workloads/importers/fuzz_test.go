package importers

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// fuzzImport feeds arbitrary bytes to one importer: it may fail, but never
// panic, and every event it emits must be valid.
func fuzzImport(f *testing.F, format Format, seeds ...string) {
	for _, s := range seeds {
		if data, err := os.ReadFile(filepath.Join("testdata", s)); err == nil {
			if len(data) > 64<<10 {
				data = data[:64<<10]
			}
			f.Add(data)
		} else {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, strict := range []bool{false, true} {
			seen := map[string]bool{}
			last := 0.0
			_, _, _ = Import(bytes.NewReader(data), "fuzz", Options{Format: format, Strict: strict}, func(e *trace.Event) error {
				if err := e.Validate(); err != nil {
					t.Fatalf("invalid event %+v: %v", e, err)
				}
				if seen[e.ID] {
					t.Fatalf("duplicate id %q", e.ID)
				}
				if e.T < last {
					t.Fatalf("time went back: %g after %g", e.T, last)
				}
				seen[e.ID], last = true, e.T
				return nil
			})
		}
	})
}

func FuzzClaudeCode(f *testing.F) {
	fuzzImport(f, FormatClaudeCode, "claude-code.cc-spotter-4d5611e5.lines1-26+754-770.jsonl",
		`{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":5}}`+"\n"+`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":[{"type":"text","text":"s"}]}}`)
}

func FuzzCodex(f *testing.F) {
	fuzzImport(f, FormatCodex, "codex.handmade-from-TRACES.jsonl")
}

func FuzzCodexLegacy(f *testing.F) {
	fuzzImport(f, FormatCodexLegacy, "codex-legacy.handmade-from-TRACES.jsonl")
}

func FuzzOpenHands(f *testing.F) {
	fuzzImport(f, FormatOpenHands, "openhands.handmade-from-TRACES/events.json", `[{"kind":"Condensation","forgotten_event_ids":["x"]}]`)
}

func FuzzSWEAgent(f *testing.F) {
	fuzzImport(f, FormatSWEAgent, "swe-agent-1.0.handmade-from-TRACES.traj", "swe-agent-1.1.handmade-from-TRACES.traj",
		`{"history":[{"role":"assistant","action":" "},{"role":"user","content":"x"}]}`)
}

func FuzzClaudeTrace(f *testing.F) {
	fuzzImport(f, FormatClaudeTrace,
		`{"request":{"timestamp":1,"url":"https://api.anthropic.com/v1/messages","body":{"model":"m","tools":[{"name":"x"}],"messages":[{"role":"user","content":"hi"}]}},"response":{"status_code":200,"body_raw":"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Read\",\"input\":{}}}\n"}}`)
}

func FuzzAider(f *testing.F) {
	fuzzImport(f, FormatAider, "aider.afi-core.lines1-120.md")
}

func FuzzOpenAIChat(f *testing.F) {
	fuzzImport(f, FormatOpenAIChat, "openai-chat.handmade-from-TRACES.json")
}

func FuzzAnthropicMessages(f *testing.F) {
	fuzzImport(f, FormatAnthropicMessages, "anthropic-messages.handmade-from-TRACES.json")
}

func FuzzDetect(f *testing.F) {
	for _, fx := range fixtures {
		data, _ := os.ReadFile(filepath.Join("testdata", fx.file))
		if len(data) > 4096 {
			data = data[:4096]
		}
		f.Add(fx.file, data)
	}
	f.Fuzz(func(t *testing.T, name string, head []byte) {
		if got, err := Detect(name, head); (err == nil) == (got == FormatUnknown) {
			t.Fatalf("Detect = %v, %v: want a format or an error", got, err)
		}
	})
}

func FuzzLoadToolMap(f *testing.F) {
	f.Add("[tools]\nMyReader = \"read_file\"\n\"str_replace_editor:view\" = \"view_file\"\n")
	f.Add("[tool]\nX = \"y\"\n")
	f.Add("[tools]\nX = \"\"\n")
	f.Add("[tools.X]\ny = 1\n")
	f.Add("[tools]\n\"\" = \"x\"\n")
	f.Fuzz(func(t *testing.T, src string) {
		m, err := LoadToolMap(strings.NewReader(src), "fuzz.toml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		if _, err := NewToolMap(m); err != nil {
			t.Fatalf("a loaded map is not a valid tool map: %v", err)
		}
	})
}

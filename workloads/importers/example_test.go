package importers_test

import (
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads/importers"
)

// Import a short OpenAI chat list: the usage event comes before the
// assistant turn it belongs to, in the one convention (prompt = uncached +
// cache read + cache write); the path the user gave and the turn used becomes
// a derived probe; the tool gets its canonical name.
func ExampleImport() {
	chat := `[
	  {"role": "user", "content": "What is in config/app.toml?"},
	  {"role": "assistant", "content": null,
	   "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\": \"config/app.toml\"}"}}],
	   "usage": {"prompt_tokens": 1200, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 1024}}},
	  {"role": "tool", "tool_call_id": "c1", "content": "port = 8081"}
	]`
	h, st, err := importers.Import(strings.NewReader(chat), "chat.json", importers.Options{}, func(e *trace.Event) error {
		switch e.Kind {
		case trace.KindUsage:
			fmt.Printf("%s prompt=%d uncached=%d cache_read=%d\n", e.Kind, e.Usage.Prompt, e.Usage.Uncached, e.Usage.CacheRead)
		case trace.KindProbe:
			fmt.Printf("%s %q (from %s)\n", e.Kind, e.Probe.Text, e.Probe.Source)
		case trace.KindToolResult:
			fmt.Printf("%s tool=%s raw=%s\n", e.Kind, e.Tool, e.RawTool)
		default:
			fmt.Println(e.Kind)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h.Source, st.ToolCalls, "tool call")
	// Output:
	// task
	// probe "config/app.toml" (from e1)
	// usage prompt=1200 uncached=176 cache_read=1024
	// assistant
	// tool_result tool=read_file raw=Read
	// openai-chat 1 tool call
}

func ExampleDetect() {
	f, err := importers.Detect("rollout-2025-12-28.jsonl", []byte(`{"timestamp":"2025-12-28T12:18:30.533Z","type":"session_meta","payload":{"id":"x"}}`))
	fmt.Println(f, err)
	// Output: codex <nil>
}

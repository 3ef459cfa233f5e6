package engine_test

import (
	"encoding/json"
	"fmt"

	"github.com/ctxsim/ctxsim/engine"
)

// A blueprint is parsed, resolved against a window, and driven through a
// live context: a file read lands in its region, the conversation keeps a
// pointer to it, and the assembled request carries every block's region,
// tokens and cache hint.
func Example() {
	bp, err := engine.ParseBlueprint("agent.leviath", []byte(`
[agent]
name = "demo"

[context.regions]
task = { kind = "pinned", budget = "2%", volatility = "stable" }
codebase = { kind = "compacting", budget = "20%", compact_at = "80%" }
conversation = { kind = "sliding_window", budget = "10%", max_items = 20 }

[stages.work.tool_routing]
default_region = "conversation"
[stages.work.tool_routing.overrides]
read_file = "codebase"
`), ".")
	if err != nil {
		fmt.Println(err)
		return
	}
	regions, _ := bp.Regions("", 200_000)
	for _, r := range regions {
		fmt.Printf("%s %s %d threshold=%d\n", r.Name, r.Kind, r.MaxTokens, r.ThresholdTokens)
	}

	c, err := engine.New(bp, engine.Options{Window: 200_000, Task: "Fix the failing test."})
	if err != nil {
		fmt.Println(err)
		return
	}
	c.AddUser("Start with main.go.")
	c.AddAssistant("", []engine.ToolCall{{ID: "t1", Name: "read_file", Args: json.RawMessage(`{"path":"main.go"}`)}})
	routed, _ := c.AddToolResult(engine.ToolResult{CallID: "t1", Tool: "read_file", Content: "package main\n\nfunc main() {}\n"})
	fmt.Println("routed to", routed.Region, routed.Outcome)

	req := c.Assemble()
	for _, b := range req.System {
		fmt.Printf("system %s %v %d tokens\n", b.Region, b.Cache, b.Tokens)
	}
	fmt.Println(len(req.Messages), "messages,", req.Tokens, "tokens")
	// Output:
	// task pinned 4000 threshold=0
	// codebase compacting 40000 threshold=32000
	// conversation sliding_window 20000 threshold=0
	// routed to codebase whole
	// system task always 8 tokens
	// system codebase until_changed 11 tokens
	// 3 messages, 76 tokens
}

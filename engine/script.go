package engine

import "encoding/json"

// ScriptEngine compiles custom-region scripts (engine/rhai implements it).
type ScriptEngine interface {
	Compile(path string, src []byte) (RegionScript, error)
}

// RegionScript is one compiled custom-region script. Hooks receive plain data
// and return plain data; they cannot reach the engine.
type RegionScript interface {
	// HasHook reports whether fn name is defined, and with how many parameters.
	HasHook(name string) (arity int, ok bool)
	// Render returns what the region looks like in the request.
	Render(ctx ScriptContext) (ScriptRender, error)
	// OnWrite sees an incoming entry: a replacement (content replaced, kind
	// kept), accept unchanged (nil, true), or drop (nil, false).
	OnWrite(ctx ScriptContext, entry ScriptEntry) (replacement *ScriptEntry, accept bool, err error)
	// OnOverflow returns indices of ctx.Entries to drop; ctx.NeededTokens says
	// how many tokens must go.
	OnOverflow(ctx ScriptContext) (drop []int, err error)
}

// outputDrainer is optionally implemented by a RegionScript that captures
// what its hooks print (engine/rhai does): the engine drains it after every
// hook call and reports each line as a warning event, so a report can count
// them and nothing reaches a terminal (seed 001).
type outputDrainer interface {
	DrainOutput() []string
}

// SeedEvaluator is optionally implemented by a ScriptEngine to run
// { rhai = "…" } seeds: the script's return value becomes the seed text.
type SeedEvaluator interface {
	EvalSeed(path string, src []byte) (string, error)
}

// ScriptContext is the ctx a hook receives (seed 001).
type ScriptContext struct {
	Region          ScriptRegion
	Entries         []ScriptEntry
	NeededTokens    int // on_overflow only
	StageName       string
	StageIterations int
	Model           string
	Window          ScriptWindow
}

// ScriptRegion describes the region a hook runs for; Budget is the resolved
// token budget, not the percentage.
type ScriptRegion struct {
	Name          string
	Budget        int
	CurrentTokens int
	EntryCount    int
}

// ScriptWindow is the whole window's use.
type ScriptWindow struct {
	TotalTokens int
	MaxTokens   int
}

// ScriptEntry is one entry as a script sees it. Kind is "text",
// "user_message", "assistant_turn" or "tool_result".
type ScriptEntry struct {
	Content    string
	Tokens     int
	Timestamp  int64
	Key        string
	HasKey     bool
	Kind       string
	ToolCalls  []ToolCall // assistant_turn
	ToolCallID string     // tool_result
	ToolName   string
	IsError    bool
}

// ScriptRender is render's answer: system blocks and typed messages.
type ScriptRender struct {
	System   []string
	Messages []ScriptMessage
}

// ScriptMessage is one typed message a render emits.
type ScriptMessage struct {
	Role        string // "user" or "assistant"
	Content     string
	ToolCalls   []ToolCall
	ToolResults []ScriptToolResult
}

// ScriptToolResult is a tool result inside a rendered user message.
type ScriptToolResult struct {
	ToolCallID string
	Content    string
	IsError    bool
}

// ToolCall is one call in an assistant turn.
type ToolCall struct {
	ID   string
	Name string
	Args json.RawMessage
}

// ToolResult is a tool's answer to a call.
type ToolResult struct {
	CallID  string
	Tool    string
	Content string
	IsError bool
}

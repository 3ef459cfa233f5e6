package trace

import "encoding/json"

// Schema and Version identify the canonical trace format in its header line.
// Version changes whenever a field changes meaning; readers refuse newer versions.
const (
	Schema  = "ctxsim-trace"
	Version = 1
)

// Header is the first line of every canonical trace.
type Header struct {
	Schema  string `json:"schema"`  // always Schema
	Version int    `json:"version"` // always Version when written by this package
	// Source names what produced the trace: a generator ("synthetic:coder") or an
	// importer format ("claude-code", "codex", "claude-trace", ...).
	Source string `json:"source"`
	// Workload is a short human name for the trace (generator name or file stem).
	Workload string `json:"workload,omitempty"`
	// Seed is the generator seed; zero for recorded sessions.
	Seed uint64 `json:"seed,omitempty"`
	// Model is the model the recorded agent used, when known.
	Model string `json:"model,omitempty"`
	// Window is the recorded model's context window in tokens, when known.
	Window int `json:"window,omitempty"`
	// Start is the wall-clock start of a recorded session (RFC 3339), when known.
	Start string `json:"start,omitempty"`
	// Meta holds free-form provenance (file name, importer warnings count, ...).
	// encoding/json sorts map keys, so output stays deterministic.
	Meta map[string]string `json:"meta,omitempty"`
}

// Kind is the type of an event.
type Kind string

// The event kinds of DESIGN.md §2.
const (
	KindTask       Kind = "task"        // the task the agent was given (Text)
	KindSystem     Kind = "system"      // a system prompt / tool schema block the agent carries (Text)
	KindUser       Kind = "user"        // a human turn (Text)
	KindAssistant  Kind = "assistant"   // a model reply: Text and ToolCalls; preceded by an inference
	KindToolResult Kind = "tool_result" // the output of one tool call (Tool, CallID, Text, IsError)
	KindContextOp  Kind = "context_op"  // a context tool call (Op)
	KindStage      Kind = "stage"       // a stage transition (Stage)
	KindCompaction Kind = "compaction"  // a compaction the recorded agent did itself (Compaction)
	KindProbe      Kind = "probe"       // a later need for an earlier fact (Probe)
	KindUsage      Kind = "usage"       // provider-reported usage of the request before the next assistant event (Usage)
)

// Event is one line of a canonical trace.
//
// Content is either Text, or (for synthetic bulk) elided to Size bytes; in the
// elided case Facts lists every fact the content holds, so that meters can still
// tell whether a fact is present.
type Event struct {
	Kind Kind   `json:"kind"`
	ID   string `json:"id"` // stable, unique within the trace
	// T is the virtual time of the event in seconds since the start of the trace.
	T float64 `json:"t"`

	Text string `json:"text,omitempty"`
	// Size is the content length in bytes when Text is elided (0 when Text is set).
	Size int `json:"size,omitempty"`
	// Facts are the facts planted in (or extracted from) this content.
	Facts []Fact `json:"facts,omitempty"`

	// Assistant: the tool calls this turn makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Assistant: output tokens when known (recorded usage or generator choice).
	OutputTokens int `json:"output_tokens,omitempty"`

	// Tool result fields.
	Tool    string `json:"tool,omitempty"`     // canonical tool name (read_file, bash, ...)
	RawTool string `json:"raw_tool,omitempty"` // the name the agent used (Read, shell_command, ...)
	CallID  string `json:"call_id,omitempty"`
	IsError bool   `json:"is_error,omitempty"`

	// Latency is the duration that precedes this event in the agent loop, in
	// seconds: tool execution time for a tool_result, think time for a user turn.
	// Zero means "derive from T".
	Latency float64 `json:"latency,omitempty"`

	// Sidechain marks events of a subagent (Claude Code isSidechain); policies skip them.
	Sidechain bool `json:"sidechain,omitempty"`

	Op         *ContextOp  `json:"op,omitempty"`
	Stage      *Stage      `json:"stage,omitempty"`
	Compaction *Compaction `json:"compaction,omitempty"`
	Probe      *Probe      `json:"probe,omitempty"`
	Usage      *Usage      `json:"usage,omitempty"`
}

// Fact is a piece of content a later probe may ask for. Text occurs verbatim in
// the content that carries it.
type Fact struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// ToolCall is one call an assistant turn makes.
type ToolCall struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`               // canonical name
	RawName string          `json:"raw_name,omitempty"` // the agent's own name
	Args    json.RawMessage `json:"args,omitempty"`     // arguments as the agent sent them (JSON)
}

// ContextOp is a call of one of the engine's context tools (context_write,
// context_append, context_read, context_delete, context_list, todo_add,
// todo_done, todo_note).
type ContextOp struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// Stage is a stage transition.
type Stage struct {
	To         string `json:"to"`                   // the stage entered
	Transition string `json:"transition,omitempty"` // the transition's name in the blueprint
}

// Compaction is a compaction the recorded agent did itself.
type Compaction struct {
	Trigger   string   `json:"trigger,omitempty"`    // "auto", "manual", "condenser"
	PreTokens int      `json:"pre_tokens,omitempty"` // context size before, as recorded
	Summary   string   `json:"summary,omitempty"`
	Forgot    []string `json:"forgot,omitempty"` // ids of events dropped from context, when recorded
}

// Probe asks whether a fact is still in the request at the next inference.
type Probe struct {
	Fact   string `json:"fact"`   // the Fact.ID asked for
	Text   string `json:"text"`   // the fact's text, verbatim
	Source string `json:"source"` // id of the event that first carried it
	// Derived marks a reference probe extracted from a recorded trace (an
	// identifier a later assistant turn used), as opposed to a planted fact.
	Derived bool `json:"derived,omitempty"`
	// Refetch is the tool call that would fetch the fact again; nil when the
	// fact cannot be fetched (the task, a user's words).
	Refetch *ToolCall `json:"refetch,omitempty"`
}

// Usage is what the provider reported for one request, in one convention:
// Prompt = Uncached + CacheRead + CacheWrite.
type Usage struct {
	Model      string `json:"model,omitempty"`
	Prompt     int    `json:"prompt"`
	Uncached   int    `json:"uncached"`
	CacheRead  int    `json:"cache_read"`
	CacheWrite int    `json:"cache_write"`
	Output     int    `json:"output"`
	// Side marks a side call to another model (quota probe, title generation);
	// it is not part of the main agent's context.
	Side bool `json:"side,omitempty"`
	// Request is the exact request as recorded (claude-trace), for as-recorded replay.
	Request *Request `json:"request,omitempty"`
}

// Request is a recorded request body reduced to what context measurement needs.
type Request struct {
	System   []Block   `json:"system,omitempty"`
	Tools    string    `json:"tools,omitempty"` // tool schemas as sent (JSON text)
	Messages []Message `json:"messages"`
}

// Message is one recorded message: a role and its blocks.
type Message struct {
	Role   string  `json:"role"`
	Blocks []Block `json:"blocks"`
}

// Block is one content block with its cache breakpoint, as recorded.
type Block struct {
	Type  string `json:"type"` // text, tool_use, tool_result, thinking, image
	Text  string `json:"text"`
	Cache string `json:"cache,omitempty"` // "", "5m" or "1h": a cache_control breakpoint
}

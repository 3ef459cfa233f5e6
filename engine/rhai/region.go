package rhai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/engine"
)

// Engine compiles custom-region scripts for the region engine: it implements
// engine.ScriptEngine and engine.SeedEvaluator.
type Engine struct {
	lim Limits
}

// NewEngine returns an Engine whose scripts run under lim (zero fields take
// the defaults of DefaultLimits).
func NewEngine(lim Limits) (*Engine, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	return &Engine{lim: lim.withDefaults()}, nil
}

// Limits returns the effective limits.
func (e *Engine) Limits() Limits { return e.lim }

// Compile compiles a region script. The engine adds the region name and the
// path to the message; the error itself names the line and column.
func (e *Engine) Compile(path string, src []byte) (engine.RegionScript, error) {
	s, err := Compile(path, src, e.lim)
	if err != nil {
		return nil, err
	}
	return &RegionScript{s: s}, nil
}

// EvalSeed runs a `{ rhai = "…" }` seed script; the value of its last
// statement, as text, becomes the seed (`()` gives an empty seed).
func (e *Engine) EvalSeed(path string, src []byte) (string, error) {
	s, err := Compile(path, src, e.lim)
	if err != nil {
		return "", fmt.Errorf("rhai seed %s: %w", path, err)
	}
	v, _, err := s.evalTop()
	if err != nil {
		return "", fmt.Errorf("rhai seed %s: %w", path, err)
	}
	return v.String(), nil
}

// RegionScript is a compiled custom-region script (engine.RegionScript). It
// collects what the hooks print; DrainOutput hands it over. A RegionScript
// belongs to one engine.Context, which calls it from one goroutine.
type RegionScript struct {
	s   *Script
	out []string
	// parsed caches tool-call arguments by their JSON text: every render
	// sees the same calls again, and decoding JSON costs more than copying.
	parsed map[string]Value
	// seen holds the entry maps of the last call: each assembly passes
	// mostly the same entries, and shared (copy-on-write) values make
	// handing the same map to the next call safe.
	seen []seenEntry
}

type seenEntry struct {
	e engine.ScriptEntry
	v Value
}

func sameEntry(a, b engine.ScriptEntry) bool {
	if a.Timestamp != b.Timestamp || a.Content != b.Content || a.Kind != b.Kind || a.Tokens != b.Tokens || a.Key != b.Key || a.HasKey != b.HasKey || a.ToolCallID != b.ToolCallID || a.ToolName != b.ToolName ||
		a.IsError != b.IsError || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i, c := range a.ToolCalls {
		d := b.ToolCalls[i]
		if c.ID != d.ID || c.Name != d.Name || !bytes.Equal(c.Args, d.Args) {
			return false
		}
	}
	return true
}

// entries converts ctx entries, reusing the maps of the previous call. The
// previous entries are walked in order (a region mostly appends and drops
// from the front), with a lookup by timestamp for anything out of order.
func (r *RegionScript) entries(es []engine.ScriptEntry) Value {
	next := make([]seenEntry, len(es))
	out := make([]Value, len(es))
	var byStamp map[int64]int
	j := 0
	for i, e := range es {
		for j < len(r.seen) && r.seen[j].e.Timestamp < e.Timestamp {
			j++
		}
		hit := -1
		if j < len(r.seen) && sameEntry(r.seen[j].e, e) {
			hit = j
			j++
		} else if len(r.seen) > 0 {
			if byStamp == nil {
				byStamp = make(map[int64]int, len(r.seen))
				for k, s := range r.seen {
					byStamp[s.e.Timestamp] = k
				}
			}
			if k, ok := byStamp[e.Timestamp]; ok && sameEntry(r.seen[k].e, e) {
				hit = k
			}
		}
		if hit >= 0 {
			out[i] = r.seen[hit].v
		} else {
			out[i] = entryValue(e, r.args).share()
		}
		next[i] = seenEntry{e, out[i]}
	}
	r.seen = next
	return NewArray(out)
}

// maxArgNodes bounds the arrays and maps in rendered tool-call arguments:
// shared storage lets a script build a small value that expands hugely.
const maxArgNodes = 100_000

// maxParsed bounds the argument cache; it is simply reset when full.
const maxParsed = 4096

func (r *RegionScript) args(raw json.RawMessage) Value {
	if v, ok := r.parsed[string(raw)]; ok {
		return v.share() // copy-on-write: the script may change its copy
	}
	v := jsonValue(raw)
	if r.parsed == nil || len(r.parsed) >= maxParsed {
		r.parsed = make(map[string]Value)
	}
	r.parsed[string(raw)] = v
	return v.share()
}

// Script returns the compiled script.
func (r *RegionScript) Script() *Script { return r.s }

// HasHook reports whether the hook is defined and its parameter count.
func (r *RegionScript) HasHook(name string) (int, bool) { return hookArity(r.s, name) }

// DrainOutput returns and forgets the print/debug lines of past hook calls,
// each prefixed with the hook and position, for the engine to report as
// warnings. Nothing is ever written to a terminal.
func (r *RegionScript) DrainOutput() []string {
	out := r.out
	r.out = nil
	return out
}

func (r *RegionScript) call(hook string, ctx Value) (Value, error) {
	v, out, err := r.s.CallCapture(hook, ctx)
	for _, o := range out {
		r.out = append(r.out, fmt.Sprintf("%s %s (%s): %s", hook, o.Kind, o.Pos, o.Text))
	}
	if err != nil {
		return Value{}, fmt.Errorf("%s: %w", hook, err)
	}
	return v, nil
}

// Render runs render(ctx) and checks the shape of its answer.
func (r *RegionScript) Render(ctx engine.ScriptContext) (engine.ScriptRender, error) {
	v, err := r.call("render", renderCtx(ctx, r.entries(ctx.Entries)))
	if err != nil {
		return engine.ScriptRender{}, err
	}
	return ParseRender(v)
}

// OnWrite runs on_write(ctx) for one incoming entry.
func (r *RegionScript) OnWrite(ctx engine.ScriptContext, e engine.ScriptEntry) (*engine.ScriptEntry, bool, error) {
	v, err := r.call("on_write", WriteCtx(ctx, e))
	if err != nil {
		return nil, true, err
	}
	switch v.k {
	case KindString:
		repl := e
		repl.Content = v.s
		return &repl, true, nil
	case KindUnit:
		return nil, true, nil
	case KindBool:
		return nil, v.n != 0, nil
	}
	return nil, true, fmt.Errorf("on_write returned %s; expected a string (replacement), true or () (accept) or false (drop)", v.TypeName())
}

// OnOverflow runs on_overflow(ctx) and validates the indices: all integers
// within the entries, else the whole answer is rejected. The result is sorted
// and without duplicates.
func (r *RegionScript) OnOverflow(ctx engine.ScriptContext) ([]int, error) {
	v, err := r.call("on_overflow", overflowCtx(ctx, r.entries(ctx.Entries)))
	if err != nil {
		return nil, err
	}
	elems, ok := v.AsArray()
	if !ok {
		return nil, fmt.Errorf("on_overflow returned %s; expected an array of entry indices", v.TypeName())
	}
	seen := make(map[int]bool, len(elems))
	drop := make([]int, 0, len(elems))
	for i, x := range elems {
		if x.k != KindInt {
			return nil, fmt.Errorf("on_overflow: index [%d] is %s, not an integer", i, x.TypeName())
		}
		if x.n < 0 || x.n >= int64(len(ctx.Entries)) {
			return nil, fmt.Errorf("on_overflow: index %d is outside the %d entries", x.n, len(ctx.Entries))
		}
		if !seen[int(x.n)] {
			seen[int(x.n)] = true
			drop = append(drop, int(x.n))
		}
	}
	sort.Ints(drop)
	return drop, nil
}

// ---- ctx shapes (seed 001) ----

func regionValue(r engine.ScriptRegion) Value {
	return NewMap(map[string]Value{
		"name":           String(r.Name),
		"budget":         Int(int64(r.Budget)),
		"current_tokens": Int(int64(r.CurrentTokens)),
		"entry_count":    Int(int64(r.EntryCount)),
	})
}

// EntryValue is one entry as render and on_overflow see it.
func EntryValue(e engine.ScriptEntry) Value { return entryValue(e, jsonValue) }

func entryValue(e engine.ScriptEntry, args func(json.RawMessage) Value) Value {
	m := make(map[string]Value, 9)
	m["content"] = String(e.Content)
	m["tokens"] = Int(int64(e.Tokens))
	m["timestamp"] = Int(e.Timestamp)
	m["kind"] = String(e.Kind)
	m["key"] = Value{}
	if e.HasKey {
		m["key"] = String(e.Key)
	}
	switch e.Kind {
	case "assistant_turn":
		calls := make([]Value, len(e.ToolCalls))
		for i, c := range e.ToolCalls {
			calls[i] = NewMap(map[string]Value{
				"id":        String(c.ID),
				"name":      String(c.Name),
				"arguments": args(c.Args),
			})
		}
		m["tool_calls"] = NewArray(calls)
	case "tool_result":
		m["tool_call_id"] = String(e.ToolCallID)
		m["tool_name"] = String(e.ToolName)
		m["is_error"] = Bool(e.IsError)
	}
	return NewMap(m)
}

func entriesValue(es []engine.ScriptEntry, args func(json.RawMessage) Value) Value {
	out := make([]Value, len(es))
	for i, e := range es {
		out[i] = entryValue(e, args)
	}
	return NewArray(out)
}

// RenderCtx is render's ctx: region, entries, stage_name, stage_iterations,
// model and window.
func RenderCtx(c engine.ScriptContext) Value { return renderCtx(c, entriesValue(c.Entries, jsonValue)) }

func renderCtx(c engine.ScriptContext, entries Value) Value {
	return NewMap(map[string]Value{
		"region":           regionValue(c.Region),
		"entries":          entries,
		"stage_name":       String(c.StageName),
		"stage_iterations": Int(int64(c.StageIterations)),
		"model":            String(c.Model),
		"window": NewMap(map[string]Value{
			"total_tokens": Int(int64(c.Window.TotalTokens)),
			"max_tokens":   Int(int64(c.Window.MaxTokens)),
		}),
	})
}

// WriteCtx is on_write's ctx: region, and the entry's content, kind and tokens.
func WriteCtx(c engine.ScriptContext, e engine.ScriptEntry) Value {
	return NewMap(map[string]Value{
		"region": regionValue(c.Region),
		"entry": NewMap(map[string]Value{
			"content": String(e.Content),
			"kind":    String(e.Kind),
			"tokens":  Int(int64(e.Tokens)),
		}),
	})
}

// OverflowCtx is on_overflow's ctx: region, entries and needed_tokens.
func OverflowCtx(c engine.ScriptContext) Value {
	return overflowCtx(c, entriesValue(c.Entries, jsonValue))
}

func overflowCtx(c engine.ScriptContext, entries Value) Value {
	return NewMap(map[string]Value{
		"region":        regionValue(c.Region),
		"entries":       entries,
		"needed_tokens": Int(int64(c.NeededTokens)),
	})
}

// jsonValue converts tool-call arguments to a Value; invalid or empty JSON
// becomes an empty map, so scripts can always read arguments.x.
func jsonValue(raw json.RawMessage) Value {
	if len(bytes.TrimSpace(raw)) == 0 {
		return NewMap(nil)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return NewMap(nil)
	}
	return fromJSON(x)
}

// parseJSON decodes a JSON document for parse_json: integers stay i64.
func parseJSON(s string) (Value, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return Value{}, err
	}
	if dec.More() {
		return Value{}, fmt.Errorf("text after the JSON value")
	}
	return fromJSON(x), nil
}

func fromJSON(x any) Value {
	switch t := x.(type) {
	case nil:
		return Value{}
	case bool:
		return Bool(t)
	case string:
		return String(t)
	case json.Number:
		if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return Int(n)
		}
		f, _ := strconv.ParseFloat(string(t), 64)
		return Float(f)
	case []any:
		out := make([]Value, len(t))
		for i, e := range t {
			out[i] = fromJSON(e)
		}
		return NewArray(out)
	case map[string]any:
		m := make(map[string]Value, len(t))
		for k, e := range t {
			m[k] = fromJSON(e)
		}
		return NewMap(m)
	}
	return Value{}
}

// toJSON converts a Value to JSON for tool-call arguments; map keys come out
// sorted, so the bytes are deterministic.
func toJSON(v Value) (json.RawMessage, error) {
	x, err := jsonable(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

func jsonable(v Value) (any, error) {
	switch v.k {
	case KindUnit:
		return nil, nil
	case KindBool:
		return v.n != 0, nil
	case KindInt:
		return v.n, nil
	case KindFloat:
		f := v.float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%s cannot be written as JSON", formatFloat(f))
		}
		return f, nil
	case KindChar:
		return string(rune(v.n)), nil
	case KindString:
		return v.s, nil
	case KindArray:
		out := make([]any, len(v.arr().Elems))
		for i, e := range v.arr().Elems {
			x, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case KindMap:
		out := make(map[string]any, len(v.mp().M))
		for k, e := range v.mp().M {
			x, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %s cannot be written as JSON", v.TypeName())
}

// ---- render's answer ----

// ParseRender checks render's return value: a string (one system block, ""
// for none) or a map of `system` (string or array of strings) and `messages`
// (typed role/content entries, optionally with tool_calls or tool_results).
func ParseRender(v Value) (engine.ScriptRender, error) {
	var out engine.ScriptRender
	switch v.k {
	case KindString:
		if v.s != "" {
			out.System = []string{v.s}
		}
		return out, nil
	case KindMap:
	default:
		return out, fmt.Errorf("render returned %s; expected a string or a map of system and messages", v.TypeName())
	}
	m := v.mp().M // other keys are ignored, as the reference runtime does
	switch sys := m["system"]; sys.k {
	case KindUnit:
	case KindString:
		if sys.s != "" {
			out.System = []string{sys.s}
		}
	case KindArray:
		for i, s := range sys.arr().Elems {
			if s.k != KindString {
				return out, fmt.Errorf("render: system[%d] is %s, not a string", i, s.TypeName())
			}
			if s.s != "" {
				out.System = append(out.System, s.s)
			}
		}
	default:
		return out, fmt.Errorf("render: system is %s; expected a string or an array of strings", sys.TypeName())
	}
	switch msgs := m["messages"]; msgs.k {
	case KindUnit:
	case KindArray:
		for i, mv := range msgs.arr().Elems {
			msg, err := parseMessage(mv)
			if err != nil {
				return out, fmt.Errorf("render: messages[%d]: %w", i, err)
			}
			out.Messages = append(out.Messages, msg)
		}
	default:
		return out, fmt.Errorf("render: messages is %s; expected an array of messages", msgs.TypeName())
	}
	return out, nil
}

func getString(m map[string]Value, key string, required bool) (string, error) {
	v, ok := m[key]
	switch {
	case !ok || v.k == KindUnit:
		if required {
			return "", fmt.Errorf("%s is missing", key)
		}
		return "", nil
	case v.k != KindString:
		return "", fmt.Errorf("%s is %s, not a string", key, v.TypeName())
	}
	return v.s, nil
}

func parseMessage(v Value) (engine.ScriptMessage, error) {
	var msg engine.ScriptMessage
	if v.k != KindMap {
		return msg, fmt.Errorf("a message is a map of role and content, found %s", v.TypeName())
	}
	m := v.mp().M
	var err error
	if msg.Role, err = getString(m, "role", true); err != nil {
		return msg, err
	}
	if msg.Role != "user" && msg.Role != "assistant" {
		return msg, fmt.Errorf("role %q is not user or assistant", msg.Role)
	}
	if msg.Content, err = getString(m, "content", false); err != nil {
		return msg, err
	}
	if tc, ok := m["tool_calls"]; ok && tc.k != KindUnit {
		if msg.Role != "assistant" {
			return msg, fmt.Errorf("tool_calls belong on an assistant message")
		}
		if tc.k != KindArray {
			return msg, fmt.Errorf("tool_calls is %s, not an array", tc.TypeName())
		}
		for i, c := range tc.arr().Elems {
			if c.k != KindMap {
				return msg, fmt.Errorf("tool_calls[%d] is %s, not a map", i, c.TypeName())
			}
			cm := c.mp().M
			var call engine.ToolCall
			if call.ID, err = getString(cm, "id", true); err != nil {
				return msg, fmt.Errorf("tool_calls[%d]: %w", i, err)
			}
			if call.Name, err = getString(cm, "name", true); err != nil {
				return msg, fmt.Errorf("tool_calls[%d]: %w", i, err)
			}
			if a, ok := cm["arguments"]; ok && a.k != KindUnit {
				if countNodes(a, maxArgNodes) > maxArgNodes {
					return msg, fmt.Errorf("tool_calls[%d].arguments: more than %d nested arrays and maps", i, maxArgNodes)
				}
				if call.Args, err = toJSON(a); err != nil {
					return msg, fmt.Errorf("tool_calls[%d].arguments: %w", i, err)
				}
			}
			msg.ToolCalls = append(msg.ToolCalls, call)
		}
	}
	if tr, ok := m["tool_results"]; ok && tr.k != KindUnit {
		if msg.Role != "user" {
			return msg, fmt.Errorf("tool_results belong on a user message")
		}
		if tr.k != KindArray {
			return msg, fmt.Errorf("tool_results is %s, not an array", tr.TypeName())
		}
		for i, r := range tr.arr().Elems {
			if r.k != KindMap {
				return msg, fmt.Errorf("tool_results[%d] is %s, not a map", i, r.TypeName())
			}
			rm := r.mp().M
			var res engine.ScriptToolResult
			if res.ToolCallID, err = getString(rm, "tool_call_id", true); err != nil {
				return msg, fmt.Errorf("tool_results[%d]: %w", i, err)
			}
			if res.Content, err = getString(rm, "content", false); err != nil {
				return msg, fmt.Errorf("tool_results[%d]: %w", i, err)
			}
			if ie, ok := rm["is_error"]; ok && ie.k != KindUnit {
				if ie.k != KindBool {
					return msg, fmt.Errorf("tool_results[%d]: is_error is %s, not a bool", i, ie.TypeName())
				}
				res.IsError = ie.n != 0
			}
			msg.ToolResults = append(msg.ToolResults, res)
		}
	}
	return msg, nil
}

// Compile-time checks that Engine and RegionScript fit the engine's interfaces.
var (
	_ engine.ScriptEngine  = (*Engine)(nil)
	_ engine.SeedEvaluator = (*Engine)(nil)
	_ engine.RegionScript  = (*RegionScript)(nil)
)

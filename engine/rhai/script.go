package rhai

import (
	"fmt"
	"sort"
	"strings"
)

// Limits bounds what one call into a script may do. A zero field takes its
// default; negative fields are rejected by Validate.
type Limits struct {
	MaxOperations  int // evaluation steps per call (default 100,000, as the reference runtime)
	MaxCallDepth   int // nested function calls (default 64)
	MaxStringLen   int // bytes in any string a script builds (default 4 MiB)
	MaxArraySize   int // elements in any array (default 100,000)
	MaxMapSize     int // properties in any object map (default 10,000)
	MaxExprDepth   int // syntactic nesting at compile time (default 128)
	MaxScriptBytes int // source size at compile time (default 1 MiB)
}

// maxNesting caps the call-depth and syntax-depth limits.
const maxNesting = 10_000

// DefaultLimits returns the limits used for zero fields.
func DefaultLimits() Limits {
	return Limits{
		MaxOperations:  100_000,
		MaxCallDepth:   64,
		MaxStringLen:   4 << 20,
		MaxArraySize:   100_000,
		MaxMapSize:     10_000,
		MaxExprDepth:   128,
		MaxScriptBytes: 1 << 20,
	}
}

// Validate reports a negative limit.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{LimitOperations, l.MaxOperations}, {LimitCallDepth, l.MaxCallDepth},
		{LimitStringLen, l.MaxStringLen}, {LimitArraySize, l.MaxArraySize},
		{LimitMapSize, l.MaxMapSize}, {LimitExprDepth, l.MaxExprDepth},
		{LimitScriptBytes, l.MaxScriptBytes},
	} {
		if f.v < 0 {
			return fmt.Errorf("rhai limit %s must not be negative (got %d)", f.name, f.v)
		}
	}
	// Script calls and syntax nest Go calls; past these the Go stack, not
	// the script, would be the limit.
	if l.MaxCallDepth > maxNesting || l.MaxExprDepth > maxNesting {
		return fmt.Errorf("rhai limits %s and %s must be at most %d (got %d and %d)", LimitCallDepth, LimitExprDepth, maxNesting, l.MaxCallDepth, l.MaxExprDepth)
	}
	return nil
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	pick := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	return Limits{
		MaxOperations:  pick(l.MaxOperations, d.MaxOperations),
		MaxCallDepth:   pick(l.MaxCallDepth, d.MaxCallDepth),
		MaxStringLen:   pick(l.MaxStringLen, d.MaxStringLen),
		MaxArraySize:   pick(l.MaxArraySize, d.MaxArraySize),
		MaxMapSize:     pick(l.MaxMapSize, d.MaxMapSize),
		MaxExprDepth:   pick(l.MaxExprDepth, d.MaxExprDepth),
		MaxScriptBytes: pick(l.MaxScriptBytes, d.MaxScriptBytes),
	}
}

// Script is a compiled script. It is immutable and safe for concurrent calls:
// each Call gets its own interpreter state.
type Script struct {
	fns  map[string][]*fnDef
	top  []node // top-level statements, run before every call as Rhai's call_fn does
	lim  Limits
	name string
}

// Compile parses src. name is used only in error messages (errors carry the
// line and column; callers add the file path). Errors are *Error.
func Compile(name string, src []byte, lim Limits) (*Script, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	lim = lim.withDefaults()
	if len(src) > lim.MaxScriptBytes {
		return nil, limitErr(Pos{}, LimitScriptBytes, "script too large: %d bytes, more than %d", len(src), lim.MaxScriptBytes)
	}
	text := string(src)
	if strings.HasPrefix(text, "#!") {
		// A shebang line is allowed, as in Rhai; blank it to keep positions.
		end := strings.IndexByte(text, '\n')
		if end < 0 {
			end = len(text)
		}
		text = strings.Repeat(" ", end) + text[end:]
	}
	toks, err := tokenize(text, Pos{1, 1})
	if err != nil {
		return nil, err
	}
	var methods []*methodExpr
	p := &parser{toks: toks, maxDepth: lim.MaxExprDepth, fns: map[string][]*fnDef{}, methods: &methods}
	top, err := p.parseProgram()
	if err != nil {
		return nil, err
	}
	sc := &Script{fns: p.fns}
	for _, m := range methods {
		m.fn = sc.findFn(m.name, len(m.args))
		m.pure = pureMethods[m.name] && len(p.fns[m.name]) == 0
	}
	return &Script{fns: p.fns, top: top, lim: lim, name: name}, nil
}

// Name returns the name given to Compile.
func (s *Script) Name() string { return s.name }

// Limits returns the effective limits (defaults filled in).
func (s *Script) Limits() Limits { return s.lim }

// HasFn reports whether the script defines a function called name, and its
// number of parameters (the smallest, if it is overloaded).
func (s *Script) HasFn(name string) (arity int, ok bool) {
	fs := s.fns[name]
	if len(fs) == 0 {
		return 0, false
	}
	arity = len(fs[0].params)
	for _, f := range fs[1:] {
		arity = min(arity, len(f.params))
	}
	return arity, true
}

// Arities lists every parameter count name is defined with, ascending.
func (s *Script) Arities(name string) []int {
	var out []int
	for _, f := range s.fns[name] {
		out = append(out, len(f.params))
	}
	sort.Ints(out)
	return out
}

// Call runs the script's top-level statements, then calls the function name
// with args (passed by value: the callee cannot change the caller's values).
// print and debug output is discarded; use CallCapture to keep it.
func (s *Script) Call(name string, args ...Value) (Value, error) {
	v, _, err := s.CallCapture(name, args...)
	return v, err
}

// CallCapture is Call that also returns what the script printed.
func (s *Script) CallCapture(name string, args ...Value) (Value, []Output, error) {
	in := &interp{s: s, lim: s.lim, scope: make([]binding, 0, 8)}
	// Arguments are passed by value: the caller's arrays and maps are
	// shared copy-on-write, so the script changes copies of them.
	own := make([]Value, len(args))
	for i, a := range args {
		own[i] = a.share()
	}
	v, err := in.run(name, own)
	return v, in.outputs(), err
}

// outputs is the captured print/debug lines, with a note of any dropped.
func (in *interp) outputs() []Output {
	if in.dropped > 0 {
		return append(in.out, Output{Kind: "print", Text: fmt.Sprintf("(%d more lines of output dropped)", in.dropped)})
	}
	return in.out
}

// evalTopStmt runs one top-level statement; a top-level constant also
// becomes a global, which functions can read.
func (in *interp) evalTopStmt(st node) (Value, error) {
	v, err := in.eval(st)
	if err != nil {
		return Value{}, err
	}
	if l, ok := st.(*letStmt); ok && l.konst {
		in.setGlobal(l.name, in.varValue(len(in.scope)-1))
	}
	return v, nil
}

func (in *interp) run(name string, args []Value) (v Value, err error) {
	for _, st := range in.s.top {
		if _, err := in.evalTopStmt(st); err != nil {
			if err == errReturn {
				break // a top-level return ends the top-level run
			}
			return Value{}, stray(st.at(), err)
		}
	}
	in.truncate(0)
	f := in.s.findFn(name, len(args))
	if f == nil {
		if ar := in.s.Arities(name); len(ar) > 0 {
			return Value{}, fmt.Errorf("function %s takes %v parameters, called with %d", name, ar, len(args))
		}
		return Value{}, fmt.Errorf("function not found: %s", name)
	}
	return in.callScript(Pos{}, f, args, nil) // Pos{}: called by the host, not from a script line
}

// Eval compiles and runs src as a whole script and returns the value of its
// last statement. It is for tests, examples and one-off expressions.
func Eval(src string, lim Limits) (Value, []Output, error) {
	s, err := Compile("eval", []byte(src), lim)
	if err != nil {
		return Value{}, nil, err
	}
	return s.evalTop()
}

// evalTop runs the top-level statements and returns the last one's value.
func (s *Script) evalTop() (Value, []Output, error) {
	in := &interp{s: s, lim: s.lim, scope: make([]binding, 0, 8)}
	var last Value
	for _, st := range s.top {
		v, err := in.evalTopStmt(st)
		if err == errReturn {
			return in.retVal, in.outputs(), nil
		}
		if err != nil {
			return Value{}, in.outputs(), stray(st.at(), err)
		}
		last = v
	}
	return last, in.outputs(), nil
}

func (in *interp) setGlobal(name string, v Value) {
	if in.globals == nil {
		in.globals = map[string]Value{}
	}
	in.globals[name] = v.share()
}

package rhai_test

import (
	"errors"
	"fmt"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/engine/rhai"
)

// A script is compiled once and its functions called with Go data.
func ExampleCompile() {
	src := `
fn summary(entries) {
    let errors = entries.filter(|e| e.content.contains("ERROR"));
    ` + "`${errors.len()} of ${entries.len()} entries failed`" + `
}`
	s, err := rhai.Compile("summary.rhai", []byte(src), rhai.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	entries := rhai.MustFromGo([]any{
		map[string]any{"content": "ok"},
		map[string]any{"content": "ERROR: disk full"},
	})
	v, err := s.Call("summary", entries)
	fmt.Println(v, err)
	// Output: 1 of 2 entries failed <nil>
}

// Errors name the line and column; sandbox limits say which limit stopped
// the script.
func ExampleLimitOf() {
	_, _, err := rhai.Eval("let x = 1;\nx +* 2", rhai.Limits{})
	fmt.Println(err)
	_, _, err = rhai.Eval("loop {}", rhai.Limits{MaxOperations: 1000})
	fmt.Println(rhai.LimitOf(err), errors.Is(err, rhai.ErrLimit))
	// Output:
	// unexpected '*': expected an expression (line 2, column 4)
	// max_operations true
}

// The engine compiles custom regions' scripts through an Engine passed in
// its options.
func ExampleNewEngine() {
	scripts, err := rhai.NewEngine(rhai.Limits{MaxOperations: 50_000})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = engine.Options{Window: 200_000, Scripts: scripts}
	rs, err := scripts.Compile("brain.rhai", []byte(`fn render(ctx) { "entries: " + ctx.entries.len() }`))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := rs.Render(engine.ScriptContext{Entries: make([]engine.ScriptEntry, 3)})
	fmt.Println(out.System, err)
	// Output: [entries: 3] <nil>
}

package rhai

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

var fuzzSeeds = []string{
	"let x = 1; x += 2; x",
	"fn render(ctx) { let s = \"\"; for e in ctx.entries { s += `${e.kind}:${e.content}`; } s }",
	"switch 3 { 1 | 2 => 0, 3..5 => 1, x if true => 2, _ => 3 }",
	"let f = |x| x + 1; [1, 2].map(f).filter(|y, i| i > 0).reduce(|a, b| a + b, 0)",
	"let c = 0; let f = || c += 1; f.call(); c",
	"let m = #{a: [1, #{b: 'c'}]}; m.a[1].b = \"d\"; m?.a?[0] ?? ()",
	"loop { break 1; }",
	"do { } until true; try { throw #{x: 1}; } catch (e) { e.x }",
	"\"abc\"[-1] + 'x' + `${1 + 2}`",
	"fn f(n) { if n < 2 { n } else { f(n - 1) + f(n - 2) } } f(10)",
	"9223372036854775807 + 1",
	"let s = \"a\"; s.pad(10, '-'); s.trim(); s.sub_string(1, 2).split(\"-\")",
	"/* /* */ */ // x\n 0x7f ** 2 % 3 << 1",
	"import \"x\" as y;",
	"`${`${`x`}`}`",
	"fn this_call() { this.len() } [1].this_call()",
}

// FuzzScript compiles and runs arbitrary source under tight limits: it must
// never panic and never run long.
func FuzzScript(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "brain.rhai")); err == nil {
		f.Add(string(b))
	}
	for _, name := range []string{"pinned.rhai", "temporary.rhai", "sliding_window.rhai", "scored_table.rhai", "transcript.rhai"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(string(b))
		}
	}
	lim := Limits{MaxOperations: 20_000, MaxCallDepth: 32, MaxStringLen: 1 << 16, MaxArraySize: 2000, MaxMapSize: 500}
	ctx := MustFromGo(map[string]any{
		"region":  map[string]any{"name": "r", "budget": 100},
		"entries": []any{map[string]any{"content": "a\nb ERROR", "kind": "tool_result", "tokens": 3}},
		"entry":   map[string]any{"content": "x", "kind": "text", "tokens": 1},
	})
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		s, err := Compile("fuzz", []byte(src), lim)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("compile error of type %T: %v", err, err)
			}
			return
		}
		_, _, _ = s.evalTop()
		for name := range s.fns {
			for _, n := range s.Arities(name) {
				args := make([]Value, n)
				for i := range args {
					args[i] = ctx
				}
				_, _ = s.Call(name, args...)
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

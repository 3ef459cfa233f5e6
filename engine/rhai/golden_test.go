package rhai_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/engine/rhai"
	goldenfile "github.com/ctxsim/ctxsim/internal/golden"
)

func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), []byte(got), nil)
}

// TestGoldenRenders renders the testdata scripts over one fixed region.
func TestGoldenRenders(t *testing.T) {
	ctx := regionCtx(
		engine.ScriptEntry{Kind: "user_message", Content: "please fix the build", Tokens: 5, Timestamp: 1},
		engine.ScriptEntry{Kind: "assistant_turn", Content: "looking", Tokens: 3, Timestamp: 2, ToolCalls: []engine.ToolCall{{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"main.go"}`)}}},
		engine.ScriptEntry{Kind: "tool_result", Content: "package main\nfunc main() {}", Tokens: 8, Timestamp: 3, ToolCallID: "c1", ToolName: "read_file"},
		engine.ScriptEntry{Kind: "tool_result", Content: "ERROR: go vet failed\nmain.go:3: unused", Tokens: 9, Timestamp: 4, ToolCallID: "c2", ToolName: "shell", IsError: true},
		engine.ScriptEntry{Kind: "text", Content: "Assistant: noted", Tokens: 4, Timestamp: 5},
	)
	ctx.StageName, ctx.StageIterations, ctx.Model = "fix", 2, "test-model"
	var b strings.Builder
	for _, name := range []string{"brain.rhai", "pinned.rhai", "temporary.rhai", "sliding_window.rhai", "scored_table.rhai", "transcript.rhai"} {
		out, err := compileFile(t, name).Render(ctx)
		fmt.Fprintf(&b, "== %s\n", name)
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
			continue
		}
		for _, s := range out.System {
			fmt.Fprintf(&b, "system: %q\n", s)
		}
		for _, m := range out.Messages {
			fmt.Fprintf(&b, "%s: %q", m.Role, m.Content)
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, " call(%s %s %s)", c.ID, c.Name, c.Args)
			}
			for _, r := range m.ToolResults {
				fmt.Fprintf(&b, " result(%s %q error=%v)", r.ToolCallID, r.Content, r.IsError)
			}
			b.WriteString("\n")
		}
	}
	golden(t, "renders.golden", b.String())
}

// TestGoldenErrors lists what broken scripts are told, with positions.
func TestGoldenErrors(t *testing.T) {
	scripts := []string{
		"let x = 1\nlet y = 2;",
		"fn render(ctx) {\n  ctx.entries.map(|e| e.content\n}",
		"fn render(ctx) { `unclosed ${ctx",
		"import \"helpers\" as h;\nfn render(ctx) { h::f() }",
		"fn render(ctx) { switch ctx { _ => 1, 2 => 3 } }",
		"fn outer() { fn inner() {} }",
		"let c = 'too long';",
		"fn render(ctx) { let x = 1 +; }",
		"fn render(ctx) {\n\tlet s = \"tab\\q\";\n}",
		"fn f(a, a) {}",
		"x = ;",
		"#{ a: 1, a: 2 }",
	}
	var b strings.Builder
	for _, src := range scripts {
		_, err := rhai.Compile("broken.rhai", []byte(src), rhai.Limits{})
		fmt.Fprintf(&b, "%q\n  -> %v\n", src, err)
	}
	runtime := []string{
		"let a = [1, 2, 3];\na[5]",
		"let m = #{};\nm.x.y",
		"let n = 9223372036854775807;\nn + 1",
		"\"abc\".frobnicate(1)",
		"fn f(x) { x / 0 }\nf(1)",
		"fn g(x) { x.nope() }\nfn f(x) { [1].map(|y| g(y)) }\nf(1)",
		"throw #{ code: 7 };",
		"let s = \"x\";\ns[9] = 'y';",
		"loop {}",
	}
	for _, src := range runtime {
		_, _, err := rhai.Eval(src, rhai.Limits{MaxOperations: 1000})
		fmt.Fprintf(&b, "%q\n  -> %v\n", src, err)
	}
	golden(t, "errors.golden", b.String())
}

package rhai_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/engine/rhai"
)

func newEngine(t testing.TB, lim rhai.Limits) *rhai.Engine {
	t.Helper()
	e, err := rhai.NewEngine(lim)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func compileFile(t testing.TB, name string) engine.RegionScript {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := newEngine(t, rhai.Limits{}).Compile(name, src)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newContext builds a live window from region declarations; scripts resolve
// in testdata/ (or dir, when given).
func newContext(t testing.TB, regions, dir string, lim rhai.Limits) *engine.Context {
	t.Helper()
	if dir == "" {
		dir = "testdata"
	}
	bp, err := engine.ParseBlueprint("agent.leviath", []byte("[agent]\nname = \"t\"\n[context.regions]\n"+regions), dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.New(bp, engine.Options{Window: 200_000, Scripts: newEngine(t, lim), Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func warnings(c *engine.Context) []string {
	var out []string
	for _, e := range c.Drain() {
		if e.Kind == engine.EventWarning {
			out = append(out, e.Message)
		}
	}
	return out
}

// hookWarnings are the warnings that report a failed hook: a render a few
// tokens over the region's budget (headings, separators) is only a note in
// seed 001's table and is left out.
func hookWarnings(c *engine.Context) []string {
	var out []string
	for _, w := range warnings(c) {
		if !strings.Contains(w, "over the region's budget") {
			out = append(out, w)
		}
	}
	return out
}

func regionCtx(entries ...engine.ScriptEntry) engine.ScriptContext {
	tokens := 0
	for _, e := range entries {
		tokens += e.Tokens
	}
	return engine.ScriptContext{
		Region:  engine.ScriptRegion{Name: "brain", Budget: 100, CurrentTokens: tokens, EntryCount: len(entries)},
		Entries: entries,
	}
}

// TestSeedBrainScript runs seed 001's complete brain.rhai, unchanged, through
// the adapter: errors survive verbatim, successes are trimmed to their first
// line, successes go first under pressure, and the render is one XML user
// message.
func TestSeedBrainScript(t *testing.T) {
	s := compileFile(t, "brain.rhai")
	for _, tc := range []struct {
		hook string
		want int
	}{{"render", 1}, {"on_write", 1}, {"on_overflow", 1}} {
		if n, ok := s.HasHook(tc.hook); !ok || n != tc.want {
			t.Fatalf("HasHook(%s) = %d, %v", tc.hook, n, ok)
		}
	}
	t.Run("on_write keeps a tool error verbatim", func(t *testing.T) {
		e := engine.ScriptEntry{Kind: "tool_result", Content: "ERROR: build failed\n  at main.go:3\n  at x.go:9", Tokens: 12}
		repl, accept, err := s.OnWrite(regionCtx(), e)
		if err != nil || repl != nil || !accept {
			t.Fatalf("got %+v, %v, %v; want accepted unchanged", repl, accept, err)
		}
	})
	t.Run("on_write trims a success to its first line", func(t *testing.T) {
		e := engine.ScriptEntry{Kind: "tool_result", Content: "ok: 3 files\nfile a\nfile b", Tokens: 7, ToolCallID: "t1"}
		repl, accept, err := s.OnWrite(regionCtx(), e)
		if err != nil || repl == nil || !accept {
			t.Fatalf("got %+v, %v, %v; want a replacement", repl, accept, err)
		}
		if repl.Content != "ok: 3 files" || repl.Kind != "tool_result" {
			t.Fatalf("replacement %+v", repl)
		}
	})
	t.Run("on_write accepts other kinds unchanged", func(t *testing.T) {
		repl, accept, err := s.OnWrite(regionCtx(), engine.ScriptEntry{Kind: "text", Content: "a\nb"})
		if err != nil || repl != nil || !accept {
			t.Fatalf("got %+v, %v, %v", repl, accept, err)
		}
	})
	t.Run("on_overflow drops successes before errors", func(t *testing.T) {
		ctx := regionCtx(
			engine.ScriptEntry{Kind: "tool_result", Content: "ok one", Tokens: 30},
			engine.ScriptEntry{Kind: "tool_result", Content: "ERROR two", Tokens: 30},
			engine.ScriptEntry{Kind: "text", Content: "ok three", Tokens: 30},
		)
		ctx.NeededTokens = 40
		drop, err := s.OnOverflow(ctx)
		if err != nil || fmt.Sprint(drop) != "[0 2]" {
			t.Fatalf("drop = %v, %v", drop, err)
		}
	})
	t.Run("render is one XML user message", func(t *testing.T) {
		out, err := s.Render(regionCtx(
			engine.ScriptEntry{Kind: "text", Content: "plan"},
			engine.ScriptEntry{Kind: "tool_result", Content: "ERROR x"},
		))
		if err != nil {
			t.Fatal(err)
		}
		want := `<context><event kind="text">plan</event><event kind="tool_result">ERROR x</event></context>`
		if len(out.System) != 0 || len(out.Messages) != 1 || out.Messages[0].Role != "user" || out.Messages[0].Content != want {
			t.Fatalf("render = %+v", out)
		}
	})
}

// TestSeedBrainThroughEngine loads brain.rhai from a blueprint and drives it
// through a live window.
func TestSeedBrainThroughEngine(t *testing.T) {
	c := newContext(t, "brain = { kind = \"custom\", script = \"brain.rhai\", max_tokens = 60 }\n", "", rhai.Limits{})
	for _, text := range []string{"ok start", "ERROR: disk full", "ok middle"} {
		if err := c.Write("brain", strings.Repeat("x", 40)+" "+text); err != nil {
			t.Fatal(err)
		}
	}
	// 3 × ~13 tokens fit; a 4th large write overflows 60 tokens: on_overflow
	// drops the successes first, keeping the error.
	if err := c.Write("brain", strings.Repeat("y", 120)+" ok late"); err != nil {
		t.Fatal(err)
	}
	text, _ := c.RegionText("brain")
	if !strings.Contains(text, "ERROR: disk full") || strings.Contains(text, "ok start") || strings.Contains(text, "ok middle") {
		t.Fatalf("region after overflow: %q", text)
	}
	c.AddUser("go on")
	req := c.Assemble()
	if len(req.Messages) < 2 {
		t.Fatalf("messages: %+v", req.Messages)
	}
	first := req.Messages[0]
	if first.Role != engine.RoleUser || len(first.Blocks) != 1 || !strings.HasPrefix(first.Blocks[0].Text, "<context><event kind=\"text\">") || !strings.HasSuffix(first.Blocks[0].Text, "</context>") {
		t.Fatalf("first message is not the XML preamble: %+v", first)
	}
	if w := hookWarnings(c); len(w) != 0 {
		t.Fatalf("unexpected warnings: %v", w)
	}
}

func TestRenderCtxShape(t *testing.T) {
	ctx := engine.ScriptContext{
		Region: engine.ScriptRegion{Name: "r", Budget: 500, CurrentTokens: 20, EntryCount: 2},
		Entries: []engine.ScriptEntry{
			{Kind: "assistant_turn", Content: "calling", Tokens: 5, Timestamp: 7, ToolCalls: []engine.ToolCall{{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"a.go","n":2,"deep":{"x":[1.5,true,null]}}`)}}},
			{Kind: "tool_result", Content: "body", Tokens: 15, Timestamp: 8, ToolCallID: "c1", ToolName: "read_file", IsError: true, Key: "k", HasKey: true},
		},
		StageName: "plan", StageIterations: 2, Model: "m",
		Window: engine.ScriptWindow{TotalTokens: 900, MaxTokens: 200000},
	}
	got := rhai.RenderCtx(ctx).DebugString()
	want := `#{"entries": [#{"content": "calling", "key": (), "kind": "assistant_turn", "timestamp": 7, "tokens": 5, "tool_calls": [#{"arguments": #{"deep": #{"x": [1.5, true, ()]}, "n": 2, "path": "a.go"}, "id": "c1", "name": "read_file"}]}, ` +
		`#{"content": "body", "is_error": true, "key": "k", "kind": "tool_result", "timestamp": 8, "tokens": 15, "tool_call_id": "c1", "tool_name": "read_file"}], ` +
		`"model": "m", "region": #{"budget": 500, "current_tokens": 20, "entry_count": 2, "name": "r"}, "stage_iterations": 2, "stage_name": "plan", "window": #{"max_tokens": 200000, "total_tokens": 900}}`
	if got != want {
		t.Fatalf("render ctx\n got %s\nwant %s", got, want)
	}
	w := rhai.WriteCtx(ctx, engine.ScriptEntry{Kind: "text", Content: "c", Tokens: 1}).DebugString()
	if w != `#{"entry": #{"content": "c", "kind": "text", "tokens": 1}, "region": #{"budget": 500, "current_tokens": 20, "entry_count": 2, "name": "r"}}` {
		t.Fatalf("write ctx %s", w)
	}
	ctx.NeededTokens = 9
	o := rhai.OverflowCtx(ctx).DebugString()
	if !strings.Contains(o, `"needed_tokens": 9`) || !strings.Contains(o, `"entries": [`) || strings.Contains(o, "stage_name") {
		t.Fatalf("overflow ctx %s", o)
	}
}

func TestParseRender(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want string // fmt of the ScriptRender
		err  string
	}{
		{name: "string", src: `"hello"`, want: `{System:[hello] Messages:[]}`},
		{name: "empty string is nothing", src: `""`, want: `{System:[] Messages:[]}`},
		{name: "system string", src: `#{system: "s"}`, want: `{System:[s] Messages:[]}`},
		{name: "system array", src: `#{system: ["a", "", "b"]}`, want: `{System:[a b] Messages:[]}`},
		{name: "typed messages", src: `#{messages: [#{role: "user", content: "u"}, #{role: "assistant", content: "a"}]}`, want: `{System:[] Messages:[{Role:user Content:u ToolCalls:[] ToolResults:[]} {Role:assistant Content:a ToolCalls:[] ToolResults:[]}]}`},
		{name: "tool calls and results", src: `#{messages: [#{role: "assistant", tool_calls: [#{id: "t1", name: "grep", arguments: #{q: "x", n: 1}}]}, #{role: "user", tool_results: [#{tool_call_id: "t1", content: "hit", is_error: true}]}]}`,
			want: `{System:[] Messages:[{Role:assistant Content: ToolCalls:[{ID:t1 Name:grep Args:{"n":1,"q":"x"}}] ToolResults:[]} {Role:user Content: ToolCalls:[] ToolResults:[{ToolCallID:t1 Content:hit IsError:true}]}]}`},
		{name: "unit is not a render", src: `()`, err: "render returned (); expected a string or a map"},
		{name: "number is not a render", src: `42`, err: "render returned i64"},
		{name: "bad role", src: `#{messages: [#{role: "system", content: "x"}]}`, err: `messages[0]: role "system" is not user or assistant`},
		{name: "missing role", src: `#{messages: [#{content: "x"}]}`, err: "messages[0]: role is missing"},
		{name: "system of numbers", src: `#{system: [1]}`, err: "system[0] is i64"},
		{name: "messages not an array", src: `#{messages: "x"}`, err: "messages is string"},
		{name: "tool call without id", src: `#{messages: [#{role: "assistant", tool_calls: [#{name: "x"}]}]}`, err: "tool_calls[0]: id is missing"},
		{name: "tool results on assistant", src: `#{messages: [#{role: "assistant", tool_results: []}]}`, err: "tool_results belong on a user message"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, _, err := rhai.Eval(tc.src, rhai.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := rhai.ParseRender(v)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := renderString(out); normalize(got) != normalize(tc.want) {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// renderString prints a ScriptRender with tool-call arguments as text.
func renderString(r engine.ScriptRender) string {
	var msgs []string
	for _, m := range r.Messages {
		var calls []string
		for _, c := range m.ToolCalls {
			calls = append(calls, fmt.Sprintf("{ID:%s Name:%s Args:%s}", c.ID, c.Name, c.Args))
		}
		msgs = append(msgs, fmt.Sprintf("{Role:%s Content:%s ToolCalls:[%s] ToolResults:%+v}", m.Role, m.Content, strings.Join(calls, " "), m.ToolResults))
	}
	return fmt.Sprintf("{System:%v Messages:[%s]}", r.System, strings.Join(msgs, " "))
}

// normalize makes nil and empty slices print alike.
func normalize(s string) string { return strings.ReplaceAll(s, "[]", "") }

func TestOnWriteAndOnOverflowAnswers(t *testing.T) {
	e := newEngine(t, rhai.Limits{})
	cases := []struct {
		name   string
		src    string
		accept bool
		repl   string
		err    string
	}{
		{name: "true accepts", src: "fn render(ctx) {} fn on_write(ctx) { true }", accept: true},
		{name: "unit accepts", src: "fn render(ctx) {} fn on_write(ctx) { }", accept: true},
		{name: "false drops", src: "fn render(ctx) {} fn on_write(ctx) { false }", accept: false},
		{name: "string replaces", src: "fn render(ctx) {} fn on_write(ctx) { ctx.entry.content.to_upper() }", accept: true, repl: "HELLO"},
		{name: "other type is an error", src: "fn render(ctx) {} fn on_write(ctx) { 1 }", accept: true, err: "on_write returned i64"},
		{name: "script error", src: "fn render(ctx) {}\nfn on_write(ctx) { ctx.nope.x }", accept: true, err: "on_write: unknown property 'x' on a value of type () (line 2, column 29)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := e.Compile("w.rhai", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			repl, accept, err := s.OnWrite(regionCtx(), engine.ScriptEntry{Kind: "text", Content: "hello", Tokens: 2})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || accept != tc.accept {
				t.Fatalf("accept = %v, err = %v", accept, err)
			}
			if (repl != nil) != (tc.repl != "") || (repl != nil && (repl.Content != tc.repl || repl.Kind != "text")) {
				t.Fatalf("replacement = %+v", repl)
			}
		})
	}
	overflow := []struct {
		name, ret, want, err string
	}{
		{name: "sorted and deduplicated", ret: "[2, 0, 2]", want: "[0 2]"},
		{name: "empty", ret: "[]", want: "[]"},
		{name: "out of range", ret: "[3]", err: "index 3 is outside the 3 entries"},
		{name: "negative", ret: "[-1]", err: "index -1 is outside"},
		{name: "not integers", ret: `["0"]`, err: "index [0] is string, not an integer"},
		{name: "not an array", ret: "0", err: "on_overflow returned i64"},
	}
	ctx := regionCtx(engine.ScriptEntry{Content: "a"}, engine.ScriptEntry{Content: "b"}, engine.ScriptEntry{Content: "c"})
	for _, tc := range overflow {
		t.Run("on_overflow "+tc.name, func(t *testing.T) {
			s, err := e.Compile("o.rhai", []byte("fn render(ctx) {} fn on_overflow(ctx) { "+tc.ret+" }"))
			if err != nil {
				t.Fatal(err)
			}
			drop, err := s.OnOverflow(ctx)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || fmt.Sprint(drop) != tc.want {
				t.Fatalf("drop = %v, %v", drop, err)
			}
		})
	}
}

// TestLoadErrors checks the hard load errors a blueprint reports, with the
// seed's and ENGINE.md §9's texts.
func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name, script, want string
	}{
		{name: "syntax error", script: "fn render(ctx) {\n  let = 1;\n}", want: "region 'b': custom region script failed to compile: b.rhai: expected a name after 'let', found '=' (line 2, column 7)"},
		{name: "no render", script: "fn on_write(ctx) { true }", want: "region 'b': custom region script failed to compile: b.rhai: script must define fn render(ctx)"},
		{name: "render arity", script: "fn render(ctx, extra) { \"\" }", want: "fn render must take exactly one parameter (ctx), found 2"},
		{name: "on_write arity", script: "fn render(ctx) { \"\" } fn on_write() { true }", want: "fn on_write must take exactly one parameter (ctx), found 0"},
		{name: "on_overflow arity", script: "fn render(ctx) { \"\" } fn on_overflow(a, b) { [] }", want: "fn on_overflow must take exactly one parameter (ctx), found 2"},
		{name: "unsupported import", script: "import \"x\" as x;\nfn render(ctx) { \"\" }", want: "'import' is not supported: modules are outside the sandboxed Rhai subset (line 1, column 1)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "b.rhai"), []byte(tc.script), 0o644); err != nil {
				t.Fatal(err)
			}
			bp, err := engine.ParseBlueprint("agent.leviath", []byte("[agent]\n[context.regions]\nb = { kind = \"custom\", script = \"b.rhai\" }\n"), dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = engine.New(bp, engine.Options{Window: 200_000, Scripts: newEngine(t, rhai.Limits{})})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %q", err, tc.want)
			}
		})
	}
	t.Run("missing file and escaping path", func(t *testing.T) {
		for script, want := range map[string]string{
			"hooks/none.rhai": "region 'b': cannot read custom region script 'hooks/none.rhai'",
			"../b.rhai":       "must stay inside the blueprint folder",
		} {
			_, err := engine.ParseBlueprint("agent.leviath", []byte("[agent]\n[context.regions]\nb = { kind = \"custom\", script = \""+script+"\" }\n"), t.TempDir())
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want %q", script, err, want)
			}
		}
	})
}

// shape is the content of a request: system texts and messages with their
// blocks. Cache hints are left out on purpose: a custom region's render is
// hinted by persistent, not by the kind it imitates.
func shape(req *engine.Request) string {
	var b strings.Builder
	for _, s := range req.System {
		fmt.Fprintf(&b, "S %q\n", s.Text)
	}
	for _, m := range req.Messages {
		fmt.Fprintf(&b, "M %v\n", m.Role)
		for _, bl := range m.Blocks {
			fmt.Fprintf(&b, "  %v %q %s %s %s %v\n", bl.Type, bl.Text, bl.ToolCallID, bl.ToolName, bl.Args, bl.IsError)
		}
	}
	return b.String()
}

// TestBuiltinsRecreated is seed 001's claim "you could write the built-ins
// yourself": the same random writes go to a built-in region and to a custom
// region running its Rhai recreation, and the requests come out the same.
func TestBuiltinsRecreated(t *testing.T) {
	cases := []struct {
		name, builtin, custom string
		prefixes              bool
	}{
		{name: "pinned", builtin: `r = { kind = "pinned", max_tokens = 1500 }`, custom: `r = { kind = "custom", script = "pinned.rhai", persistent = true, max_tokens = 1500 }`},
		{name: "temporary", builtin: `r = { kind = "temporary", max_tokens = 300 }`, custom: `r = { kind = "custom", script = "temporary.rhai", max_tokens = 300 }`},
		{name: "sliding_window", builtin: `r = { kind = "sliding_window", max_items = 5, max_tokens = 300 }`, custom: `r = { kind = "custom", script = "sliding_window.rhai", max_tokens = 300 }`, prefixes: true},
	}
	words := []string{"alpha", "beta", "gamma", "delta", "ERROR", "ok", "file.go:12", "  padded  ", "ünïcode", "x"}
	for _, tc := range cases {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", tc.name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 0x5eed))
				b := newContext(t, tc.builtin+"\n", "", rhai.Limits{})
				c := newContext(t, tc.custom+"\n", "", rhai.Limits{})
				for i := range 120 {
					var sb strings.Builder
					if tc.prefixes {
						sb.WriteString([]string{"", "", "Assistant: ", "User: ", "  "}[rng.IntN(5)])
					}
					for range 1 + rng.IntN(40) {
						sb.WriteString(words[rng.IntN(len(words))])
						sb.WriteString(" ")
					}
					text := fmt.Sprintf("%d %s", i, sb.String())
					errB, errC := b.Write("r", text), c.Write("r", text)
					if (errB == nil) != (errC == nil) {
						t.Fatalf("write %d: built-in err %v, custom err %v", i, errB, errC)
					}
					if i%7 == 0 {
						b.AddUser(fmt.Sprintf("turn %d", i))
						c.AddUser(fmt.Sprintf("turn %d", i))
					}
					sb1, sc1 := shape(b.Assemble()), shape(c.Assemble())
					if sb1 != sc1 {
						t.Fatalf("after write %d the requests differ\nbuilt-in:\n%s\ncustom:\n%s", i, sb1, sc1)
					}
				}
				if w := hookWarnings(c); len(w) != 0 {
					t.Fatalf("the recreation warned: %v", w)
				}
			})
		}
	}
}

// TestSandboxFallbacks runs runaway hooks through the engine: each is stopped
// by its limit and the engine falls back as seed 001's failure table says,
// with a warning event.
func TestSandboxFallbacks(t *testing.T) {
	lim := rhai.Limits{MaxArraySize: 1000}
	write := func(t *testing.T, script string) (*engine.Context, string) {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "h.rhai"), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		return newContext(t, "r = { kind = \"custom\", script = \"h.rhai\", max_tokens = 50 }\n", dir, lim), dir
	}
	t.Run("render loop falls back to a plain block", func(t *testing.T) {
		c, _ := write(t, "fn render(ctx) { loop {} }")
		if err := c.Write("r", "fact one"); err != nil {
			t.Fatal(err)
		}
		req := c.Assemble()
		if len(req.System) == 0 || req.System[0].Text != "[r]:\nfact one" || req.System[0].Cache != engine.CacheNever {
			t.Fatalf("system = %+v", req.System)
		}
		w := warnings(c)
		if len(w) != 1 || !strings.Contains(w[0], "max_operations") {
			t.Fatalf("warnings = %v", w)
		}
	})
	t.Run("render recursion falls back", func(t *testing.T) {
		c, _ := write(t, "fn f(n) { f(n + 1) } fn render(ctx) { f(0) }")
		c.Write("r", "fact")
		c.Assemble()
		if w := warnings(c); len(w) != 1 || !strings.Contains(w[0], "max_call_depth") {
			t.Fatalf("warnings = %v", w)
		}
	})
	t.Run("render string doubling falls back", func(t *testing.T) {
		c, _ := write(t, "fn render(ctx) { let s = \"ab\"; for i in 0..40 { s += s; } s }")
		c.Write("r", "fact")
		req := c.Assemble()
		if w := warnings(c); len(w) != 1 || !strings.Contains(w[0], "max_string_len") || req.System[0].Text != "[r]:\nfact" {
			t.Fatalf("warnings = %v", w)
		}
	})
	t.Run("on_write array growth accepts the entry unchanged", func(t *testing.T) {
		c, _ := write(t, "fn render(ctx) { \"\" } fn on_write(ctx) { let a = [1]; loop { a += a; } }")
		if err := c.Write("r", "kept as is"); err != nil {
			t.Fatal(err)
		}
		if text, _ := c.RegionText("r"); !strings.Contains(text, "kept as is") {
			t.Fatalf("region = %q", text)
		}
		if w := warnings(c); len(w) != 1 || !strings.Contains(w[0], "max_array_size") || !strings.Contains(w[0], "accepted unchanged") {
			t.Fatalf("warnings = %v", w)
		}
	})
	t.Run("on_overflow that frees too little is made up oldest-first", func(t *testing.T) {
		c, _ := write(t, "fn render(ctx) { \"\" } fn on_overflow(ctx) { [ctx.entries.len() - 1] }")
		for _, s := range []string{strings.Repeat("a", 80), strings.Repeat("b", 40), strings.Repeat("c", 160)} {
			if err := c.Write("r", s); err != nil {
				t.Fatal(err)
			}
		}
		// 20 + 10 + 40 tokens in a 50-token region: 20 must go. The hook
		// drops the newest stored entry (b, 10 tokens); the rest comes from
		// the oldest (a).
		text, _ := c.RegionText("r")
		if strings.Contains(text, "aaaa") || strings.Contains(text, "bbbb") || !strings.Contains(text, "cccc") {
			t.Fatalf("region = %q", text)
		}
		if w := hookWarnings(c); len(w) != 0 {
			t.Fatalf("warnings = %v", w)
		}
	})
	t.Run("on_overflow loop falls back to oldest-first", func(t *testing.T) {
		c, _ := write(t, "fn render(ctx) { \"\" } fn on_overflow(ctx) { loop {} }")
		for _, s := range []string{strings.Repeat("a", 80), strings.Repeat("b", 80), strings.Repeat("c", 80)} {
			if err := c.Write("r", s); err != nil {
				t.Fatal(err)
			}
		}
		text, _ := c.RegionText("r")
		if strings.Contains(text, "aaaa") || !strings.Contains(text, "cccc") {
			t.Fatalf("region = %q", text)
		}
		w := warnings(c)
		if len(w) == 0 || !strings.Contains(w[0], "max_operations") || !strings.Contains(w[0], "oldest-first") {
			t.Fatalf("warnings = %v", w)
		}
	})
}

// TestUnpairedToolBlocksStripped renders a tool call with no result and a
// result with no call; the engine must not send either.
func TestUnpairedToolBlocksStripped(t *testing.T) {
	dir := t.TempDir()
	script := `fn render(ctx) {
    #{ messages: [
        #{ role: "assistant", content: "thinking", tool_calls: [#{ id: "lonely", name: "grep", arguments: #{ q: "x" } }, #{ id: "paired", name: "ls" }] },
        #{ role: "user", tool_results: [#{ tool_call_id: "paired", content: "a b" }, #{ tool_call_id: "ghost", content: "?" }] },
    ] }
}`
	if err := os.WriteFile(filepath.Join(dir, "t.rhai"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newContext(t, "r = { kind = \"custom\", script = \"t.rhai\", max_tokens = 500 }\n", dir, rhai.Limits{})
	c.AddUser("hi")
	got := shape(c.Assemble())
	if strings.Contains(got, "lonely") || strings.Contains(got, "ghost") || !strings.Contains(got, "paired") {
		t.Fatalf("request:\n%s", got)
	}
}

func TestEvalSeed(t *testing.T) {
	e := newEngine(t, rhai.Limits{})
	got, err := e.EvalSeed("seed.rhai", []byte("let items = [\"a\", \"b\"];\nitems.map(|x| `- ${x}`).join(\"\\n\")"))
	if err != nil || got != "- a\n- b" {
		t.Fatalf("EvalSeed = %q, %v", got, err)
	}
	if _, err := e.EvalSeed("bad.rhai", []byte("loop {}")); err == nil || !strings.Contains(err.Error(), "bad.rhai") || rhai.LimitOf(err) != rhai.LimitOperations {
		t.Fatalf("runaway seed: %v", err)
	}
}

func TestPrintIsCapturedNotPrinted(t *testing.T) {
	s := compileFileSrc(t, "fn render(ctx) { print(\"rendering \" + ctx.entries.len()); debug(ctx.region.name); \"\" }")
	if _, err := s.Render(regionCtx()); err != nil {
		t.Fatal(err)
	}
	out := s.(*rhai.RegionScript).DrainOutput()
	want := []string{"render print (line 1, column 18): rendering 0", `render debug (line 1, column 59): "brain"`}
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Fatalf("output = %q\nwant %q", out, want)
	}
	if again := s.(*rhai.RegionScript).DrainOutput(); len(again) != 0 {
		t.Fatalf("drained twice: %v", again)
	}
}

func compileFileSrc(t testing.TB, src string) engine.RegionScript {
	t.Helper()
	s, err := newEngine(t, rhai.Limits{}).Compile("inline.rhai", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheckBlueprint(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"good.rhai":     "fn render(ctx) { \"\" } fn render() { 1 }",
		"broken.rhai":   "fn render(ctx) {\n  let x = ;\n}",
		"norender.rhai": "fn on_write(ctx) { true }",
		"arity.rhai":    "fn render(ctx) { \"\" } fn on_overflow() { [] }",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bp, err := engine.ParseBlueprint("agent.leviath", []byte(`[agent]
[context.regions]
a = { kind = "custom", script = "good.rhai" }
b = { kind = "custom", script = "broken.rhai" }
c = { kind = "custom", script = "norender.rhai" }
[stages.s.context.regions]
d = { kind = "custom", script = "arity.rhai" }
`), dir)
	if err != nil {
		t.Fatal(err)
	}
	errs := newEngine(t, rhai.Limits{}).CheckBlueprint(bp)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		"region 'b': custom region script failed to compile: broken.rhai: unexpected ';': expected an expression (line 2, column 11)",
		"region 'c': custom region script failed to compile: norender.rhai: script must define fn render(ctx)",
		"region 'd': custom region script failed to compile: arity.rhai: fn on_overflow must take exactly one parameter (ctx), found 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The script vanishing after load is reported, not a panic.
	os.Remove(filepath.Join(dir, "good.rhai"))
	errs = newEngine(t, rhai.Limits{}).CheckBlueprint(bp)
	if len(errs) != 4 || !strings.Contains(errs[0].Error(), "region 'a': cannot read custom region script 'good.rhai'") {
		t.Fatalf("errs = %v", errs)
	}
}

// TestRealisticScripts runs region scripts written the way users write them.
func TestRealisticScripts(t *testing.T) {
	entries := []engine.ScriptEntry{
		{Kind: "user_message", Content: "please fix the build", Tokens: 5},
		{Kind: "assistant_turn", Content: "looking", Tokens: 3, ToolCalls: []engine.ToolCall{{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"main.go"}`)}, {ID: "c2", Name: "grep", Args: json.RawMessage(`{"q":"TODO"}`)}}},
		{Kind: "tool_result", Content: "package main\nfunc main() {}", Tokens: 300, ToolCallID: "c1", ToolName: "read_file"},
		{Kind: "tool_result", Content: "ERROR: grep failed", Tokens: 4, ToolCallID: "c2", ToolName: "grep", IsError: true},
		{Kind: "text", Content: "note: build uses go 1.26", Tokens: 200},
	}
	ctx := regionCtx(entries...)
	ctx.StageName = "fix"
	t.Run("scored table render", func(t *testing.T) {
		out, err := compileFile(t, "scored_table.rhai").Render(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := "## brain (5 entries, stage fix)\n| # | kind | tokens | preview |\n|---|---|---|---|\n" +
			"| 0 | user_message | 5 | please fix the build |\n" +
			"| 1 | assistant_turn | 3 | looking |\n" +
			"| 2 | tool_result | 300 | package main func ma… |\n" +
			"| 3 | tool_result | 4 | ERROR: grep failed |\n" +
			"| 4 | text | 200 | note: build uses go … |"
		if len(out.System) != 1 || out.System[0] != want {
			t.Fatalf("render:\n%s\nwant:\n%s", out.System, want)
		}
	})
	t.Run("scored table overflow drops the weakest", func(t *testing.T) {
		c := ctx
		c.NeededTokens = 350
		drop, err := compileFile(t, "scored_table.rhai").OnOverflow(c)
		// scores: 10, 10, -3, 5, -2 → the big tool result first (-3), then the note (-2).
		if err != nil || fmt.Sprint(drop) != "[2 4]" {
			t.Fatalf("drop = %v, %v", drop, err)
		}
	})
	t.Run("typed transcript", func(t *testing.T) {
		out, err := compileFile(t, "transcript.rhai").Render(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := renderString(out)
		want := `{System:[Transcript of brain] Messages:[{Role:user Content:please fix the build ToolCalls:[] ToolResults:[]} ` +
			`{Role:assistant Content:looking ToolCalls:[{ID:c1 Name:read_file Args:{"path":"main.go"}} {ID:c2 Name:grep Args:{"q":"TODO"}}] ToolResults:[]} ` +
			`{Role:user Content: ToolCalls:[] ToolResults:[{ToolCallID:c1 Content:package main
func main() {} IsError:false} {ToolCallID:c2 Content:ERROR: grep failed IsError:true}]} ` +
			`{Role:user Content:note: build uses go 1.26 ToolCalls:[] ToolResults:[]}]}`
		if normalize(got) != normalize(want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}

// TestEntryReuseIsSafe: entries are reused across calls (copy-on-write), so
// a hook that changes its ctx must not change what the next call sees.
func TestEntryReuseIsSafe(t *testing.T) {
	s := compileFileSrc(t, `fn render(ctx) {
    let e = ctx.entries[0];
    let seen = e.content + "/" + e.tool_calls.len() + "/" + e.tool_calls[0].arguments.path;
    ctx.entries[0].content = "changed";
    ctx.entries[0].tool_calls.push(#{});
    ctx.entries[0].tool_calls[0].arguments.path = "elsewhere";
    for x in ctx.entries { x.content = "loop"; x.tool_calls.clear(); }
    seen
}`)
	ctx := regionCtx(engine.ScriptEntry{Kind: "assistant_turn", Content: "orig", Tokens: 1, Timestamp: 1,
		ToolCalls: []engine.ToolCall{{ID: "c", Name: "read_file", Args: json.RawMessage(`{"path":"a.go"}`)}}})
	for i := range 3 {
		out, err := s.Render(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.System) != 1 || out.System[0] != "orig/1/a.go" {
			t.Fatalf("call %d saw %v", i, out.System)
		}
	}
	if ctx.Entries[0].Content != "orig" || string(ctx.Entries[0].ToolCalls[0].Args) != `{"path":"a.go"}` {
		t.Fatalf("the engine's entry changed: %+v", ctx.Entries[0])
	}
}

// TestPersistentVersusTemporary: persistent = true renders with cache hint
// Always and is never evicted; persistent = false renders UntilChanged and
// gives way in the window cascade (seed 001's table).
func TestPersistentVersusTemporary(t *testing.T) {
	regions := `p = { kind = "custom", script = "pinned.rhai", persistent = true, max_tokens = 1000 }
t = { kind = "custom", script = "temporary.rhai", max_tokens = 19000 }
`
	bp, err := engine.ParseBlueprint("agent.leviath", []byte("[agent]\n[context.regions]\n"+regions), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.New(bp, engine.Options{Window: 20_000, Scripts: newEngine(t, rhai.Limits{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write("p", "the plan"); err != nil {
		t.Fatal(err)
	}
	c.AddUser("go")
	for i := range 40 {
		if err := c.Write("t", fmt.Sprintf("note %d %s", i, strings.Repeat("z", 2000))); err != nil {
			t.Fatal(err)
		}
	}
	req := c.Assemble()
	hints := map[string]engine.CacheHint{}
	for _, b := range req.System {
		hints[b.Region] = b.Cache
	}
	if hints["p"] != engine.CacheAlways || hints["t"] != engine.CacheUntilChanged {
		t.Fatalf("cache hints %v", hints)
	}
	if text, _ := c.RegionText("p"); text != "the plan" {
		t.Fatalf("persistent region changed: %q", text)
	}
	evicted := 0
	for _, e := range c.Drain() {
		if e.Region == "t" && e.Kind == engine.EventEvict {
			evicted += e.Entries
		}
	}
	tText, _ := c.RegionText("t")
	if evicted == 0 || strings.Contains(tText, "note 0 ") || !strings.Contains(tText, "note 39 ") {
		t.Fatalf("temporary-like region: %d evicted, holds note 0: %v, note 39: %v", evicted, strings.Contains(tText, "note 0 "), strings.Contains(tText, "note 39 "))
	}
	if c.Tokens() > 20_000 {
		t.Fatalf("window over its size: %d", c.Tokens())
	}
}

// TestBrainScriptIsTheSeeds: testdata/brain.rhai is seed 001's "A complete
// region" script, byte for byte, so the tests above run it unchanged.
func TestBrainScriptIsTheSeeds(t *testing.T) {
	seeds, err := filepath.Glob("../../../shared/seeds/001_*.txt")
	if err != nil || len(seeds) != 1 {
		t.Skipf("seed 001 not found beside the repository (%v)", err)
	}
	doc, err := os.ReadFile(seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```rhai\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("seed 001 has no rhai block")
	}
	ours, err := os.ReadFile(filepath.Join("testdata", "brain.rhai"))
	if err != nil {
		t.Fatal(err)
	}
	if string(ours) != block {
		t.Fatal("testdata/brain.rhai differs from seed 001's script")
	}
}

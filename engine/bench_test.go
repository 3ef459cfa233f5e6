package engine

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// filledContext loads coder at a window and fills every region to about half
// of its budget (conversation to max_items), so the window's content scales
// with the window.
func filledContext(b *testing.B, window int) *Context {
	bp, err := LoadBlueprint(filepath.Join(realBlueprints, "coder.leviath"))
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(bp, Options{Window: window, Task: "fix the race in checkout", Inputs: map[string]string{"constraints": "none"}})
	if err != nil {
		b.Fatal(err)
	}
	line := "func handler(w http.ResponseWriter, r *http.Request) { serve(w, r) }\n"
	for _, r := range c.regions {
		if r.kind == KindSlidingWindow || r.kind == KindChecklist || r.name == StageInstructions {
			continue
		}
		goal := r.max / 2
		if r.kind == KindCompacting {
			goal = min(goal, r.threshold*3/4)
		}
		size := max(min(goal/8, 1500), 1)
		for i := 0; r.tokens+size <= goal; i++ {
			if err := c.Write(r.name, fmt.Sprintf("entry %d\n", i)+strings.Repeat(line, size*4/len(line)+1)[:size*4-10]); err != nil {
				break
			}
		}
	}
	conv := c.byName["conversation"]
	per := max(conv.max/2/conv.def.MaxItems, 1)
	for i := 0; i < conv.def.MaxItems; i++ {
		c.AddUser(fmt.Sprintf("turn %d ", i) + strings.Repeat("w", per*4-10))
	}
	c.Assemble()
	c.Drain()
	return c
}

// BenchmarkAssemble measures one assembly after the same change (one user
// and one assistant turn) at windows from 8K to 2M. The goal: a 2M window
// costs no more than 1.5x an 8K window, because only what changed is
// rendered again.
func BenchmarkAssemble(b *testing.B) {
	for _, w := range []int{8192, 32768, 131072, 524288, 2097152} {
		b.Run(fmt.Sprintf("window=%d", w), func(b *testing.B) {
			c := filledContext(b, w)
			b.ReportMetric(float64(c.Tokens()), "ctx-tokens")
			i := 0
			for b.Loop() {
				i++
				c.AddUser(fmt.Sprintf("question %d", i))
				c.AddAssistant(fmt.Sprintf("answer %d", i), nil)
				req := c.Assemble()
				if req.Tokens == 0 {
					b.Fatal("empty request")
				}
			}
		})
	}
}

// BenchmarkAssembleRegionChange is the same with a write into a grows
// region: only its last chunk is rendered again.
func BenchmarkAssembleRegionChange(b *testing.B) {
	for _, w := range []int{8192, 2097152} {
		b.Run(fmt.Sprintf("window=%d", w), func(b *testing.B) {
			c := filledContext(b, w)
			i := 0
			for b.Loop() {
				i++
				c.CallTool("context_append", []byte(fmt.Sprintf(`{"region":"discovery","content":"fact %d"}`, i)))
				c.Assemble()
				if i%50 == 0 {
					c.CallTool("context_write", []byte(`{"region":"discovery","content":"reset"}`))
				}
			}
		})
	}
}

// BenchmarkAgentStep is one simulated agent step on coder at 200K: an
// assistant turn with a file read routed into codebase (compacting at its
// threshold), a test run into test_results, and the request assembled.
func BenchmarkAgentStep(b *testing.B) {
	c := filledContext(b, 200_000)
	file := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { serve(w, r) }\n", 60)
	i := 0
	for b.Loop() {
		i++
		id1, id2 := fmt.Sprint("r", i), fmt.Sprint("b", i)
		c.AddAssistant("reading", []ToolCall{{ID: id1, Name: "read_file", Args: []byte(`{"path":"a.go"}`)}, {ID: id2, Name: "bash", Args: []byte(`{"command":"go test"}`)}})
		c.AddToolResult(ToolResult{CallID: id1, Tool: "read_file", Content: file})
		c.AddToolResult(ToolResult{CallID: id2, Tool: "bash", Content: "ok  \tpkg\t0.1s\n"})
		c.Assemble()
		c.Drain()
	}
}

// BenchmarkAssembleGrowsEviction is a full grows region that rolls off its
// oldest entry at nearly every write (a tool log), with a request after each:
// the chunks after the first cut that meets an old chunk start are kept.
func BenchmarkAssembleGrowsEviction(b *testing.B) {
	const layout = `[agent]
[context.regions]
task = { kind = "pinned", max_tokens = 100 }
log = { kind = "clearable", max_tokens = 60000, volatility = "grows" }
`
	bp, err := ParseBlueprint("evict.leviath", []byte(layout), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(bp, Options{Window: 200_000, Task: "the task"})
	if err != nil {
		b.Fatal(err)
	}
	sizes := []int{300, 1200, 9000, 600, 4000, 150, 2500} // bytes; some entries close a chunk alone
	i := 0
	write := func() {
		i++
		if err := c.Write("log", fmt.Sprintf("entry %d\n", i)+strings.Repeat("x", sizes[i%len(sizes)])); err != nil {
			b.Fatal(err)
		}
	}
	for range 200 {
		write()
	}
	c.Assemble()
	for b.Loop() {
		write()
		if c.Assemble().Tokens == 0 {
			b.Fatal("empty request")
		}
	}
}

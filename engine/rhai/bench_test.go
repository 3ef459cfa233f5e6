package rhai_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/engine"
)

// benchEntries is a 50-entry region of mixed kinds, about 200 bytes each.
func benchEntries() engine.ScriptContext {
	ents := make([]engine.ScriptEntry, 50)
	for i := range ents {
		e := engine.ScriptEntry{Kind: "text", Content: fmt.Sprintf("entry %d: %s", i, strings.Repeat("lorem ipsum ", 16)), Tokens: 50, Timestamp: int64(i)}
		switch i % 3 {
		case 1:
			e.Kind, e.ToolCallID, e.ToolName = "tool_result", fmt.Sprintf("c%d", i), "grep"
			if i%2 == 0 {
				e.Content = "ERROR " + e.Content
			}
		case 2:
			e.Kind = "assistant_turn"
			e.ToolCalls = []engine.ToolCall{{ID: fmt.Sprintf("c%d", i+1), Name: "grep", Args: []byte(`{"q":"x","path":"."}`)}}
		}
		ents[i] = e
	}
	ctx := regionCtx(ents...)
	ctx.Region.Budget = 4000
	return ctx
}

// BenchmarkRender is one render of seed 001's brain.rhai over a 50-entry region.
func BenchmarkRender(b *testing.B) {
	s := compileFile(b, "brain.rhai")
	ctx := benchEntries()
	b.ReportAllocs()
	start := cpuNanos()
	for b.Loop() {
		if _, err := s.Render(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkOnWrite is one on_write of brain.rhai (a successful tool result trimmed).
func BenchmarkOnWrite(b *testing.B) {
	s := compileFile(b, "brain.rhai")
	ctx := benchEntries()
	e := engine.ScriptEntry{Kind: "tool_result", Content: "ok: 3 files\nfile a\nfile b", Tokens: 7}
	b.ReportAllocs()
	start := cpuNanos()
	for b.Loop() {
		if _, _, err := s.OnWrite(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkOnOverflow is one on_overflow of brain.rhai over a 50-entry region.
func BenchmarkOnOverflow(b *testing.B) {
	s := compileFile(b, "brain.rhai")
	ctx := benchEntries()
	ctx.NeededTokens = 500
	b.ReportAllocs()
	start := cpuNanos()
	for b.Loop() {
		if _, err := s.OnOverflow(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// reportCPU adds CPU time per op (includes the garbage collector's share).
func reportCPU(b *testing.B, start int64) {
	if end := cpuNanos(); end > 0 && b.N > 0 {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkInterpreterLoop measures raw evaluation: a 10,000-iteration loop
// with an addition and a comparison per iteration.
func BenchmarkInterpreterLoop(b *testing.B) {
	s := compileFileSrc(b, "fn render(ctx) { let s = 0; for i in 0..10000 { if i % 3 == 0 { s += i; } } s.to_string() }")
	b.ReportAllocs()
	start := cpuNanos()
	for b.Loop() {
		if _, err := s.Render(engine.ScriptContext{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

package engine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeWorkload is the write side of the simulator's random workload on
// coder at 200K: each step an assistant turn reading a file (200..8200
// bytes, a third of them with a fact line) routed into codebase, which
// compacts at its threshold; a user turn now and then.
type writeWorkload struct {
	contents []string
	users    []int // steps that are user turns
}

func newWriteWorkload(steps int, real bool) *writeWorkload {
	rng := rand.New(rand.NewPCG(1, 7))
	w := &writeWorkload{}
	filler := strings.Repeat("~", 8200)
	words := []string{"func", "return", "err", "nil", "if", "for", "range", "ctx", "c.total", "r.entries", "x_1", "handler", "Serve", "42", "path/to/file.go", "// note:", "fix", "{", "}", ":=", "=", "&&"}
	for i := range steps {
		if rng.IntN(5) == 0 {
			w.users = append(w.users, i)
			w.contents = append(w.contents, fmt.Sprintf("remember fact-%d-%x", i, rng.Uint32()))
			continue
		}
		size := 200 + rng.IntN(8000)
		var b strings.Builder
		if real {
			for b.Len() < size {
				n := 2 + rng.IntN(10)
				b.WriteString(strings.Repeat("\t", rng.IntN(3)))
				for j := range n {
					if j > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(words[rng.IntN(len(words))])
				}
				if rng.IntN(7) == 0 {
					fmt.Fprintf(&b, " %d", rng.IntN(1000))
				}
				b.WriteByte('\n')
			}
		} else {
			fact := ""
			if rng.IntN(3) == 0 {
				fact = fmt.Sprintf("value-%d-%x\n", i, rng.Uint32())
			}
			pad := max(0, size-len(fact)-2)
			b.WriteString(filler[:pad/2])
			b.WriteByte('\n')
			b.WriteString(fact)
			b.WriteString(filler[:pad-pad/2])
			b.WriteByte('\n')
		}
		w.contents = append(w.contents, b.String())
	}
	return w
}

func (w *writeWorkload) run(b *testing.B, assemble bool) {
	bp, err := LoadBlueprint(filepath.Join(realBlueprints, "coder.leviath"))
	if err != nil {
		b.Fatal(err)
	}
	calls := make([]ToolCall, 1)
	cpu0 := cpuSeconds()
	defer func() {
		// CPU time (GC included) is steadier than wall time on a shared machine.
		if cpu := cpuSeconds() - cpu0; cpu > 0 {
			b.ReportMetric(cpu*1e3/float64(b.N), "cpu-ms/op")
		}
	}()
	for b.Loop() {
		c, err := New(bp, Options{Window: 200_000, Task: "fix the race in checkout"})
		if err != nil {
			b.Fatal(err)
		}
		u := 0
		for i, content := range w.contents {
			if u < len(w.users) && w.users[u] == i {
				u++
				c.AddUser(content)
				continue
			}
			if assemble {
				c.Assemble()
			}
			id := fmt.Sprint("c", i)
			calls[0] = ToolCall{ID: id, Name: "read_file"}
			c.AddAssistant("", calls)
			if _, err := c.AddToolResult(ToolResult{CallID: id, Tool: "read_file", Content: content}); err != nil {
				b.Fatal(err)
			}
			c.Drain()
		}
	}
}

// BenchmarkWrites is the engine's write path over a run of the simulator's
// random workload (5,000 steps), with stand-in content (long filler lines)
// and with text of short lines.
func BenchmarkWrites(b *testing.B) {
	for _, real := range []bool{false, true} {
		w := newWriteWorkload(5000, real)
		for _, asm := range []bool{false, true} {
			b.Run(fmt.Sprintf("text=%v/assemble=%v", real, asm), func(b *testing.B) {
				b.ReportAllocs()
				w.run(b, asm)
			})
		}
	}
}

// BenchmarkLineScore scores the lines of Go source.
func BenchmarkLineScore(b *testing.B) {
	src, err := os.ReadFile("assemble.go")
	if err != nil {
		b.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(src)) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	b.SetBytes(int64(len(src)))
	var lower []byte
	for b.Loop() {
		for _, l := range lines {
			_, lower = lineScore(l, lower)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
}

package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func sample() (Header, []Event) {
	h := Header{Source: "synthetic:test", Workload: "tiny", Seed: 7, Meta: map[string]string{"b": "2", "a": "1"}}
	evs := []Event{
		{Kind: KindSystem, ID: "s", Text: "You are an agent."},
		{Kind: KindTask, ID: "t", Text: "Fix the bug."},
		{Kind: KindAssistant, ID: "a1", T: 1.5, ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", RawName: "Read", Args: json.RawMessage(`{"path":"main.go"}`)}}, OutputTokens: 30},
		{Kind: KindToolResult, ID: "r1", T: 2, Tool: "read_file", RawTool: "Read", CallID: "c1", Size: 4096, Facts: []Fact{{ID: "f1", Text: "port = 8443"}}, Latency: 0.4},
		{Kind: KindContextOp, ID: "o1", T: 3, Op: &ContextOp{Tool: "context_write", Args: json.RawMessage(`{"region":"notes","content":"x"}`)}},
		{Kind: KindStage, ID: "st", T: 4, Stage: &Stage{To: "review", Transition: "done"}},
		{Kind: KindCompaction, ID: "k", T: 5, Compaction: &Compaction{Trigger: "auto", PreTokens: 1000, Summary: "s", Forgot: []string{"a1"}}},
		{Kind: KindProbe, ID: "p", T: 6, Probe: &Probe{Fact: "f1", Text: "port = 8443", Source: "r1", Refetch: &ToolCall{ID: "c2", Name: "read_file"}}},
		{Kind: KindUsage, ID: "u", T: 6, Usage: &Usage{Prompt: 10, Uncached: 4, CacheRead: 5, CacheWrite: 1, Output: 3,
			Request: &Request{System: []Block{{Type: "text", Text: "sys", Cache: "5m"}}, Messages: []Message{{Role: "user", Blocks: []Block{{Type: "text", Text: "hi"}}}}}}},
		{Kind: KindAssistant, ID: "a2", T: 7, Text: "Done."},
	}
	return h, evs
}

func write(t *testing.T, h Header, evs []Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	h, evs := sample()
	data := write(t, h, evs)
	r := NewReader(bytes.NewReader(data), "x.jsonl")
	got, err := r.Header()
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != Schema || got.Version != Version || got.Workload != "tiny" || got.Meta["a"] != "1" {
		t.Errorf("header %+v", got)
	}
	var back []Event
	for r.Scan() {
		back = append(back, *r.Event())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(back) != len(evs) {
		t.Fatalf("%d events, want %d", len(back), len(evs))
	}
	// Writing what was read gives the same bytes: the format is stable.
	if again := write(t, got, back); !bytes.Equal(again, data) {
		t.Errorf("rewrite differs:\n%s\n%s", data, again)
	}
}

func TestReaderErrors(t *testing.T) {
	hdr := `{"schema":"ctxsim-trace","version":1,"source":"x"}`
	cases := []struct {
		name, in string
		line     int
		mention  string
	}{
		{"empty", "", 1, "empty trace"},
		{"bad schema", `{"schema":"other","version":1,"source":"x"}`, 1, "schema"},
		{"newer version", `{"schema":"ctxsim-trace","version":99,"source":"x"}`, 1, "version 99"},
		{"unknown header field", `{"schema":"ctxsim-trace","version":1,"source":"x","colour":1}`, 1, "colour"},
		{"bad json", hdr + "\n{", 2, "event"},
		{"unknown field", hdr + "\n" + `{"kind":"user","id":"u","t":0,"txt":"x"}`, 2, "txt"},
		{"missing id", hdr + "\n" + `{"kind":"user","t":0}`, 2, "missing id"},
		{"unknown kind", hdr + "\n" + `{"kind":"shout","id":"u","t":0}`, 2, "unknown kind"},
		{"duplicate id", hdr + "\n" + `{"kind":"user","id":"u","t":0}` + "\n\n" + `{"kind":"user","id":"u","t":1}`, 4, "line 2"},
		{"time goes back", hdr + "\n" + `{"kind":"user","id":"u","t":5}` + "\n" + `{"kind":"user","id":"v","t":1}`, 3, "before"},
		{"tool result without call", hdr + "\n" + `{"kind":"tool_result","id":"r","t":0,"tool":"bash"}`, 2, "call_id"},
		{"size over the limit", hdr + "\n" + `{"kind":"user","id":"u","t":0,"size":1099511627776}`, 2, "1073741824-byte limit"},
		{"text and size", hdr + "\n" + `{"kind":"user","id":"u","t":0,"text":"x","size":3}`, 2, "both text and size"},
		{"usage that does not add up", hdr + "\n" + `{"kind":"usage","id":"u","t":0,"usage":{"prompt":5,"uncached":1,"cache_read":1,"cache_write":1,"output":0}}`, 2, "prompt 5"},
		{"probe without text", hdr + "\n" + `{"kind":"probe","id":"p","t":0,"probe":{"fact":"f","text":"","source":"x"}}`, 2, "probe.text"},
		{"fact without text", hdr + "\n" + `{"kind":"user","id":"u","t":0,"facts":[{"id":"f"}]}`, 2, "facts[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(c.in), "bad.jsonl")
			for r.Scan() {
			}
			err := r.Err()
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a *ParseError", err)
			}
			if pe.File != "bad.jsonl" || pe.Line != c.line {
				t.Errorf("position %s:%d, want bad.jsonl:%d", pe.File, pe.Line, c.line)
			}
			if !strings.Contains(err.Error(), c.mention) || !strings.HasPrefix(err.Error(), "bad.jsonl:") {
				t.Errorf("error %q, want it to start with the file and mention %q", err, c.mention)
			}
		})
	}
}

func TestWriterRefusesInvalid(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Source: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Event{Kind: KindUser}); err == nil || !strings.Contains(err.Error(), "missing id") {
		t.Errorf("error %v", err)
	}
}

func TestBytes(t *testing.T) {
	if n := (&Event{Text: "abcd"}).Bytes(); n != 4 {
		t.Errorf("text: %d", n)
	}
	if n := (&Event{Size: 99}).Bytes(); n != 99 {
		t.Errorf("size: %d", n)
	}
}

func FuzzReader(f *testing.F) {
	h, evs := sample()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, h)
	for i := range evs {
		_ = w.Write(&evs[i])
	}
	_ = w.Flush()
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema":"ctxsim-trace","version":1,"source":"x"}` + "\n" + `{"kind":"user","id":"u","t":0}`))
	f.Add([]byte("{}\n{}"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz")
		n := 0
		for r.Scan() {
			ev := r.Event()
			if err := ev.Validate(); err != nil {
				t.Fatalf("Scan returned an invalid event: %v", err)
			}
			n++
		}
		if err := r.Err(); err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v is not a positioned ParseError", err)
			}
		}
	})
}

// The streaming reader, in the manner of bufio.Scanner.
func ExampleReader() {
	in := `{"schema":"ctxsim-trace","version":1,"source":"example"}
{"kind":"task","id":"t","t":0,"text":"Fix the bug."}
{"kind":"tool_result","id":"r1","t":2,"tool":"read_file","call_id":"c1","size":4096,"facts":[{"id":"f1","text":"port = 8443"}]}
`
	r := NewReader(strings.NewReader(in), "example.jsonl")
	for r.Scan() {
		ev := r.Event()
		fmt.Printf("line %d: %s %s, %d bytes, %d facts\n", r.Line(), ev.Kind, ev.ID, ev.Bytes(), len(ev.Facts))
	}
	if err := r.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// line 2: task t, 12 bytes, 0 facts
	// line 3: tool_result r1, 4096 bytes, 1 facts
}

// The example in README.md is a valid trace.
func TestReadmeExample(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```json\n")
	if !ok {
		t.Fatal("README.md has no json example")
	}
	example, _, _ := strings.Cut(rest, "```")
	r := NewReader(strings.NewReader(example), "README.md")
	n := 0
	for r.Scan() {
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 8 {
		t.Errorf("%d events, want 8", n)
	}
}

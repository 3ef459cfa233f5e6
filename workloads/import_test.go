package workloads

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads/importers"
)

// samples is the shared directory of real recorded sessions.
const samples = "../../shared/traces"

func sampleFiles(t testing.TB) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(samples, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range all {
		if filepath.Base(p) != "PROVENANCE.md" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Skip("no samples in " + samples)
	}
	return out
}

// Converting, reading back and converting again gives the same bytes, for
// every real sample; the canonical trace also passes the reader's checks.
func TestImportRoundTrip(t *testing.T) {
	for _, p := range sampleFiles(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			var first bytes.Buffer
			if _, err := Import(p, ImportOptions{Strict: true}, &first); err != nil {
				t.Fatal(err)
			}
			canon := filepath.Join(t.TempDir(), "trace.jsonl")
			if err := os.WriteFile(canon, first.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var second bytes.Buffer
			st, err := Import(canon, ImportOptions{Strict: true}, &second)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Bytes(), second.Bytes()) {
				t.Fatalf("second conversion differs (%d vs %d bytes)", first.Len(), second.Len())
			}
			if st.Format == "" || st.Events == 0 {
				t.Errorf("stats of the canonical trace: %+v", st)
			}
		})
	}
}

// OpenTrace serves a recorded file and its canonical conversion alike.
func TestOpenTraceRecordedAndCanonical(t *testing.T) {
	p := filepath.Join(samples, "cc-spotter-4d5611e5.jsonl")
	if _, err := os.Stat(p); err != nil {
		t.Skip(err)
	}
	read := func(path string) (trace.Header, []string) {
		src, err := OpenTrace(path, ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		h, err := src.Header()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for src.Scan() {
			ids = append(ids, string(src.Event().Kind)+src.Event().ID)
		}
		if err := src.Err(); err != nil {
			t.Fatal(err)
		}
		return h, ids
	}
	h1, ids1 := read(p)
	var buf bytes.Buffer
	if _, err := Import(p, ImportOptions{}, &buf); err != nil {
		t.Fatal(err)
	}
	canon := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(canon, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	h2, ids2 := read(canon)
	if h1.Source != "claude-code" || h2.Source != h1.Source || h1.Model != "claude-opus-4-6" || h1.Window != 200_000 {
		t.Errorf("headers: %+v / %+v", h1, h2)
	}
	if len(ids1) != len(ids2) || len(ids1) == 0 {
		t.Fatalf("%d events recorded vs %d canonical", len(ids1), len(ids2))
	}
	for i := range ids1 {
		if ids1[i] != ids2[i] {
			t.Fatalf("event %d: %s vs %s", i, ids1[i], ids2[i])
		}
	}
}

func TestTraceStats(t *testing.T) {
	p := filepath.Join(samples, "swe-gpt4-pydicom-1458.traj")
	if _, err := os.Stat(p); err != nil {
		t.Skip(err)
	}
	c, err := TraceStats(p, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// jq '.trajectory|length' gives 12 steps, one action each; no usage, no times.
	if c.Format != "swe-agent" || c.ToolCalls != 12 || c.AssistantTurns != 12 || c.UsageRecords != 0 || c.FirstTime != "" {
		t.Errorf("stats = %+v", c)
	}
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "x.jsonl")
	if err := os.WriteFile(bad, []byte(`{"foo":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(bad, ImportOptions{}, &bytes.Buffer{}); err == nil {
		t.Errorf("an unknown format imported without error")
	}
	if _, err := Import(filepath.Join(dir, "missing.jsonl"), ImportOptions{}, &bytes.Buffer{}); err == nil {
		t.Errorf("a missing file imported without error")
	}
	if _, err := OpenTrace(bad, ImportOptions{Format: importers.FormatCodex}); err != nil {
		t.Errorf("forced format on a harmless line: %v", err)
	}
}

// BenchmarkImport measures import throughput (MB/s) on the largest sample.
func BenchmarkImport(b *testing.B) {
	var largest string
	var size int64
	for _, p := range sampleFiles(b) {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			largest, size = p, fi.Size()
		}
	}
	data, err := os.ReadFile(largest)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(filepath.Base(largest), func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, _, err := importers.Import(bytes.NewReader(data), largest, importers.Options{}, func(*trace.Event) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}

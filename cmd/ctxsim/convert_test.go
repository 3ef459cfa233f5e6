package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sharedTraces = "../../../shared/traces"

func recordedSamples(t *testing.T) []string {
	t.Helper()
	all, _ := filepath.Glob(filepath.Join(sharedTraces, "*"))
	var out []string
	for _, p := range all {
		if filepath.Base(p) != "PROVENANCE.md" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Skip("no recorded samples")
	}
	return out
}

// convert and trace stats succeed on every shared sample; converting the
// canonical output again gives the same bytes.
func TestConvertAndStatsOnSamples(t *testing.T) {
	dir := t.TempDir()
	for _, p := range recordedSamples(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			out := filepath.Join(dir, filepath.Base(p)+".trace.jsonl")
			if _, stderr, code := runCmd(t, "convert", "--strict", p, out); code != 0 {
				t.Fatalf("convert: exit %d: %s", code, stderr)
			}
			first, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			again, stderr, code := runCmd(t, "convert", out)
			if code != 0 {
				t.Fatalf("convert of the canonical trace: exit %d: %s", code, stderr)
			}
			if again != string(first) {
				t.Errorf("converting the canonical trace changed it")
			}
			stdout, stderr, code := runCmd(t, "trace", "stats", p)
			if code != 0 {
				t.Fatalf("trace stats: exit %d: %s", code, stderr)
			}
			var st map[string]any
			if err := json.Unmarshal([]byte(stdout), &st); err != nil {
				t.Fatalf("stats is not JSON: %v\n%s", err, stdout)
			}
			for _, k := range []string{"format", "events", "system_events", "user_messages", "assistant_turns", "tool_calls", "tool_results", "compactions", "usage_records", "probes"} {
				if _, ok := st[k]; !ok {
					t.Errorf("stats lacks %q: %s", k, stdout)
				}
			}
			canon, _, _ := runCmd(t, "trace", "stats", out)
			if canon != stdout {
				t.Errorf("stats of the recorded file and of its conversion differ:\n%s\n%s", stdout, canon)
			}
		})
	}
}

func TestTraceStatsTimes(t *testing.T) {
	stdout, stderr, code := runCmd(t, "trace", "stats", filepath.Join(sharedTraces, "cc-spotter-4d5611e5.jsonl"))
	if code != 0 {
		t.Skipf("sample unavailable: %s", stderr)
	}
	// jq -r '.timestamp // empty' on the user/assistant/system lines: the
	// first kept line is 16:02:25.284Z, the last 21:03:34.112Z.
	if !strings.Contains(stdout, `"first_time":"2026-02-12T16:02:25.284Z"`) || !strings.Contains(stdout, `"last_time":"2026-02-12T21:03:34.112Z"`) {
		t.Errorf("times: %s", stdout)
	}
	text, _, _ := runCmd(t, "trace", "stats", "--format-out", "text", filepath.Join(sharedTraces, "cc-spotter-4d5611e5.jsonl"))
	if !strings.Contains(text, "tool calls       150") {
		t.Errorf("text output: %s", text)
	}
}

func TestConvertErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "rollout.jsonl")
	os.WriteFile(bad, []byte(`{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}`+"\nnot json\n"), 0o644)
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"no input", []string{"convert"}, 2, "want IN [OUT]"},
		{"bad format", []string{"convert", "--format", "xml", bad}, 2, "unknown format"},
		{"lenient warns with file and line", []string{"convert", bad}, 0, bad + ":2:"},
		{"strict stops", []string{"convert", "--strict", bad}, 1, bad + ":2:"},
		{"missing file", []string{"convert", filepath.Join(dir, "nope.jsonl")}, 1, "no such file"},
		{"stats without file", []string{"trace", "stats"}, 2, "want FILE"},
		{"trace without stats", []string{"trace", "list"}, 2, "stats"},
		{"bad tool map", []string{"convert", "--tools", bad, bad}, 1, bad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.inStderr)
			}
		})
	}
}

// ctxsim run --trace takes a recorded session as it is, not only its
// canonical conversion, and both give the same metrics.
func TestRunOnRecordedSession(t *testing.T) {
	raw := filepath.Join(sharedTraces, "swe-gpt4-pydicom-1458.traj")
	canon := filepath.Join(t.TempDir(), "swe.trace.jsonl")
	if _, stderr, code := runCmd(t, "convert", raw, canon); code != 0 {
		t.Skipf("convert: %s", stderr)
	}
	args := []string{"run", "--model", "gpt-4", "--window", "8192", "--policy", "flat", "--format", "json", "--trace"}
	a, stderr, code := runCmd(t, append(args, raw)...)
	if code != 0 {
		t.Fatalf("run on the recorded file: exit %d: %s", code, stderr)
	}
	b, _, _ := runCmd(t, append(args, canon)...)
	var ra, rb map[string]any
	if json.Unmarshal([]byte(a), &ra) != nil || json.Unmarshal([]byte(b), &rb) != nil {
		t.Fatalf("outputs are not JSON:\n%s\n%s", a, b)
	}
	ma, _ := json.Marshal(ra["metrics"])
	mb, _ := json.Marshal(rb["metrics"])
	if string(ma) != string(mb) {
		t.Errorf("metrics differ between the recorded file and its conversion:\n%s\n%s", ma, mb)
	}
}

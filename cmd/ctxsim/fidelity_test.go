package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func fidelityJSON(t *testing.T, files ...string) []fidelityReport {
	t.Helper()
	args := []string{"fidelity", "--json"}
	for _, f := range files {
		args = append(args, filepath.Join(sharedTraces, f))
	}
	stdout, stderr, code := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("fidelity: exit %d: %s", code, stderr)
	}
	var reps []fidelityReport
	if err := json.Unmarshal([]byte(stdout), &reps); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	return reps
}

// The claude-trace log records every request exactly: as-recorded replay
// with the anthropic cache model must reproduce the recorded cache reads of
// the 17 main-model requests within 2 % on at least 95 % of them.
func TestFidelityClaudeTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a real session")
	}
	r := fidelityJSON(t, "api-claudetrace-cc106-test-traffic.jsonl")[0]
	if r.Requests != 17 {
		t.Fatalf("requests = %d, want the 17 main-model requests", r.Requests)
	}
	if r.CacheReadPct < 95 {
		t.Errorf("cache reads within 2%% on %.1f%% of requests, want >= 95%%; misses %+v", r.CacheReadPct, r.Misses)
	}
	if len(r.Misses) != r.Requests-r.CacheReadWithin {
		t.Errorf("%d misses listed for %d requests outside 2%%", len(r.Misses), r.Requests-r.CacheReadWithin)
	}
}

// A Claude Code session: the offset fitted on request 1 makes request 1
// exact, the recorded compaction is where compact_boundary is (the 62nd
// response: jq 'select(.type=="assistant") | .message.id' up to line 754 of
// the file, sort -u | wc -l gives 61), and the errors are bounded.
func TestFidelityClaudeCode(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a real session")
	}
	r := fidelityJSON(t, "cc-spotter-4d5611e5.jsonl")[0]
	if r.Requests != 139 || r.RecordedCompactAt != 62 || r.FlatUpTo != 61 {
		t.Fatalf("requests %d, compaction at %d, compared %d; want 139, 62, 61", r.Requests, r.RecordedCompactAt, r.FlatUpTo)
	}
	if r.Offset <= 0 || r.FlatMAPE <= 0 || r.FlatMAPE > 30 || r.ScaledMAPE <= 0 || r.ScaledMAPE > r.FlatMAPE {
		t.Errorf("offset %d, flat MAPE %.2f%%, scaled MAPE %.2f%%: want a positive offset, a bounded error, and the scale to help", r.Offset, r.FlatMAPE, r.ScaledMAPE)
	}
	if r.SimCompactScaledAt == 0 {
		t.Errorf("flat-compact never compacted at the scaled threshold")
	}
}

func TestFidelityNoUsage(t *testing.T) {
	r := fidelityJSON(t, "swe-gpt4-pydicom-1458.traj")[0]
	if r.Requests != 0 || len(r.Notes) == 0 {
		t.Errorf("a trajectory without usage: %+v", r)
	}
}

func TestFidelityKeepsGoingPastABadFile(t *testing.T) {
	stdout, stderr, code := runCmd(t, "fidelity", filepath.Join(sharedTraces, "PROVENANCE.md"), filepath.Join(sharedTraces, "swe-gpt4-pydicom-1458.traj"))
	if code != 1 || !strings.Contains(stderr, "PROVENANCE.md") || !strings.Contains(stdout, "swe-gpt4-pydicom-1458.traj") {
		t.Errorf("exit %d, stdout %q, stderr %q; want the good file reported, the bad one named, exit 1", code, stdout, stderr)
	}
}

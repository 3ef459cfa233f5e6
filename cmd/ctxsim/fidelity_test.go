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

// A Claude Code session: the importer's system prompt estimate (26450
// recorded prompt tokens of the first request, jq 'select(.type=="assistant")
// | .message.usage | .input_tokens + .cache_creation_input_tokens +
// .cache_read_input_tokens' | head -1, less the 148-byte task at 4 bytes per
// token) leaves almost no offset to fit; the recorded compaction is where
// compact_boundary is (the 62nd response: jq 'select(.type=="assistant") |
// .message.id' up to line 754 of the file, sort -u | wc -l gives 61), and the
// errors are bounded.
func TestFidelityClaudeCode(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a real session")
	}
	r := fidelityJSON(t, "cc-spotter-4d5611e5.jsonl")[0]
	if r.Requests != 139 || r.RecordedCompactAt != 62 || r.FlatUpTo != 61 {
		t.Fatalf("requests %d, compaction at %d, compared %d; want 139, 62, 61", r.Requests, r.RecordedCompactAt, r.FlatUpTo)
	}
	if r.SystemEstimated != 26450-37 {
		t.Errorf("system estimate %d tokens, want %d", r.SystemEstimated, 26450-37)
	}
	// The visible content of request 1 is 37 tokens at 4 bytes per token;
	// the profile's tokenizer may count it a few tokens apart, no more.
	if r.Offset < -37 || r.Offset > 37 {
		t.Errorf("offset %d tokens, want within the 37 tokens of the first request's content", r.Offset)
	}
	if r.FlatMAPE <= 0 || r.FlatMAPE > 30 || r.ScaledMAPE <= 0 || r.ScaledMAPE > r.FlatMAPE {
		t.Errorf("flat MAPE %.2f%%, scaled MAPE %.2f%%: want a bounded error, and the scale to help", r.FlatMAPE, r.ScaledMAPE)
	}
	// With the system prompt in the trace, flat-compact at Claude Code's own
	// threshold compacts (before, it ran 26K tokens light and never did).
	if r.SimCompactAt == 0 || r.SimCompactScaledAt == 0 {
		t.Errorf("flat-compact never compacted: at the threshold %d, scaled %d", r.SimCompactAt, r.SimCompactScaledAt)
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

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/bench"
)

func TestInspectCommand(t *testing.T) {
	stdout, stderr, code := runCmd(t, "inspect", "--policy", "unbounded", "--workload", "coder", "--window", "200K", "--step", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"request 5 of coder: policy unbounded, model claude-sonnet-5.5, window 200K",
		"#  region  kind", "---- common prefix ends here", " task ", "tool_result"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}

	stdout, stderr, code = runCmd(t, "inspect", "--policy", "flat", "--workload", "coder", "--window", "16K", "--step", "40", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ins bench.Inspection
	if err := json.Unmarshal([]byte(stdout), &ins); err != nil {
		t.Fatalf("json: %v\n%s", err, stdout)
	}
	if ins.Step != 40 || ins.Policy != "flat" || ins.Window != 16000 || len(ins.Blocks) == 0 {
		t.Errorf("inspection %+v", ins)
	}
	if ins.Tokens > 16000 {
		t.Errorf("flat request of %d tokens at a 16K window", ins.Tokens)
	}
}

func TestInspectUsage(t *testing.T) {
	runCases(t, []cmdCase{
		{"help", []string{"inspect", "-h"}, 0, "usage: ctxsim inspect"},
		{"no policy", []string{"inspect", "--workload", "coder"}, 2, "exactly one of --policy and --blueprint"},
		{"no source", []string{"inspect", "--policy", "flat"}, 2, "exactly one of --trace and --workload"},
		{"bad policy", []string{"inspect", "--policy", "flat-bogus", "--workload", "coder"}, 2, "--policy"},
		{"bad model", []string{"inspect", "--policy", "flat", "--workload", "coder", "--model", "gpt-0"}, 2, "--model"},
		{"bad window", []string{"inspect", "--policy", "flat", "--workload", "coder", "--window", "8Q"}, 2, `window "8Q"`},
		{"bad workload", []string{"inspect", "--policy", "flat", "--workload", "nope"}, 2, "--workload"},
		{"missing trace", []string{"inspect", "--policy", "flat", "--trace", "/nonexistent.jsonl"}, 1, "no such file"},
		{"step too far", []string{"inspect", "--policy", "flat", "--workload", "coder", "--step", "100000"}, 1, "the run made only"},
		{"bad format", []string{"inspect", "--policy", "flat", "--workload", "coder", "--format", "yaml"}, 2, "--format"},
	})
}

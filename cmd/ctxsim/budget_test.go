package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/bench"
)

func TestBudgetUsage(t *testing.T) {
	runCases(t, []cmdCase{
		{"help", []string{"budget", "-h"}, 0, "usage: ctxsim budget"},
		{"no blueprint", []string{"budget"}, 2, "--blueprint is required"},
		{"bad model", []string{"budget", "--blueprint", "coder", "--model", "gpt-0"}, 2, "--model"},
		{"bad window", []string{"budget", "--blueprint", "coder", "--window", "x"}, 2, "--window"},
		{"bad seeds", []string{"budget", "--blueprint", "coder", "--seeds", "1,x"}, 2, `seed "x"`},
		{"bad workload", []string{"budget", "--blueprint", "coder", "--workload", "nope"}, 2, `--workload "nope"`},
		{"unknown blueprint", []string{"budget", "--blueprint", "no-such-agent"}, 1, "no embedded blueprint"},
		{"unknown region", []string{"budget", "--blueprint", "coder", "--regions", "nope"}, 1, `no region "nope"`},
		{"absolute region", []string{"budget", "--blueprint", "coder", "--regions", "task", "--ceiling", "-1"}, 2, "--ceiling"},
	})
}

func TestBudgetRun(t *testing.T) {
	args := []string{"budget", "--blueprint", "coder", "--window", "32K", "--seeds", "1", "--rounds", "1", "--regions", "codebase,conversation"}
	stdout, stderr, code := runCmd(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out budgetOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("json: %v\n%s", err, stdout)
	}
	r := out.Result
	if r == nil || r.Evaluations < 2 {
		t.Fatalf("result %+v", r)
	}
	if r.After.Cost > r.CeilingUSD*(1+1e-9) || r.After.Recall < r.Before.Recall {
		t.Errorf("after %+v is worse than before %+v or over the ceiling %v", r.After, r.Before, r.CeilingUSD)
	}
	if r.After.Shares["codebase"]+r.After.Shares["conversation"] > r.Before.Shares["codebase"]+r.Before.Shares["conversation"] {
		t.Errorf("the tuned total grew: %v from %v", r.After.Shares, r.Before.Shares)
	}
	// The dead tokens by region are those of the runs: the tuned regions
	// hold some at 32K, and they are part of the waste.
	for _, c := range []bench.BudgetCandidate{r.Before, r.After} {
		if c.Dead["codebase"] <= 0 || c.Dead["conversation"] <= 0 || c.Waste <= 0 || c.Waste > 100 {
			t.Errorf("candidate %v: waste %v, dead tokens %v", c.Shares, c.Waste, c.Dead)
		}
	}
	for _, l := range out.Lines {
		if !strings.Contains(l, "budget = ") {
			t.Errorf("recommended line %q has no budget", l)
		}
	}
	stdout, _, code = runCmd(t, args...)
	if code != 0 || !strings.Contains(stdout, "fact recall (%)") || !strings.Contains(stdout, "token waste (%)") || !strings.Contains(stdout, "conversation dead tokens") {
		t.Errorf("text output (exit %d):\n%s", code, stdout)
	}
}

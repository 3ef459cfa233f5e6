package main

import (
	"strings"
	"testing"
)

func TestBudgetUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"budget", "-h"}, 0, "usage: ctxsim budget"},
		{"no blueprint", []string{"budget"}, 2, "--blueprint is required"},
		{"bad model", []string{"budget", "--blueprint", "coder", "--model", "gpt-0"}, 2, "--model"},
		{"bad window", []string{"budget", "--blueprint", "coder", "--window", "x"}, 2, "--window"},
		{"bad seeds", []string{"budget", "--blueprint", "coder", "--seeds", "1,x"}, 2, `seed "x"`},
		{"bad workload", []string{"budget", "--blueprint", "coder", "--workload", "nope"}, 2, `--workload "nope"`},
		{"unknown blueprint", []string{"budget", "--blueprint", "no-such-agent"}, 1, "no embedded blueprint"},
		{"unknown region", []string{"budget", "--blueprint", "coder", "--regions", "nope"}, 1, `no region "nope"`},
		{"absolute region", []string{"budget", "--blueprint", "coder", "--regions", "task", "--ceiling", "-1"}, 2, "--ceiling"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			if !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("output lacks %q:\nstdout: %s\nstderr: %s", tt.want, stdout, stderr)
			}
		})
	}
}

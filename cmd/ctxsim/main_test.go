package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runCmd runs the command in-process and returns what it printed and its exit code.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"no subcommand", nil, 2, "usage: ctxsim"},
		{"unknown subcommand", []string{"frobnicate"}, 2, `unknown subcommand "frobnicate"`},
		{"help", []string{"help"}, 0, "commands:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := runCmd(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d", code, tt.wantCode)
			}
			if !strings.Contains(out+errs, tt.wantOut) {
				t.Errorf("output %q does not contain %q", out+errs, tt.wantOut)
			}
		})
	}
}

// Every subcommand answers -h with its flags and exit 0, as Go's flag package does.
func TestEverySubcommandHasHelp(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			_, _, code := runCmd(t, c.name, "-h")
			if code != 0 {
				t.Errorf("ctxsim %s -h: exit %d, want 0", c.name, code)
			}
		})
	}
}

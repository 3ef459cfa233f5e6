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

// cmdCase is a command line, the exit code it must give and a text its
// output (stdout or stderr) must contain.
type cmdCase struct {
	name string
	args []string
	code int
	want string
}

// runCases runs each case in-process as a subtest.
func runCases(t *testing.T, cases []cmdCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("output lacks %q:\nstdout: %s\nstderr: %s", tc.want, stdout, stderr)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	runCases(t, []cmdCase{
		{"no subcommand", nil, 2, "usage: ctxsim"},
		{"unknown subcommand", []string{"frobnicate"}, 2, `unknown subcommand "frobnicate"`},
		{"help", []string{"help"}, 0, "commands:"},
	})
}

// A flag a subcommand does not define is a usage error (exit 2) that names
// the subcommand.
func TestUnknownFlag(t *testing.T) {
	var cases []cmdCase
	for _, c := range commands() {
		args := []string{c.name, "--no-such-flag"}
		name := c.name
		if c.name == "trace" {
			args = []string{"trace", "stats", "--no-such-flag"}
			name = "trace stats"
		}
		cases = append(cases, cmdCase{c.name, args, 2, name + ": flag provided but not defined: -no-such-flag"})
	}
	runCases(t, cases)
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

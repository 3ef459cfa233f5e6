// Command ctxsim simulates and benchmarks context-window eviction policies of
// LLM agents. Run "ctxsim help" for its subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError marks an error caused by how the command was called (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// parseFlags parses args with fs, turning -h into a clean exit (errHelpShown)
// and anything else wrong into a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelpShown
		}
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}

// errHelpShown ends a command whose -h output was printed: exit 0.
var errHelpShown = errors.New("help shown")

// helpOK maps errHelpShown to success.
func helpOK(err error) error {
	if errors.Is(err, errHelpShown) {
		return nil
	}
	return err
}

// checkFormat accepts the --format values every subcommand takes.
func checkFormat(cmd, f string) error {
	if f != "text" && f != "json" {
		return usagef("%s: --format must be text or json, not %q", cmd, f)
	}
	return nil
}

// errSilent is returned when the failure was already reported (for example a
// validate run that printed its errors): exit 1 with nothing more to say.
var errSilent = errors.New("failed")

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, "ctxsim:", err)
		return 2
	}
	if !errors.Is(err, errSilent) {
		fmt.Fprintln(stderr, "ctxsim:", err)
	}
	return 1
}

// command is one subcommand. Each lives in its own file.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "run one cell: a workload or trace through one policy, model and window", cmdRun},
		{"sweep", "run a grid of cells over all cores and write results/", cmdSweep},
		{"report", "write results/report.md, CSV, JSON and figures from finished cells", cmdReport},
		{"merge", "join the outputs of sharded sweeps", cmdMerge},
		{"validate", "load blueprints, resolve them at windows, print regions, errors and lints", cmdValidate},
		{"inspect", "print the exact request a policy would send at one step of a trace", cmdInspect},
		{"convert", "convert a recorded session to the canonical trace", cmdConvert},
		{"trace", "trace tools: ctxsim trace stats FILE", cmdTrace},
		{"fidelity", "compare simulated and recorded usage on recorded sessions", cmdFidelity},
		{"models", "list the model profiles", cmdModels},
		{"budget", "recommend region budgets for a blueprint on a model", cmdBudget},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printHelp(stderr)
		return usagef("missing subcommand")
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		printHelp(stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	printHelp(stderr)
	return usagef("unknown subcommand %q", name)
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "usage: ctxsim <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "ctxsim <command> -h" for a command's flags.`)
}

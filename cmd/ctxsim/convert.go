package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/workloads"
	"github.com/ctxsim/ctxsim/workloads/importers"
)

// importFlags are the flags shared by convert, trace stats and fidelity.
type importFlags struct {
	format     string
	strict     bool
	sidechains bool
	noRedact   bool
	noProbes   bool
	tools      string
	mainModel  string
	state      string
}

func (f *importFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "format", "auto", "input format: auto, "+formatNames())
	fs.BoolVar(&f.strict, "strict", false, "stop at the first bad line instead of skipping it with a warning")
	fs.BoolVar(&f.sidechains, "sidechains", false, "keep subagent (sidechain) events")
	fs.BoolVar(&f.noRedact, "no-redact", false, "keep secrets (API keys, tokens, private keys) as recorded")
	fs.BoolVar(&f.noProbes, "no-probes", false, "do not derive reference-recall probes")
	fs.StringVar(&f.tools, "tools", "", "TOML `file` with a [tools] table extending the tool-name map")
	fs.StringVar(&f.mainModel, "main-model", "", "claude-trace: the main agent's model (default: the first with tools)")
	fs.StringVar(&f.state, "state", "", "OpenHands state.json `file` for usage (default: beside events.json)")
}

func formatNames() string {
	s := ""
	for i, f := range importers.Formats() {
		if i > 0 {
			s += ", "
		}
		s += f.String()
	}
	return s
}

// options builds importer options; warnings go to stderr with file and line.
func (f *importFlags) options(stderr io.Writer) (importers.Options, error) {
	format, err := importers.ParseFormat(f.format)
	if err != nil {
		return importers.Options{}, usagef("--format: %v", err)
	}
	opt := importers.Options{
		Format: format, Strict: f.strict, Sidechains: f.sidechains, NoRedact: f.noRedact,
		NoProbes: f.noProbes, MainModel: f.mainModel,
		Warn: func(err error) { fmt.Fprintln(stderr, "ctxsim: warning:", err) },
	}
	if f.tools != "" {
		file, err := os.Open(f.tools)
		if err != nil {
			return opt, err
		}
		defer file.Close()
		if opt.ToolMap, err = importers.LoadToolMap(file, f.tools); err != nil {
			return opt, err
		}
	}
	if f.state != "" {
		if opt.State, err = os.ReadFile(f.state); err != nil {
			return opt, err
		}
	}
	return opt, nil
}

func cmdConvert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ctxsim convert [flags] IN [OUT]")
		fmt.Fprintln(stderr, "Converts a recorded agent session to the canonical trace (stdout without OUT).")
		fs.PrintDefaults()
	}
	var f importFlags
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return usagef("convert: want IN [OUT]")
	}
	opt, err := f.options(stderr)
	if err != nil {
		return err
	}
	in := fs.Arg(0)
	if fs.NArg() == 1 {
		_, err := workloads.Import(in, opt, stdout)
		return err
	}
	// Write to a temporary file and rename, so a failed import leaves no
	// half-written trace behind.
	out := fs.Arg(1)
	tmp, err := os.CreateTemp(filepath.Dir(out), ".convert-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	st, err := workloads.Import(in, opt, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s: %s, %d events (%d tool calls, %d usage records, %d probes) -> %s\n",
		in, st.Format, st.Events, st.ToolCalls, st.UsageRecords, st.Probes, out)
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/engine/rhai"
)

// defaultValidateWindows are the windows the reference runtime's bundled
// agents must validate at.
var defaultValidateWindows = []int{32768, 128000, 200000, 1048576}

type validateRegion struct {
	Name            string `json:"name"`
	Kind            string `json:"kind"`
	MaxTokens       int    `json:"max_tokens"`
	ThresholdTokens *int   `json:"threshold_tokens,omitempty"`
}

type validateWindow struct {
	Window  int                 `json:"window"`
	Regions []validateRegion    `json:"regions"`
	Errors  []engine.Diagnostic `json:"errors"`
	Lints   []engine.Diagnostic `json:"lints"`
}

type validateFile struct {
	File    string           `json:"file"`
	Error   string           `json:"error,omitempty"`
	Windows []validateWindow `json:"windows"`
}

// cmdValidate loads blueprints, resolves them at each window and prints the
// regions, errors and lints.
func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	windowsFlag := fs.String("window", "", "model windows in tokens, comma-separated (default 32768,128000,200000,1048576)")
	format := fs.String("format", "text", "output format: text or json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ctxsim validate [--window N[,N…]] [--format text|json] FILE…")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if err := checkFormat("validate", *format); err != nil {
		return err
	}
	windows := defaultValidateWindows
	if *windowsFlag != "" {
		var err error
		if windows, err = parseWindows(*windowsFlag); err != nil {
			return usagef("validate: %v", err)
		}
	}
	if fs.NArg() == 0 {
		return usagef("validate: name at least one blueprint file")
	}
	failed := false
	var results []validateFile
	for _, path := range fs.Args() {
		if err := ctx.Err(); err != nil {
			return err
		}
		res := validateFile{File: path, Windows: []validateWindow{}}
		bp, err := engine.LoadBlueprint(path)
		if err == nil {
			err = checkScripts(bp)
		}
		if err != nil {
			failed = true
			res.Error = err.Error()
			results = append(results, res)
			continue
		}
		for _, w := range windows {
			rep := bp.Validate(w)
			vw := validateWindow{Window: w, Regions: []validateRegion{}, Errors: nonNil(rep.Errors), Lints: nonNil(rep.Lints)}
			regs, err := bp.Regions("", w)
			if err != nil {
				return fmt.Errorf("validate %s: %w", path, err)
			}
			for _, r := range regs {
				vr := validateRegion{Name: r.Name, Kind: r.Kind.String(), MaxTokens: r.MaxTokens}
				if r.HasThreshold() {
					t := r.ThresholdTokens
					vr.ThresholdTokens = &t
				}
				vw.Regions = append(vw.Regions, vr)
			}
			if len(rep.Errors) > 0 {
				failed = true
			}
			res.Windows = append(res.Windows, vw)
		}
		results = append(results, res)
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		for _, r := range results {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	} else {
		for _, r := range results {
			printValidateText(stdout, r)
		}
	}
	if failed {
		return errSilent
	}
	return nil
}

// checkScripts compiles the blueprint's custom-region scripts: one that
// does not compile, or lacks fn render(ctx), is a load error here as it is
// at spawn (ENGINE.md §9.2).
func checkScripts(bp *engine.Blueprint) error {
	scripts, err := rhai.NewEngine(rhai.Limits{})
	if err != nil {
		return err
	}
	return errors.Join(scripts.CheckBlueprint(bp)...)
}

func nonNil(d []engine.Diagnostic) []engine.Diagnostic {
	if d == nil {
		return []engine.Diagnostic{}
	}
	return d
}

func parseWindows(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		n, err := strconv.Atoi(part)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--window: %q is not a positive token count", part)
		}
		out = append(out, n)
	}
	return out, nil
}

func printValidateText(w io.Writer, r validateFile) {
	if r.Error != "" {
		fmt.Fprintf(w, "%s: ERROR %s\n", r.File, r.Error)
		return
	}
	for _, vw := range r.Windows {
		status := "ok"
		if len(vw.Errors) > 0 {
			status = fmt.Sprintf("%d error(s)", len(vw.Errors))
		}
		fmt.Fprintf(w, "%s @ %d tokens: %s\n", r.File, vw.Window, status)
		for _, reg := range vw.Regions {
			thr := ""
			if reg.ThresholdTokens != nil {
				thr = fmt.Sprintf("  threshold %d", *reg.ThresholdTokens)
			}
			fmt.Fprintf(w, "  %-20s %-16s %9d%s\n", reg.Name, reg.Kind, reg.MaxTokens, thr)
		}
		for _, e := range vw.Errors {
			fmt.Fprintf(w, "  error[%s]: %s\n", e.Code, e.Message)
		}
		for _, l := range vw.Lints {
			fmt.Fprintf(w, "  lint[%s]: %s\n", l.Code, l.Message)
		}
	}
}

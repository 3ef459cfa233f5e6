package synthetic

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/ctxsim/ctxsim/internal/tomlfile"
)

//go:embed defaults/*.toml
var defaultFiles embed.FS

// Names returns the names of the synthetic workloads, sorted.
func Names() []string {
	names := make([]string, 0, len(workloads))
	for n := range workloads {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// workloads maps a workload name to a constructor of its zero parameters.
var workloads = map[string]func() Params{
	"coder":        func() Params { return &CoderParams{} },
	"burst":        func() Params { return &BurstParams{} },
	"researcher":   func() Params { return &ResearcherParams{} },
	"log-analyzer": func() Params { return &LogAnalyzerParams{} },
	"chat":         func() Params { return &ChatParams{} },
	"needle":       func() Params { return &NeedleParams{} },
}

// Defaults returns the embedded default parameter file of a workload: the
// documented starting point for a user's own file.
func Defaults(name string) ([]byte, error) {
	if _, ok := workloads[name]; !ok {
		return nil, unknownWorkload(name)
	}
	return defaultFiles.ReadFile("defaults/" + name + ".toml")
}

func unknownWorkload(name string) error {
	return fmt.Errorf("unknown workload %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// Params are the parameters of one workload: *CoderParams, *BurstParams,
// *ResearcherParams, *LogAnalyzerParams, *ChatParams or *NeedleParams.
type Params interface {
	// Workload returns the workload's name.
	Workload() string
	base() *Common
	validate() error
	generate(g *gen) error
	// reset clears the lists that a file replaces rather than overlays
	// (stages, depths), for those of them that the file sets.
	reset(set func(key string) bool)
	// tools returns the tools the run can call, sorted.
	tools() []string
}

// Common are the parameters every workload has.
type Common struct {
	// Workload names the workload the file is for; optional, but when set it
	// must match.
	Name string `toml:"workload"`
	// Scale multiplies the amount of work (steps, turns, tokens), so that one
	// parameter file serves windows from 8K to 2M.
	Scale float64 `toml:"scale"`
	// ElideOverBytes: tool results longer than this are written as Size plus
	// Facts instead of Text, to keep huge runs' traces small. 0: never.
	ElideOverBytes int `toml:"elide_over_bytes"`
	// ThinkSeconds is the time a user takes to write a turn.
	ThinkSeconds LogNormal `toml:"think_seconds"`
	// OutputTokens is the size of an assistant turn as the model wrote it.
	OutputTokens LogNormal `toml:"output_tokens"`
	// Latency is each tool's execution time.
	Latency Latency `toml:"latency_seconds"`
	// SystemBytes: when > 0, a system event of about this size follows the
	// task: instructions and the schemas of the tools the workload calls, as
	// an agent's system prompt carries them. 0: none.
	SystemBytes int `toml:"system_bytes"`
	// ErrorShare of tool calls fail: the result is a short error message
	// (IsError) and carries none of the content.
	ErrorShare float64 `toml:"error_share"`
	// Task controls the task event.
	Task TaskParams `toml:"task"`
}

func (c *Common) base() *Common { return c }

// Workload returns the workload's name.
func (c *Common) Workload() string { return c.Name }

// TaskParams shape the task event.
type TaskParams struct {
	// Facts is how many distinctive facts the task text states (constraints
	// the agent must keep in mind to the end).
	Facts int `toml:"facts"`
}

// Latency is the execution time of each canonical tool, in seconds.
type Latency struct {
	ReadFile  LogNormal `toml:"read_file"`
	ListDir   LogNormal `toml:"list_dir"`
	Grep      LogNormal `toml:"grep"`
	EditFile  LogNormal `toml:"edit_file"`
	WriteFile LogNormal `toml:"write_file"`
	Bash      LogNormal `toml:"bash"`
	WebSearch LogNormal `toml:"web_search"`
	WebFetch  LogNormal `toml:"web_fetch"`
}

// of returns the latency distribution of a tool and whether the tool is known.
func (l *Latency) of(tool string) (LogNormal, bool) {
	switch tool {
	case "read_file":
		return l.ReadFile, true
	case "list_dir":
		return l.ListDir, true
	case "grep":
		return l.Grep, true
	case "edit_file":
		return l.EditFile, true
	case "write_file":
		return l.WriteFile, true
	case "bash":
		return l.Bash, true
	case "web_search":
		return l.WebSearch, true
	case "web_fetch":
		return l.WebFetch, true
	}
	return LogNormal{}, false
}

// Probes says when the agent later needs facts it saw earlier.
type Probes struct {
	// Every: a round of probes every this many tool steps (0: none mid-run).
	Every int `toml:"every"`
	// PerRound probes per mid-run round, at ages spread log-evenly from the
	// most recent fact to the oldest.
	PerRound int `toml:"per_round"`
	// Final probes at the end, spread the same way, besides the task's facts.
	Final int `toml:"final"`
}

// Stage is one stage of an agent run: the tools it calls and how often, what
// it writes through context tools, and the user turns at its end.
type Stage struct {
	// Name is the stage's name in the blueprint.
	Name string `toml:"name"`
	// Transition is the blueprint transition that enters the stage; default
	// Name (Leviath names transitions after their target). The first stage,
	// and a stage after a fan_out stage (its merge stage), have none.
	Transition string `toml:"transition"`
	// Steps is the number of tool calls, before Scale.
	Steps int `toml:"steps"`
	// Tools weighs the tools the stage calls (canonical names).
	Tools map[string]float64 `toml:"tools"`
	// ParallelShare of the stage's turns issue 2 to 4 calls of one tool at
	// once, as agents batch reads and fetches.
	ParallelShare float64 `toml:"parallel_share"`
	// UserTurns at the end of the stage (an approval, a correction); each
	// user turn may state a fact.
	UserTurns int `toml:"user_turns"`
	// Ops are context tool calls at the end of the stage.
	Ops []Op `toml:"ops"`
	// FanOut makes this a fan-out stage: no tool calls of its own, its
	// workers' findings land in a region.
	FanOut *FanOut `toml:"fan_out"`
}

// Op is a context tool call at the end of a stage: notes the agent takes.
type Op struct {
	Tool   string `toml:"tool"`   // context_write or context_append
	Region string `toml:"region"` // the blueprint region written
	// Notes: how many of the facts learned in the stage the note repeats.
	Notes int `toml:"notes"`
}

// FanOut describes a fan-out stage's workers.
type FanOut struct {
	Region      string    `toml:"region"`  // the results_region of the blueprint stage
	Workers     int       `toml:"workers"` // before Scale
	ResultBytes LogNormal `toml:"result_bytes"`
}

// ParamsError is an error in a parameter file, with its position. It is the
// shared strict-TOML error, so its text matches the other files'.
type ParamsError = tomlfile.Error

// keyError is a validation error about one key; Parse gives it a position.
type keyError struct {
	key string
	err error
}

func (e *keyError) Error() string { return e.key + ": " + e.err.Error() }

func keyErr(key, format string, args ...any) error {
	return &keyError{key, fmt.Errorf(format, args...)}
}

// Load returns the parameters of a workload: its embedded defaults, overlaid
// with the file at path when path is not empty. When name is empty, the
// file's `workload` key names the workload.
func Load(name, path string) (Params, error) {
	if path == "" {
		if name == "" {
			return nil, errors.New("no workload named and no parameter file")
		}
		return Parse(name, nil, "")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(name, data, path)
}

// Parse returns the parameters of a workload: its embedded defaults,
// overlaid with the TOML in data (which may set only some keys). Decoding is
// strict: an unknown key, a value of the wrong type or a value out of range
// is a *ParamsError naming the file, line and key. file names data in errors.
func Parse(name string, data []byte, file string) (Params, error) {
	if file == "" {
		file = "params"
	}
	// The file's top-level keys say which workload it is for, when the
	// caller does not, and which of the defaults' lists it replaces.
	var top map[string]any
	if data != nil {
		if _, err := tomlfile.Decode(data, file, &top); err != nil {
			return nil, err
		}
	}
	if name == "" {
		v, set := top["workload"]
		w, ok := v.(string)
		if set && !ok {
			return nil, tomlfile.At(data, file, "workload", fmt.Errorf("%v: want a workload name as a string (one of %s)", v, strings.Join(Names(), ", ")))
		}
		if w == "" {
			return nil, &ParamsError{File: file, Line: 1, Key: "workload", Err: fmt.Errorf("missing: name the workload (one of %s)", strings.Join(Names(), ", "))}
		}
		name = w
	}
	mk, ok := workloads[name]
	if !ok {
		return nil, unknownWorkload(name)
	}
	p := mk()
	def, err := Defaults(name)
	if err != nil {
		return nil, err
	}
	if _, err := tomlfile.Decode(def, "defaults/"+name+".toml", p); err != nil {
		return nil, fmt.Errorf("embedded defaults: %w", err)
	}
	if data != nil {
		// Lists replace the defaults' lists as a whole: a user who lists
		// stages means exactly those, where decoding into the defaults would
		// merge each listed stage into the default stage at its index.
		p.reset(func(k string) bool { _, ok := top[k]; return ok })
		if _, err := tomlfile.Decode(data, file, p); err != nil {
			return nil, err
		}
	}
	if w := p.base().Name; w != "" && w != name {
		return nil, tomlfile.At(data, file, "workload", fmt.Errorf("%q, but the file is read as workload %q", w, name))
	}
	p.base().Name = name
	if err := p.validate(); err != nil {
		var ke *keyError
		if errors.As(err, &ke) {
			return nil, tomlfile.At(data, file, ke.key, ke.err)
		}
		return nil, &ParamsError{File: file, Err: err}
	}
	return p, nil
}

// hashParams returns a short digest of the effective parameters, recorded in
// the trace header so that two traces can be told apart by what made them.
func hashParams(p Params) string {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(p); err != nil {
		return ""
	}
	s := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(s[:8])
}

// Limits that keep a parameter file from asking for an unbounded run.
const (
	maxScale      = 1000
	maxSteps      = 100_000
	maxBytes      = 64 << 20 // one piece of content
	maxCount      = 10_000
	maxSeconds    = 86_400
	maxOutputToks = 200_000
)

func (c *Common) check() error {
	if !(c.Scale > 0) || c.Scale > maxScale {
		return keyErr("scale", "%v: want a number in (0, %d]", c.Scale, maxScale)
	}
	if c.ElideOverBytes < 0 {
		return keyErr("elide_over_bytes", "%d: want >= 0 (0: never elide)", c.ElideOverBytes)
	}
	if err := c.ThinkSeconds.checkBounded("think_seconds", maxSeconds); err != nil {
		return err
	}
	if err := c.OutputTokens.checkBounded("output_tokens", maxOutputToks); err != nil {
		return err
	}
	if c.SystemBytes < 0 || c.SystemBytes > maxBytes {
		return keyErr("system_bytes", "%d: want 0..%d", c.SystemBytes, maxBytes)
	}
	if err := checkShare("error_share", c.ErrorShare); err != nil {
		return err
	}
	if c.Task.Facts < 0 || c.Task.Facts > 100 {
		return keyErr("task.facts", "%d: want 0..100", c.Task.Facts)
	}
	return nil
}

// checkTools validates the latencies of the tools a workload uses.
func (c *Common) checkTools(tools []string) error {
	for _, t := range tools {
		d, _ := c.Latency.of(t)
		if err := d.checkBounded("latency_seconds."+t, maxSeconds); err != nil {
			return err
		}
	}
	return nil
}

func (p *Probes) check() error {
	switch {
	case p.Every < 0 || p.Every > maxSteps:
		return keyErr("probes.every", "%d: want 0..%d", p.Every, maxSteps)
	case p.PerRound < 0 || p.PerRound > 100:
		return keyErr("probes.per_round", "%d: want 0..100", p.PerRound)
	case p.Final < 0 || p.Final > maxCount:
		return keyErr("probes.final", "%d: want 0..%d", p.Final, maxCount)
	}
	return nil
}

// checkStages validates a stage list against the tools a workload serves.
func checkStages(stages []Stage, tools []string) error {
	if len(stages) == 0 {
		return keyErr("stages", "empty: want at least one [[stages]] table")
	}
	seen := false
	for i, st := range stages {
		k := fmt.Sprintf("stages[%d]", i)
		if st.Name == "" {
			return keyErr(k+".name", "missing")
		}
		if st.FanOut != nil {
			if len(st.Tools) > 0 || st.Steps != 0 {
				return keyErr(k+".fan_out", "a fan-out stage calls no tools: drop steps and tools")
			}
			if st.FanOut.Region == "" {
				return keyErr(k+".fan_out.region", "missing: the region the workers' findings land in")
			}
			if st.FanOut.Workers < 1 || st.FanOut.Workers > 1000 {
				return keyErr(k+".fan_out.workers", "%d: want 1..1000", st.FanOut.Workers)
			}
			if err := st.FanOut.ResultBytes.checkBounded(k+".fan_out.result_bytes", maxBytes); err != nil {
				return err
			}
		} else {
			if st.Steps < 0 || st.Steps > maxSteps {
				return keyErr(k+".steps", "%d: want 0..%d", st.Steps, maxSteps)
			}
			if st.Steps > 0 && len(st.Tools) == 0 {
				return keyErr(k+".tools", "missing: a stage with steps needs tool weights")
			}
			for _, t := range slices.Sorted(maps.Keys(st.Tools)) {
				if !slices.Contains(tools, t) {
					return keyErr(k+".tools."+t, "this workload does not model tool %q (want one of %s)", t, strings.Join(tools, ", "))
				}
				if w := st.Tools[t]; !(w >= 0) || math.IsInf(w, 0) {
					return keyErr(k+".tools."+t, "weight %v: want a finite number >= 0", w)
				}
			}
			total := 0.0
			for _, w := range st.Tools {
				total += w
			}
			if st.Steps > 0 && !(total > 0) {
				return keyErr(k+".tools", "all weights are 0")
			}
		}
		if err := checkShare(k+".parallel_share", st.ParallelShare); err != nil {
			return err
		}
		if st.UserTurns < 0 || st.UserTurns > maxCount {
			return keyErr(k+".user_turns", "%d: want 0..%d", st.UserTurns, maxCount)
		}
		for j, op := range st.Ops {
			ok := fmt.Sprintf("%s.ops[%d]", k, j)
			if op.Tool != "context_write" && op.Tool != "context_append" {
				return keyErr(ok+".tool", "%q: want context_write or context_append", op.Tool)
			}
			if op.Region == "" {
				return keyErr(ok+".region", "missing")
			}
			if op.Notes < 0 || op.Notes > 100 {
				return keyErr(ok+".notes", "%d: want 0..100", op.Notes)
			}
		}
		seen = seen || st.Steps > 0
	}
	if !seen {
		return keyErr("stages", "no stage has steps: the run would make no tool calls")
	}
	return nil
}

// stageTools returns the tools any of the stages calls, sorted.
func stageTools(stages []Stage) []string {
	set := map[string]bool{}
	for _, st := range stages {
		for t, w := range st.Tools {
			if w > 0 {
				set[t] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func checkRange(key string, v, lo, hi int) error {
	if v < lo || v > hi {
		return keyErr(key, "%d: want %d..%d", v, lo, hi)
	}
	return nil
}

func checkShare(key string, v float64) error {
	if !(v >= 0 && v <= 1) {
		return keyErr(key, "%v: want a share in [0, 1]", v)
	}
	return nil
}

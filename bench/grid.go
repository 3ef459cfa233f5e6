package bench

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/internal/tomlfile"
)

// Grid is a sweep's grid, as a TOML file gives it.
//
//	name     = "default"
//	models   = ["claude-sonnet-4.5"]
//	windows  = ["8K", "16K", "1M"]   # or plain token counts
//	seeds    = [1, 2, 3]
//	policies = ["flat", "unbounded"] # run on every workload and trace
//
//	[figures]
//	window = "32K"                   # the window of the per-run figures
//
//	[[workload]]
//	name     = "coder"
//	policies = ["regions:coder"]     # added to the common policies
//
//	[[trace]]
//	name     = "cc-spotter-258c7280"
//	format   = "claude-code"          # importer format of file
//	file     = "cc-spotter-258c7280.jsonl"
//	cut      = "cc-spotter-258c7280.cut.jsonl"
//	policies = ["regions:coder", "as-recorded"]
type Grid struct {
	Name     string         `toml:"name"`
	Models   []string       `toml:"models"`
	Windows  []Window       `toml:"windows"`
	Seeds    []int64        `toml:"seeds"`
	Policies []string       `toml:"policies"`
	Figures  FigureSpec     `toml:"figures"`
	Workload []WorkloadSpec `toml:"workload"`
	Trace    []TraceSpec    `toml:"trace"`

	// dir is the directory of the grid file, against which trace files are
	// resolved when no traces directory is given; "" for the embedded grid.
	dir string
}

// FigureSpec chooses the run drawn in the per-run figures (request sizes,
// region occupancy): one window, the grid's first seed.
type FigureSpec struct {
	Window Window `toml:"window"`
}

// WorkloadSpec is a synthetic workload of the grid.
type WorkloadSpec struct {
	Name string `toml:"name"`
	// Policies are run on this workload besides the grid's common policies
	// (for example the blueprint that suits it).
	Policies []string `toml:"policies"`
}

// TraceSpec is a recorded session of the grid.
type TraceSpec struct {
	Name string `toml:"name"`
	// Format is the importer format of File ("claude-code", "swe-agent", ...).
	Format string `toml:"format"`
	// File is the full recording, relative to the traces directory.
	File string `toml:"file"`
	// Cut is a small cut of the recording, already in the canonical trace
	// format, embedded in ctxsim (bench/testdata/traces); used when no traces
	// directory is given.
	Cut      string   `toml:"cut"`
	Policies []string `toml:"policies"`
}

// Window is a context window size in tokens. In TOML it is an integer or a
// string with a K (×1,000) or M (×1,000,000) suffix, as providers quote them:
// "200K" is 200,000 tokens.
type Window int

// UnmarshalTOML implements toml.Unmarshaler.
func (w *Window) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case int64:
		if v <= 0 || v > 1<<40 {
			return fmt.Errorf("window %d: want a positive token count", v)
		}
		*w = Window(v)
		return nil
	case string:
		n, err := ParseWindow(v)
		if err != nil {
			return err
		}
		*w = Window(n)
		return nil
	default:
		return fmt.Errorf("window %v: want a token count or a string such as \"200K\"", v)
	}
}

// ParseWindow parses "8K", "1M", "272K" or "128000" into tokens.
func ParseWindow(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := 1
	switch {
	case strings.HasSuffix(t, "K") || strings.HasSuffix(t, "k"):
		mult, t = 1000, t[:len(t)-1]
	case strings.HasSuffix(t, "M") || strings.HasSuffix(t, "m"):
		mult, t = 1000000, t[:len(t)-1]
	}
	n, err := strconv.Atoi(t)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("window %q: want a positive token count such as 128000, \"200K\" or \"1M\"", s)
	}
	return n * mult, nil
}

// FormatWindow writes a window the way ParseWindow reads it, shortest first:
// 200000 → "200K", 2000000 → "2M", 8192 → "8192".
func FormatWindow(tokens int) string {
	switch {
	case tokens >= 1000000 && tokens%1000000 == 0:
		return strconv.Itoa(tokens/1000000) + "M"
	case tokens >= 1000 && tokens%1000 == 0:
		return strconv.Itoa(tokens/1000) + "K"
	default:
		return strconv.Itoa(tokens)
	}
}

//go:embed default.toml
var defaultGrid []byte

// DefaultGrid returns the embedded default grid.
func DefaultGrid() *Grid {
	g, err := ParseGrid(defaultGrid, "default.toml")
	if err != nil {
		panic("bench: embedded default grid: " + err.Error()) // a build defect, caught by tests
	}
	return g
}

// DefaultGridSource returns the TOML text of the embedded default grid.
func DefaultGridSource() []byte { return append([]byte(nil), defaultGrid...) }

// GridError is an error in a grid file, with its position when known. It
// is the shared strict-TOML error, so its text matches the other files'.
type GridError = tomlfile.Error

// LoadGrid parses a grid file; trace files resolve against its directory.
func LoadGrid(data []byte, path string) (*Grid, error) {
	g, err := ParseGrid(data, path)
	if err != nil {
		return nil, err
	}
	g.dir = filepath.Dir(path)
	return g, nil
}

// ParseGrid decodes and validates a grid. Decoding is strict: a key the grid
// does not know is an error that names it and its line.
func ParseGrid(data []byte, name string) (*Grid, error) {
	var g Grid
	if _, err := tomlfile.Decode(data, name, &g); err != nil {
		return nil, err
	}
	if err := g.validate(data, name); err != nil {
		return nil, err
	}
	return &g, nil
}

func (g *Grid) validate(data []byte, name string) error {
	bad := func(key string, format string, args ...any) error {
		return tomlfile.At(data, name, key, fmt.Errorf(format, args...))
	}
	if len(g.Models) == 0 {
		return bad("models", "want at least one model profile name")
	}
	if len(g.Windows) == 0 {
		return bad("windows", "want at least one window")
	}
	if len(g.Seeds) == 0 {
		return bad("seeds", "want at least one seed")
	}
	if len(g.Workload)+len(g.Trace) == 0 {
		return bad("workload", "want at least one [[workload]] or [[trace]]")
	}
	if err := dups("models", g.Models); err != nil {
		return bad("models", "%v", err)
	}
	ws := make([]string, len(g.Windows))
	for i, w := range g.Windows {
		ws[i] = FormatWindow(int(w))
	}
	if err := dups("windows", ws); err != nil {
		return bad("windows", "%v", err)
	}
	ss := make([]string, len(g.Seeds))
	for i, s := range g.Seeds {
		if s < 0 {
			return bad("seeds", "seed %d: want a seed >= 0", s)
		}
		ss[i] = strconv.FormatInt(s, 10)
	}
	if err := dups("seeds", ss); err != nil {
		return bad("seeds", "%v", err)
	}
	for _, p := range g.Policies {
		if strings.TrimSpace(p) == "" {
			return bad("policies", "empty policy name")
		}
	}
	names := map[string]bool{}
	for i, w := range g.Workload {
		if w.Name == "" {
			return bad(fmt.Sprintf("workload[%d].name", i), "[[workload]] #%d: want a name", i+1)
		}
		if names[w.Name] {
			return bad(fmt.Sprintf("workload[%d].name", i), "workload %q given twice", w.Name)
		}
		names[w.Name] = true
		if len(g.Policies)+len(w.Policies) == 0 {
			return bad(fmt.Sprintf("workload[%d].policies", i), "workload %q: no policies to run", w.Name)
		}
	}
	for i, t := range g.Trace {
		if t.Name == "" {
			return bad(fmt.Sprintf("trace[%d].name", i), "[[trace]] #%d: want a name", i+1)
		}
		if names[t.Name] {
			return bad(fmt.Sprintf("trace[%d].name", i), "workload or trace %q given twice", t.Name)
		}
		names[t.Name] = true
		if t.File == "" && t.Cut == "" {
			return bad(fmt.Sprintf("trace[%d]", i), "trace %q: want file, cut or both", t.Name)
		}
		if t.File != "" && t.Format == "" {
			return bad(fmt.Sprintf("trace[%d].format", i), "trace %q: want the importer format of %s", t.Name, t.File)
		}
		if len(g.Policies)+len(t.Policies) == 0 {
			return bad(fmt.Sprintf("trace[%d].policies", i), "trace %q: no policies to run", t.Name)
		}
	}
	return nil
}

func dups(what string, xs []string) error {
	seen := map[string]bool{}
	for _, x := range xs {
		if seen[x] {
			return fmt.Errorf("%s lists %s twice", what, x)
		}
		seen[x] = true
	}
	return nil
}

// ExpandOptions change how a grid expands into cells.
type ExpandOptions struct {
	// TracesDir, when set, makes recorded traces read in full from
	// TracesDir/<file> instead of their embedded cuts.
	TracesDir string
}

// Cells expands the grid into its cells, in a fixed order: workloads then
// traces as the grid lists them; policies common first, then the entry's own;
// then models, windows and seeds as listed. Recorded traces are not seeded
// and run once, at seed 0.
func (g *Grid) Cells(opt ExpandOptions) ([]Cell, error) {
	var cells []Cell
	figWin := int(g.Figures.Window)
	if figWin == 0 {
		figWin = int(g.Windows[len(g.Windows)/2])
	}
	add := func(base Cell, policies []string, seeds []uint64) {
		for _, p := range mergePolicies(g.Policies, policies) {
			for _, m := range g.Models {
				for _, w := range g.Windows {
					for i, s := range seeds {
						c := base
						c.Policy, c.Model, c.WindowTokens, c.Seed = p, m, int(w), s
						c.Series = int(w) == figWin && i == 0
						cells = append(cells, c)
					}
				}
			}
		}
	}
	seeds := make([]uint64, len(g.Seeds))
	for i, s := range g.Seeds {
		seeds[i] = uint64(s)
	}
	for _, w := range g.Workload {
		add(Cell{Workload: w.Name}, w.Policies, seeds)
	}
	dir := opt.TracesDir
	if dir == "" {
		dir = g.dir
	}
	for _, t := range g.Trace {
		base := Cell{Workload: t.Name}
		switch {
		case t.File != "" && (opt.TracesDir != "" || t.Cut == ""):
			if dir == "" && !filepath.IsAbs(t.File) {
				return nil, fmt.Errorf("trace %q: file %s needs a traces directory (no cut is embedded)", t.Name, t.File)
			}
			path := t.File
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			base.Trace, base.Path, base.Format = "full", path, t.Format
		default:
			base.Trace, base.Path, base.Format = "cut", t.Cut, "canonical"
		}
		add(base, t.Policies, []uint64{0})
	}
	return cells, nil
}

// mergePolicies returns common followed by own, without repeats.
func mergePolicies(common, own []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range append(append([]string(nil), common...), own...) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

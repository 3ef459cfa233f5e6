package bench

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/blueprints"
	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads/importers"
	"github.com/ctxsim/ctxsim/workloads/synthetic"
)

// cuts are the small canonical cuts of the recorded sessions that the
// default grid runs on a fresh clone (see testdata/traces/README.md).
//
//go:embed testdata/traces/*.jsonl
var cuts embed.FS

// Simulate runs one cell through the simulator: it builds the cell's trace
// (a synthetic workload at the cell's seed, an embedded cut, or a recorded
// session imported from its path), looks up the model profile and replays
// the trace through the cell's policy at the cell's window.
func Simulate(ctx context.Context, c Cell) (Result, error) {
	res, _, err := simulate(ctx, c)
	return res, err
}

// simulate also returns the count of trace events applied, for the engine
// speed benchmarks.
func simulate(ctx context.Context, c Cell) (Result, int, error) {
	prof, err := sim.LookupProfile(c.Model)
	if err != nil {
		return Result{}, 0, err
	}
	tr, err := loadTrace(c)
	if err != nil {
		return Result{}, 0, err
	}
	cfg := sim.Config{Policy: c.Policy, Model: prof, Window: c.WindowTokens, Seed: c.Seed}
	var rec *seriesRecorder
	if c.Series {
		rec = &seriesRecorder{s: &Series{}, order: regionOrder(c.Policy)}
		cfg.Series = rec
	}
	out, err := sim.Run(ctx, sim.SliceSource(tr.hdr, tr.events), cfg)
	if err != nil {
		return Result{}, 0, err
	}
	res := Result{Metrics: map[string]float64{}}
	for _, d := range sim.MetricDefs() {
		res.Metrics[d.Key] = out.Metrics.Get(d.Key)
	}
	res.clean()
	lo := 0
	for _, b := range out.RecallByDepth {
		if b.Probes > 0 {
			res.DepthRecall = append(res.DepthRecall, DepthBucket{MinTokens: lo, MaxTokens: b.UpTo, Probes: b.Probes, Hits: b.Hits})
		}
		lo = b.UpTo
	}
	for _, d := range out.DeadByRegion {
		res.DeadByRegion = append(res.DeadByRegion, RegionDead{Region: d.Name, Tokens: d.Tokens})
	}
	if rec != nil {
		res.Series = rec.finish()
	}
	return res, out.Events, nil
}

// seriesRecorder keeps the per-request samples of one run for the figures.
type seriesRecorder struct {
	s       *Series
	order   []string // the blueprint's region order, when known
	regions map[string]int
	rows    []map[string]int
}

func (r *seriesRecorder) Request(s sim.RequestSample) {
	r.s.RequestTokens = append(r.s.RequestTokens, s.RequestTokens)
	r.s.PrefixTokens = append(r.s.PrefixTokens, s.StableTokens)
	if len(s.Regions) == 0 {
		r.rows = append(r.rows, nil)
		return
	}
	if r.regions == nil {
		r.regions = map[string]int{}
	}
	row := make(map[string]int, len(s.Regions))
	for _, rt := range s.Regions {
		row[rt.Name] = rt.Tokens
		r.regions[rt.Name] = 0
	}
	r.rows = append(r.rows, row)
}

// finish lays the occupancy out as a table over every region seen.
func (r *seriesRecorder) finish() *Series {
	if len(r.regions) == 0 {
		return r.s
	}
	// The blueprint's order first (the stack reads like the layout), then any
	// region it does not declare globally (a stage's own), by name.
	for _, name := range r.order {
		if _, ok := r.regions[name]; ok {
			r.s.Regions = append(r.s.Regions, name)
			delete(r.regions, name)
		}
	}
	r.s.Regions = append(r.s.Regions, slices.Sorted(maps.Keys(r.regions))...)
	for _, row := range r.rows {
		occ := make([]int, len(r.s.Regions))
		for j, name := range r.s.Regions {
			occ[j] = row[name]
		}
		r.s.Occupancy = append(r.s.Occupancy, occ)
	}
	return r.s
}

// regionOrder returns the declared order of the regions of a
// "regions:<blueprint>" policy (the global layout, then each stage's), or nil.
func regionOrder(policy string) []string {
	spec, err := sim.ParsePolicy(policy)
	if err != nil || spec.Arg == "" || !strings.HasPrefix(policy, "regions") {
		return nil
	}
	var bp *engine.Blueprint
	if src, err := blueprints.Source(spec.Arg); err == nil {
		bp, err = engine.ParseBlueprint(spec.Arg+".leviath", src, "")
		if err != nil {
			return nil
		}
	} else if bp, err = engine.LoadBlueprint(spec.Arg); err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(defs []*engine.RegionDef) {
		for _, d := range defs {
			if !seen[d.Name] {
				seen[d.Name] = true
				out = append(out, d.Name)
			}
		}
	}
	add(bp.RegionDefs)
	for _, st := range bp.StageDefs {
		add(st.Regions)
	}
	return out
}

// loadedTrace is one workload's events, held in memory: a run reads it
// without changing it, so runs of the same trace share it.
type loadedTrace struct {
	hdr    trace.Header
	events []trace.Event
}

// traceCache keeps generated and imported traces for the life of the
// process: a grid runs each trace under many policies and windows, and
// generating or importing it again each time would cost more than some runs.
var traceCache struct {
	sync.Mutex
	m map[string]*traceEntry
}

type traceEntry struct {
	once sync.Once
	tr   *loadedTrace
	err  error
}

func loadTrace(c Cell) (*loadedTrace, error) {
	key := fmt.Sprintf("%s\x00%s\x00%s\x00%s", c.Workload, c.Trace, c.Path, c.Format)
	if c.Trace == "" {
		key += fmt.Sprintf("\x00%d", c.Seed)
	}
	traceCache.Lock()
	if traceCache.m == nil {
		traceCache.m = map[string]*traceEntry{}
	}
	e := traceCache.m[key]
	if e == nil {
		e = &traceEntry{}
		traceCache.m[key] = e
	}
	traceCache.Unlock()
	e.once.Do(func() { e.tr, e.err = buildTrace(c) })
	return e.tr, e.err
}

func buildTrace(c Cell) (*loadedTrace, error) {
	tr := &loadedTrace{}
	keep := func(ev *trace.Event) error {
		tr.events = append(tr.events, *ev)
		return nil
	}
	switch c.Trace {
	case "":
		p, err := synthetic.Load(c.Workload, "")
		if err != nil {
			return nil, err
		}
		tr.hdr = synthetic.Header(p, c.Seed)
		if err := synthetic.Generate(p, c.Seed, keep); err != nil {
			return nil, err
		}
	case "cut":
		data, err := cuts.ReadFile("testdata/traces/" + c.Path)
		if err != nil {
			return nil, fmt.Errorf("trace %s: no embedded cut %q", c.Workload, c.Path)
		}
		if err := readCanonical(tr, data, c.Path); err != nil {
			return nil, err
		}
	case "full":
		f, err := importers.ParseFormat(c.Format)
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", c.Workload, err)
		}
		in, err := os.Open(c.Path)
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", c.Workload, err)
		}
		defer in.Close()
		hdr, _, err := importers.Import(in, c.Path, importers.Options{Format: f}, keep)
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", c.Workload, err)
		}
		tr.hdr = hdr
	default:
		return nil, fmt.Errorf("cell %s: unknown trace kind %q (want cut or full)", c, c.Trace)
	}
	return tr, nil
}

func readCanonical(tr *loadedTrace, data []byte, name string) error {
	r := trace.NewReader(bytes.NewReader(data), name)
	hdr, err := r.Header()
	if err != nil {
		return err
	}
	tr.hdr = hdr
	for r.Scan() {
		ev := *r.Event()
		tr.events = append(tr.events, ev)
	}
	return r.Err()
}

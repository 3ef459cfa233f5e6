package bench

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
)

// Cell is one run of a grid: one workload × policy × model × window × seed.
type Cell struct {
	// Workload is a synthetic generator's name ("coder") or a recorded trace's
	// name as the grid gives it ("cc-spotter-258c7280").
	Workload string `json:"workload"`
	// Trace is how a recorded trace is read: "cut" (the small cut embedded in
	// testdata) or "full" (the whole recording from a path). Empty for
	// synthetic workloads.
	Trace string `json:"trace,omitempty"`
	// Path locates a recorded trace: a file name inside the embedded cuts for
	// "cut", a file path for "full". It is not part of the cell's identity, so
	// shards run on machines with different paths still merge.
	Path string `json:"path,omitempty"`
	// Format is a recorded trace's importer format ("claude-code", "canonical", ...).
	Format string `json:"format,omitempty"`
	Policy string `json:"policy"`
	Model  string `json:"model"`
	// WindowTokens is the context window the run simulates.
	WindowTokens int    `json:"window_tokens"`
	Seed         uint64 `json:"seed"`
	// Series asks the run to record per-request series (request tokens,
	// prefix-stable tokens, region occupancy) for the run figures. It is not
	// part of the cell's identity.
	Series bool `json:"series,omitempty"`
}

// key is the canonical identity of a cell: every field that changes its
// results, and nothing else.
func (c Cell) key() string {
	return strings.Join([]string{
		"workload=" + c.Workload,
		"trace=" + c.Trace,
		"format=" + c.Format,
		"policy=" + c.Policy,
		"model=" + c.Model,
		"window=" + strconv.Itoa(c.WindowTokens),
		"seed=" + strconv.FormatUint(c.Seed, 10),
	}, "/")
}

// ID is the cell's stable, filesystem-safe identifier: a readable part made of
// its fields, and a hash of its canonical key so that two cells whose names
// differ only in characters that had to be replaced never collide.
func (c Cell) ID() string {
	h := fnv.New64a()
	h.Write([]byte(c.key()))
	parts := []string{safe(c.Workload)}
	if c.Trace != "" {
		parts = append(parts, safe(c.Trace))
	}
	parts = append(parts, safe(c.Policy), safe(c.Model), FormatWindow(c.WindowTokens), "s"+strconv.FormatUint(c.Seed, 10))
	return fmt.Sprintf("%s.%016x", strings.Join(parts, "."), h.Sum64())
}

// BenchName is the cell's sub-benchmark name: workload=…/policy=…/model=…/window=….
// Slashes inside a value would split the name, so they are replaced.
func (c Cell) BenchName() string {
	v := func(s string) string { return strings.NewReplacer("/", "-", " ", "_").Replace(s) }
	w := c.Workload
	if c.Trace != "" {
		w += "@" + c.Trace
	}
	return "workload=" + v(w) + "/policy=" + v(c.Policy) + "/model=" + v(c.Model) + "/window=" + FormatWindow(c.WindowTokens)
}

// String returns the cell's canonical key, for messages.
func (c Cell) String() string { return c.key() }

// safe keeps letters, digits, '-' and '_', and maps everything else to '-'.
func safe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// Result is what one run produced.
type Result struct {
	// Metrics holds the run's metrics by name (see Metrics). A metric that is
	// undefined for the run (reference recall of a synthetic workload) is absent.
	Metrics map[string]float64 `json:"metrics"`
	// Series holds the per-run data of the run figures; nil unless the cell
	// asked for it.
	Series *Series `json:"series,omitempty"`
	// DepthRecall is fact recall by depth (tokens between a fact's arrival
	// and its probe), in buckets; empty when the workload has no probes.
	DepthRecall []DepthBucket `json:"depth_recall,omitempty"`
	// DeadByRegion splits a region layout's dead tokens by region, by name
	// (see sim.Result.DeadByRegion); empty for flat policies.
	DeadByRegion []RegionDead `json:"dead_by_region,omitempty"`
}

// RegionDead is the dead tokens of one region over a run. Region is "" for
// blocks the engine adds outside every region.
type RegionDead struct {
	Region string `json:"region"`
	Tokens int    `json:"tokens"`
}

// Series is the per-request data of one run.
type Series struct {
	// RequestTokens is the size of each request, in tokens.
	RequestTokens []int `json:"request_tokens"`
	// PrefixTokens is, for each request, the tokens of its common prefix with
	// the previous request (0 for the first).
	PrefixTokens []int `json:"prefix_tokens"`
	// Regions names the regions of a region layout, in layout order; empty for
	// flat policies.
	Regions []string `json:"regions,omitempty"`
	// Occupancy[i][j] is the tokens of region Regions[j] in request i.
	Occupancy [][]int `json:"occupancy,omitempty"`
}

// DepthBucket is fact recall for probes whose depth falls in [MinTokens, MaxTokens).
type DepthBucket struct {
	MinTokens int `json:"min_tokens"`
	MaxTokens int `json:"max_tokens"`
	Probes    int `json:"probes"`
	Hits      int `json:"hits"`
}

// RunFunc runs one cell. It must be deterministic (the same cell gives the
// same Result), single-threaded, and return promptly once ctx is done.
type RunFunc func(ctx context.Context, c Cell) (Result, error)

// Record is one finished cell as the sweep stores it: the cell, and either
// its result or the error that stopped it.
type Record struct {
	ID   string `json:"id"`
	Cell Cell   `json:"cell"`
	// Version is the ResultsVersion of the ctxsim that ran the cell.
	Version int `json:"version"`
	// Error is the run's error; empty when it succeeded.
	Error string `json:"error,omitempty"`
	Result
}

// ResultsVersion numbers what the simulator computes. It goes up with every
// change to the engine, the simulator or the workloads that changes any
// cell's results, so that a sweep re-runs the cells an older ctxsim stored
// instead of resuming on them, and a report or merge never mixes the two.
//
//	1: a block listed twice stays present while one listing is sent
//	   (dead and re-prefill waste of the region policy and as-recorded).
const ResultsVersion = 1

// CheckVersions returns an error naming the first of recs that an older or
// newer ctxsim ran (see ResultsVersion), and how many there are.
func CheckVersions(recs []*Record) error {
	n := 0
	var first *Record
	for _, r := range recs {
		if r.Version != ResultsVersion {
			if n++; first == nil {
				first = r
			}
		}
	}
	if n > 0 {
		return fmt.Errorf("%d of %d cells were run by another ctxsim (cell %s: results version %d, this one's is %d): run ctxsim sweep again to re-run them",
			n, len(recs), first.ID, first.Version, ResultsVersion)
	}
	return nil
}

// OK reports whether the run succeeded.
func (r *Record) OK() bool { return r.Error == "" }

// clean drops metrics that JSON cannot carry (NaN, ±Inf): they mean
// "undefined for this run", which an absent key says as well.
func (r *Result) clean() {
	for k, v := range r.Metrics {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(r.Metrics, k)
		}
	}
}

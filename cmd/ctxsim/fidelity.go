package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads"
	"github.com/ctxsim/ctxsim/workloads/importers"
)

// Fidelity (DESIGN.md §6): how well the simulator reproduces what a recorded
// session reported. Two checks, each where the trace supports it:
//
//   - exact requests (claude-trace): as-recorded with the anthropic cache
//     model; simulated vs recorded cache-read tokens per main-model request.
//     Token counts come from the profile's tokenizer, so simulated tokens are
//     scaled by one factor, recorded ÷ simulated prompt tokens of the first
//     request; a request is a hit when it lands within 2 % of the recorded
//     figure. Misses are listed with their cause.
//   - messages only (Claude Code and the other importers): a flat replay's
//     prompt tokens vs the recorded prompt (uncached + cache read + cache
//     write), after one constant offset fitted on the first request; mean
//     absolute % error up to the first recorded compaction, and over the
//     whole session replaying the recorded compactions (as-recorded). Then
//     flat-compact at Claude Code's threshold (window − 13K) on the recorded
//     model's window: where it compacts vs where the agent did.
//
// The system prompt and tool schemas a session file does not record are in
// the trace already: the importer sizes them from the first usage record
// (meta system_estimated_tokens, an elided system event), so the replayed
// requests carry them, the compaction threshold sees them, and the fitted
// offset is what remains: close to zero (the tokenizer's count of the first
// request's visible content against the importer's 4 bytes per token). It is
// still fitted and reported, so that a reader sees the estimate hold.

type fidelityReport struct {
	File     string `json:"file"`
	Format   string `json:"format"`
	Model    string `json:"model"`
	Profile  string `json:"profile"`
	Window   int    `json:"window"`
	Requests int    `json:"requests"` // recorded main-model requests with usage

	// Exact-request traces.
	CacheReadScale  float64        `json:"cache_read_scale,omitempty"`
	CacheReadWithin int            `json:"cache_read_within_2pct,omitempty"`
	CacheReadPct    float64        `json:"cache_read_within_2pct_share,omitempty"`
	CacheReadMAPE   float64        `json:"cache_read_mape_pct,omitempty"`
	PromptMAPE      float64        `json:"prompt_mape_pct,omitempty"`
	Misses          []fidelityMiss `json:"misses,omitempty"`

	// Message traces.
	// SystemEstimated is the importer's estimate of the unrecorded system
	// prompt and tool schemas (header meta), in tokens; 0 when recorded.
	SystemEstimated    int     `json:"system_estimated_tokens,omitempty"`
	Offset             int     `json:"prompt_offset_tokens,omitempty"`
	FlatMAPE           float64 `json:"flat_prompt_mape_pct,omitempty"`
	FlatUpTo           int     `json:"flat_requests_compared,omitempty"`
	RecordedMAPE       float64 `json:"as_recorded_prompt_mape_pct,omitempty"`
	RecordedCompactAt  int     `json:"recorded_compaction_request,omitempty"`
	SimCompactAt       int     `json:"flat_compact_request,omitempty"`
	SimCompactAdjAt    int     `json:"flat_compact_request_offset_adjusted,omitempty"`
	SimCompactScaledAt int     `json:"flat_compact_request_scale_adjusted,omitempty"`
	Scale              float64 `json:"prompt_scale,omitempty"`
	ScaledMAPE         float64 `json:"flat_prompt_scaled_mape_pct,omitempty"`
	ScaledFrom         int     `json:"scaled_from_request,omitempty"`
	Threshold          int     `json:"flat_compact_threshold,omitempty"`

	Notes []string `json:"notes,omitempty"`
}

type fidelityMiss struct {
	Request   int     `json:"request"`
	Recorded  int     `json:"recorded_cache_read"`
	Simulated int     `json:"simulated_cache_read"`
	ErrPct    float64 `json:"err_pct"`
	Cause     string  `json:"cause"`
}

// samples records the simulator's per-request figures.
type samples []sim.RequestSample

func (s *samples) Request(r sim.RequestSample) {
	r.Request = nil
	r.Regions = nil
	*s = append(*s, r)
}

func cmdFidelity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fidelity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	// Anthropic's tokenizer is not public; a BPE vocabulary scaled by one
	// fitted factor tracks it far better than a bytes-per-token rule, whose
	// ratio drifts with the kind of content (prose, code, JSON).
	tokName := fs.String("tokenizer", "o200k_base", "tokenizer for simulated counts (bytes/4, bytes/3.5, o200k_base, cl100k_base; empty: the profile's)")
	profile := fs.String("profile", "", "model profile to simulate with (default: an embedded profile of the recorded model's family, at the recorded window)")
	var f importFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ctxsim fidelity [flags] FILE...")
		fmt.Fprintln(stderr, "Compares simulated and recorded usage on recorded sessions (DESIGN.md §6).")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usagef("fidelity: want FILE...")
	}
	opt, err := f.options(stderr)
	if err != nil {
		return err
	}
	opt.NoProbes = true // not needed here; keeps replay fast
	var reports []fidelityReport
	failed := false
	for _, path := range fs.Args() {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := fidelity(ctx, path, opt, *profile, *tokName)
		if err != nil {
			// One unreadable file (a README in a glob) does not hide the
			// figures of the others; the exit status still says it failed.
			var ue usageError
			if errors.As(err, &ue) {
				return err
			}
			fmt.Fprintln(stderr, "ctxsim: fidelity:", err)
			failed = true
			continue
		}
		reports = append(reports, *r)
		if !*asJSON {
			printFidelity(stdout, r)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			return err
		}
	}
	if failed {
		return errSilent
	}
	return nil
}

// recorded is one main-model inference of the trace: its usage, if any.
type recorded struct {
	usage     *trace.Usage
	afterComp bool   // first inference after a recorded compaction
	trigger   string // that compaction's trigger
}

func fidelity(ctx context.Context, path string, opt workloads.ImportOptions, profName, tok string) (*fidelityReport, error) {
	src, err := workloads.OpenTrace(path, opt)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	h, err := src.Header()
	if err != nil {
		return nil, err
	}
	var evs []trace.Event
	var infs []recorded
	var lastUsage *trace.Usage
	exact, comp, trigger := false, false, ""
	for src.Scan() {
		e := *src.Event()
		evs = append(evs, e)
		if e.Sidechain {
			continue
		}
		switch e.Kind {
		case trace.KindUsage:
			if e.Usage != nil && !e.Usage.Side {
				lastUsage = e.Usage
				exact = exact || e.Usage.Request != nil
			}
		case trace.KindCompaction:
			comp = true
			if e.Compaction != nil {
				trigger = e.Compaction.Trigger
			}
		case trace.KindAssistant:
			infs = append(infs, recorded{usage: lastUsage, afterComp: comp, trigger: trigger})
			lastUsage, comp, trigger = nil, false, ""
		}
	}
	if err := src.Err(); err != nil {
		return nil, err
	}
	rep := &fidelityReport{File: filepath.Base(path), Format: h.Source, Model: h.Model, Window: h.Window}
	if v, ok := h.Meta[importers.MetaSystemEstimatedTokens]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: header meta %s: want a token count, got %q", path, importers.MetaSystemEstimatedTokens, v)
		}
		rep.SystemEstimated = n
	}
	for _, r := range infs {
		if r.usage != nil {
			rep.Requests++
		}
	}
	if rep.Requests == 0 {
		rep.Notes = append(rep.Notes, "the trace records no per-request usage: nothing to compare")
		return rep, nil
	}
	prof, err := fidelityProfile(h, profName)
	if err != nil {
		return nil, err
	}
	rep.Profile, rep.Window = prof.Name, prof.Window
	if tok != "" {
		if _, err := sim.NewTokenizer(tok); err != nil {
			return nil, usagef("fidelity: --tokenizer: %v", err)
		}
		prof.Tokenizer = tok
	}
	run := func(policy string) ([]sim.RequestSample, *sim.Result, error) {
		var s samples
		res, err := sim.Run(ctx, sim.SliceSource(h, evs), sim.Config{Policy: policy, Model: prof, Window: prof.Window, NoRefetch: true, Series: &s})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", path, policy, err)
		}
		if len(s) != len(infs) {
			return nil, nil, fmt.Errorf("%s: %s made %d requests for %d recorded inferences", path, policy, len(s), len(infs))
		}
		return s, res, nil
	}
	if exact {
		s, _, err := run("as-recorded")
		if err != nil {
			return nil, err
		}
		exactFidelity(rep, infs, s)
		return rep, nil
	}
	return rep, messageFidelity(rep, infs, run, prof)
}

// fidelityProfile picks the embedded profile of the recorded model's family,
// set to the recorded window and named after the recorded model.
func fidelityProfile(h trace.Header, name string) (sim.Profile, error) {
	if name == "" {
		m := strings.ToLower(h.Model)
		switch {
		case strings.Contains(m, "haiku"):
			name = "claude-haiku-4.5"
		case strings.Contains(m, "sonnet"):
			name = "claude-sonnet-5.5"
		case strings.Contains(m, "claude"), strings.Contains(m, "opus"):
			name = "claude-opus-5"
		case strings.HasPrefix(m, "gpt-4"):
			name = "gpt-4"
		case strings.HasPrefix(m, "gpt"), strings.HasPrefix(m, "o"):
			name = "gpt-5.5"
		default:
			name = "claude-sonnet-5.5"
		}
	}
	p, err := sim.LookupProfile(name)
	if err != nil {
		return p, usagef("fidelity: --profile: %v", err)
	}
	if h.Window > 0 {
		p.Window = h.Window
		if p.MaxOutput > p.Window/4 {
			p.MaxOutput = p.Window / 4
		}
	}
	if h.Model != "" {
		p.Name = h.Model + " (" + name + ")"
	}
	return p, nil
}

func exactFidelity(rep *fidelityReport, infs []recorded, s []sim.RequestSample) {
	// One scale: the recorded prompt of the first request over the simulated
	// tokens of the same request (the provider's tokenizer vs the profile's).
	for i, r := range infs {
		if r.usage != nil && s[i].RequestTokens > 0 {
			rep.CacheReadScale = float64(r.usage.Prompt) / float64(s[i].RequestTokens)
			break
		}
	}
	var sumErr, sumPrompt float64
	n := 0
	for i, r := range infs {
		u := r.usage
		if u == nil {
			continue
		}
		if u.Prompt > 0 {
			sumPrompt += 100 * math.Abs(float64(s[i].RequestTokens)*rep.CacheReadScale-float64(u.Prompt)) / float64(u.Prompt)
		}
		simRead := int(math.Round(float64(s[i].CacheReadTokens) * rep.CacheReadScale))
		errPct := 0.0
		switch {
		case u.CacheRead > 0:
			errPct = 100 * math.Abs(float64(simRead-u.CacheRead)) / float64(u.CacheRead)
		case simRead > 0:
			errPct = 100
		}
		sumErr += errPct
		n++
		if errPct <= 2 {
			rep.CacheReadWithin++
			continue
		}
		rep.Misses = append(rep.Misses, fidelityMiss{Request: i + 1, Recorded: u.CacheRead, Simulated: simRead, ErrPct: round2(errPct), Cause: missCause(i, infs, s, simRead)})
	}
	rep.CacheReadPct = round2(100 * float64(rep.CacheReadWithin) / float64(n))
	rep.CacheReadMAPE = round2(sumErr / float64(n))
	rep.PromptMAPE = round2(sumPrompt / float64(n))
	rep.CacheReadScale = math.Round(rep.CacheReadScale*1e4) / 1e4
}

// missCause explains a miss from the recorded figures around it.
func missCause(i int, infs []recorded, s []sim.RequestSample, simRead int) string {
	u := infs[i].usage
	var prev *trace.Usage
	for j := i - 1; j >= 0; j-- {
		if infs[j].usage != nil {
			prev = infs[j].usage
			break
		}
	}
	switch {
	case u.CacheRead == 0 && simRead > 0:
		return fmt.Sprintf("the provider read nothing from the cache (wrote %d): the prefix written before was not reused", u.CacheWrite)
	case u.CacheRead > 0 && simRead == 0:
		if infs[i].afterComp {
			return "first request after a compaction: the provider still had the system prompt and tools cached from before, which the simulated cache also holds only if the same breakpoints were written"
		}
		return "the simulated cache has no entry for this prefix (breakpoint or minimum-size rule differs)"
	case prev != nil && u.CacheRead > prev.Prompt:
		return fmt.Sprintf("the provider read %d tokens, more than the whole previous request (%d): a prefix cached by a concurrent request", u.CacheRead, prev.Prompt)
	case simRead > u.CacheRead:
		return fmt.Sprintf("simulated read reaches a later breakpoint than the provider did (%d tokens more): the recorded write of the previous request ended earlier", simRead-u.CacheRead)
	default:
		return fmt.Sprintf("the provider read %d tokens more than simulated: token-count scale differs on this prefix (tokenizer ratio)", u.CacheRead-simRead)
	}
}

func messageFidelity(rep *fidelityReport, infs []recorded, run func(string) ([]sim.RequestSample, *sim.Result, error), prof sim.Profile) error {
	first, compAt := -1, -1
	for i, r := range infs {
		if r.usage != nil && first < 0 {
			first = i
		}
		// A new session (Aider) or a restart without a summary is not a
		// compaction a threshold policy could reproduce.
		if r.afterComp && compAt < 0 && r.trigger != "session" && r.trigger != "restart" {
			compAt = i
		}
	}
	flat, _, err := run("flat")
	if err != nil {
		return err
	}
	rep.Offset = infs[first].usage.Prompt - flat[first].RequestTokens
	upTo := len(infs)
	if compAt >= 0 {
		upTo = compAt
		rep.RecordedCompactAt = compAt + 1
	}
	// The system prompt and tools differ between models, so a session that
	// switches model (Claude Code's /model) gets the offset refitted on the
	// first request of each model.
	offsets := modelOffsets(infs, flat, 1)
	if len(offsets) > 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d models in the session: the offset is refitted on the first request of each", len(offsets)))
	}
	rep.FlatMAPE, rep.FlatUpTo = promptMAPE(infs[:upTo], flat[:upTo], offsets, 1)
	// The offset leaves the tokenizer ratio: recorded tokens grow faster or
	// slower than simulated ones. One scale, the growth ratio over the first
	// scaleFit requests of the first model, fitted there and applied to the rest.
	fit := -1
	for i, n := first+1, 0; i < upTo; i++ {
		if u := infs[i].usage; u != nil && u.Model == infs[first].usage.Model {
			fit = i
			if n++; n == scaleFit {
				break
			}
		}
	}
	if fit > 0 && flat[fit].RequestTokens > flat[first].RequestTokens {
		k := float64(infs[fit].usage.Prompt-infs[first].usage.Prompt) / float64(flat[fit].RequestTokens-flat[first].RequestTokens)
		rep.Scale = math.Round(k*1e4) / 1e4
		rep.ScaledMAPE, _ = promptMAPE(infs[fit+1:upTo], flat[fit+1:upTo], modelOffsets(infs, flat, k), k)
		rep.ScaledFrom = fit + 2
	}
	recd, _, err := run("as-recorded")
	if err != nil {
		return err
	}
	rep.RecordedMAPE, _ = promptMAPE(infs, recd, modelOffsets(infs, recd, 1), 1)
	// flat-compact at Claude Code's threshold (PEERS.md §B.6: the window less
	// up to 20K reserved for output, less 13K); then with the threshold
	// lowered by the offset (whatever of the system prompt and tools the
	// trace still lacks); then also in scaled tokens.
	rep.Threshold = prof.Window - min(20000, prof.MaxOutput) - 13000
	at := func(policy string) (int, error) {
		s, _, err := run(policy)
		if err != nil {
			return 0, err
		}
		for i := 1; i < len(s); i++ {
			if s[i].RequestTokens < s[i-1].RequestTokens/2 {
				return i + 1, nil
			}
		}
		return 0, nil
	}
	if rep.SimCompactAt, err = at(fmt.Sprintf("flat-compact(threshold=%d)", rep.Threshold)); err != nil {
		return err
	}
	if rep.Offset > 0 && rep.Offset < rep.Threshold {
		if rep.SimCompactAdjAt, err = at(fmt.Sprintf("flat-compact(threshold=%d)", rep.Threshold-rep.Offset)); err != nil {
			return err
		}
	}
	if rep.Scale > 0 {
		// The threshold in simulated tokens that corresponds to the agent's
		// own count: recorded ≈ rec₁ + k·(sim − sim₁).
		th := int(float64(rep.Threshold-infs[first].usage.Prompt)/rep.Scale) + flat[first].RequestTokens
		if th > 0 && th < prof.Window {
			if rep.SimCompactScaledAt, err = at(fmt.Sprintf("flat-compact(threshold=%d)", th)); err != nil {
				return err
			}
		}
	}
	return nil
}

// modelOffsets fits, per model, recorded − k·simulated tokens on the
// model's first request.
func modelOffsets(infs []recorded, s []sim.RequestSample, k float64) map[string]float64 {
	off := map[string]float64{}
	for i, r := range infs {
		if r.usage == nil {
			continue
		}
		if _, ok := off[r.usage.Model]; !ok {
			off[r.usage.Model] = float64(r.usage.Prompt) - k*float64(s[i].RequestTokens)
		}
	}
	return off
}

// promptMAPE is the mean absolute % error of k·simulated + the model's
// offset against the recorded prompt tokens, over requests with usage.
func promptMAPE(infs []recorded, s []sim.RequestSample, offsets map[string]float64, k float64) (float64, int) {
	var sum float64
	n := 0
	for i, r := range infs {
		if r.usage == nil || r.usage.Prompt == 0 {
			continue
		}
		pred := k*float64(s[i].RequestTokens) + offsets[r.usage.Model]
		sum += 100 * math.Abs(pred-float64(r.usage.Prompt)) / float64(r.usage.Prompt)
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return round2(sum / float64(n)), n
}

// scaleFit is how many requests after the first fit the tokenizer scale.
const scaleFit = 10

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func printFidelity(w io.Writer, r *fidelityReport) {
	fmt.Fprintf(w, "%s (%s, %s, window %d, profile %s): %d requests with usage\n", r.File, r.Format, r.Model, r.Window, r.Profile, r.Requests)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if r.CacheReadScale > 0 {
		fmt.Fprintf(w, "  as-recorded, anthropic cache: cache-read tokens within 2%% on %d of %d requests (%.1f%%), mean abs error %.2f%%; prompt tokens mean abs error %.2f%% (token scale %.4f fitted on request 1)\n",
			r.CacheReadWithin, r.Requests, r.CacheReadPct, r.CacheReadMAPE, r.PromptMAPE, r.CacheReadScale)
		for _, m := range r.Misses {
			fmt.Fprintf(w, "    miss at request %d: recorded %d, simulated %d (%.1f%%): %s\n", m.Request, m.Recorded, m.Simulated, m.ErrPct, m.Cause)
		}
	}
	if r.FlatUpTo > 0 {
		if r.SystemEstimated > 0 {
			fmt.Fprintf(w, "  system prompt and tool schemas not recorded: estimated by the importer at %d tokens from the first usage record\n", r.SystemEstimated)
		}
		fmt.Fprintf(w, "  flat replay: prompt tokens mean abs error %.2f%% over %d requests (offset %+d tokens fitted on request 1)\n", r.FlatMAPE, r.FlatUpTo, r.Offset)
		if r.Scale > 0 {
			fmt.Fprintf(w, "  with a tokenizer scale %.4f fitted on requests 2-%d: mean abs error %.2f%% over requests %d-%d\n", r.Scale, r.ScaledFrom-1, r.ScaledMAPE, r.ScaledFrom, r.FlatUpTo)
		}
		fmt.Fprintf(w, "  as-recorded (recorded compactions applied): mean abs error %.2f%% over all requests\n", r.RecordedMAPE)
		if r.RecordedCompactAt > 0 {
			fmt.Fprintf(w, "  compaction: recorded before request %d; flat-compact (threshold %d) at %s; threshold less the offset: %s; threshold in scaled tokens: %s\n",
				r.RecordedCompactAt, r.Threshold, reqOrNever(r.SimCompactAt, r.RecordedCompactAt), reqOrNever(r.SimCompactAdjAt, r.RecordedCompactAt), reqOrNever(r.SimCompactScaledAt, r.RecordedCompactAt))
		}
	}
}

func reqOrNever(at, rec int) string {
	if at == 0 {
		return "no request (never compacted)"
	}
	d := at - rec
	return fmt.Sprintf("request %d (%+d requests)", at, d)
}

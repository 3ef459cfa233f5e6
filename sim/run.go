package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// Source is a stream of trace events; *trace.Reader satisfies it. Event may
// return the same Event at every Scan (as a Reader does), but what an
// event's fields refer to (texts, calls, facts, its probe) must not change
// during the run: the run keeps them.
type Source interface {
	Header() (trace.Header, error)
	Scan() bool
	Event() *trace.Event
	Err() error
}

// SliceSource returns a Source over events held in memory (for tests and
// generators). The events are not copied and must not change during a run.
func SliceSource(h trace.Header, evs []trace.Event) Source {
	return &sliceSource{h: h, evs: evs, i: -1}
}

type sliceSource struct {
	h   trace.Header
	evs []trace.Event
	i   int
}

func (s *sliceSource) Header() (trace.Header, error) { return s.h, nil }
func (s *sliceSource) Scan() bool {
	if s.i+1 >= len(s.evs) {
		s.i = len(s.evs)
		return false
	}
	s.i++
	return true
}
func (s *sliceSource) Event() *trace.Event { return &s.evs[s.i] }
func (s *sliceSource) Err() error          { return nil }

// SeriesSink receives one sample per inference request, for figures. Samples
// are streamed: the run keeps none of them.
type SeriesSink interface {
	Request(s RequestSample)
}

// RequestSample is one request of a run.
type RequestSample struct {
	Index           int     // 1-based request number
	Time            float64 // virtual time the request was sent, seconds
	RequestTokens   int
	StableTokens    int // tokens in the common prefix with the previous request
	CacheReadTokens int
	Regions         []RegionTokens // per-region occupancy, sorted by name; nil for flat policies
	// Request is the request itself, for ctxsim inspect; valid only during
	// the call (the policy owns it, and later runs reuse its blocks once Run
	// returns: copy what you keep).
	Request *Request
}

// Config is one cell: a policy, a model profile, a window and a seed.
type Config struct {
	// Policy is a policy string: "flat", "flat-keep-system", "flat-compact",
	// "flat-clear-tools", "regions:<blueprint>", "as-recorded", "unbounded" or
	// "clairvoyant", with optional integer parameters as in
	// "flat-compact(threshold=150000,keep=3)". See ParsePolicy.
	Policy string
	Model  Profile
	Window int // tokens; 0 = the profile's window
	// Seed is recorded in the result. A run draws no random numbers itself
	// (workload generators take the seed), so equal inputs give equal output.
	Seed      uint64
	NoRefetch bool       // do not re-issue tool calls whose results were evicted
	Series    SeriesSink // optional

	// rebuild (tests only) makes the region policy convert every request
	// in full, without the engine's account of what stayed the same.
	rebuild bool
	// literalRuns (tests only) writes the runs of filler of stand-ins out
	// (the engine encodes them again), and the engine's requests' runs:
	// the simulator then sees no encoded run.
	literalRuns bool
	// walkAll (tests only) makes the meter walk every block past a change
	// and re-prefill, ignoring what a policy tracks.
	walkAll bool
}

// Result is the outcome of one run.
type Result struct {
	Workload string
	Policy   string
	Model    string
	Window   int
	Seed     uint64
	Metrics  Metrics
	Warnings []string
	// RecallByDepth is fact recall by depth: the tokens that entered the
	// context between the fact's arrival and its probe, in power-of-two buckets.
	RecallByDepth []DepthBucket
	// DeadByRegion splits the dead tokens (waste_dead_pct's numerator) by
	// the region of the blocks that held them, by name, leaving out regions
	// with none; nil for flat policies. Its sum is the run's dead tokens.
	// Blocks the engine adds outside any region (a closing "Continue." user
	// turn) count under the name "".
	DeadByRegion []RegionTokens
	Events       int // trace events applied (sidechain events excluded)
}

// DepthBucket counts probes whose depth is at most UpTo tokens (and more than
// the previous bucket's UpTo).
type DepthBucket struct {
	UpTo   int
	Probes int
	Hits   int
}

// Run replays src through the policy of cfg and measures it. A run is
// single-threaded and deterministic. The clairvoyant policy reads the whole
// trace first (it needs the future); every other policy streams.
func Run(ctx context.Context, src Source, cfg Config) (*Result, error) {
	s := scratches.get()
	defer scratches.put(s)
	return runWith(ctx, src, cfg, s)
}

// runWith is Run, growing the tables and arrays of s (see runScratch) and
// reclaiming them before it returns.
func runWith(ctx context.Context, src Source, cfg Config, s *runScratch) (*Result, error) {
	hdr, err := src.Header()
	if err != nil {
		return nil, err
	}
	spec, err := ParsePolicy(cfg.Policy)
	if err != nil {
		return nil, err
	}
	prof := cfg.Model
	if prof.Name == "" {
		return nil, errors.New("config: no model profile")
	}
	if err := prof.check(); err != nil {
		return nil, fmt.Errorf("model %s: %w", prof.Name, err)
	}
	window := cfg.Window
	if window == 0 {
		window = prof.Window
	}
	if window < 0 {
		return nil, fmt.Errorf("window %d: want a positive number of tokens", window)
	}
	tok, err := NewTokenizer(prof.Tokenizer)
	if err != nil {
		return nil, err
	}
	cm, err := newCacheModel(prof, &s.ant)
	if err != nil {
		return nil, err
	}
	e := &env{tok: freshTokenizer(tok), prof: prof, window: window, series: cfg.Series != nil, rebuild: cfg.rebuild, literalRuns: cfg.literalRuns,
		scratch: s, content: s.content, factIdx: s.factIdx, slabs: s.blocks, stats: s.stats}
	var r *runner
	defer func() { s.reclaim(e, r) }()
	var fut *future
	if spec.Name == "clairvoyant" {
		evs, err := readAll(ctx, src)
		if err != nil {
			return nil, err
		}
		fut = newFuture(evs)
		src = SliceSource(hdr, evs)
	}
	if e.content == nil {
		// The tool results of a SliceSource are counted first, so that the
		// maps with an entry per result are made at their size: growing
		// them was a fortieth of a run. A scratch's have grown already.
		if ss, ok := src.(*sliceSource); ok {
			for i := range ss.evs {
				if ss.evs[i].Kind == trace.KindToolResult {
					e.toolResults++
				}
			}
		}
		e.content = make(map[string]int32, e.toolResults)
		e.factIdx = map[string][]*Block{}
	}
	pol, err := newPolicy(spec, e, fut)
	if err != nil {
		return nil, err
	}
	r = &runner{cfg: cfg, env: e, pol: pol, fut: fut, prof: prof}
	r.m.init(e, cm)
	r.m.walkAll = cfg.walkAll
	_, flat := pol.(*flatPolicy)
	r.m.lazy = flat && !cfg.walkAll
	if err := r.run(ctx, src); err != nil {
		return nil, err
	}
	res := &Result{Workload: hdr.Workload, Policy: cfg.Policy, Model: prof.Name, Window: window, Seed: cfg.Seed, Events: r.events}
	r.m.finish(&res.Metrics, r.clock)
	res.RecallByDepth = r.m.depthBuckets()
	res.DeadByRegion = r.m.deadByRegion()
	res.Warnings = append(res.Warnings, e.warnings...)
	if ac, ok := cm.(*anthropicCache); ok && ac.Dropped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d cache breakpoints beyond the 4 allowed were ignored", ac.Dropped))
	}
	if rp, ok := pol.(*recordedPolicy); ok && !rp.sawExact {
		res.Warnings = append(res.Warnings, "as-recorded: the trace records no requests; replayed the recorded messages and compactions")
	}
	return res, nil
}

// run applies the events of src and the inferences they call for.
func (r *runner) run(ctx context.Context, src Source) error {
	// A SliceSource's events are read in place, not through the interface.
	ss, _ := src.(*sliceSource)
	var evs []trace.Event
	if r.stable = ss != nil; r.stable {
		evs = ss.evs[ss.i+1:]
		ss.i = len(ss.evs)
	}
	n := 0
	for {
		var ev *trace.Event
		if r.stable {
			if n == len(evs) {
				break
			}
			ev = &evs[n]
		} else {
			if !src.Scan() {
				break
			}
			ev = src.Event()
		}
		n++
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r.pos = n
		if ev.Sidechain {
			continue
		}
		r.events++
		if ev.Kind == trace.KindAssistant {
			r.drain()
			r.infer(ev)
			continue
		}
		if ev.Kind == trace.KindTask && r.m.taskText == "" && ev.Text != "" {
			r.m.taskText = ev.Text
			r.m.taskTokens = countText(r.env.tok, ev.Text)
			r.m.taskHash = hashContent(BlockTask, ev.ID, ev.Text, 0)
			r.m.taskSig = sigOf(ev.Text)
		}
		r.q = append(r.q, queued{due: r.dueTime(ev), seq: r.seq, ev: r.hold(ev)})
		r.seq++
	}
	if err := src.Err(); err != nil {
		return err
	}
	r.drain()
	if len(r.pending) > 0 {
		// Probes after the last inference are asked of the context the
		// policy would send next; that request is never sent, so what the
		// policy did to build it is not counted.
		e := r.env
		ev, co, si, so := e.evictions, e.compactions, e.sumIn, e.sumOut
		req := r.pol.request()
		r.evalProbes(req, false)
		e.evictions, e.compactions, e.sumIn, e.sumOut = ev, co, si, so
	}
	return nil
}

func readAll(ctx context.Context, src Source) ([]trace.Event, error) {
	var evs []trace.Event
	for src.Scan() {
		if len(evs)&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		evs = append(evs, *src.Event())
	}
	return evs, src.Err()
}

func newFuture(evs []trace.Event) *future {
	f := &future{uses: map[string][]int{}}
	for i := range evs {
		if p := evs[i].Probe; evs[i].Kind == trace.KindProbe && p != nil && p.Source != "" {
			f.uses[p.Source] = append(f.uses[p.Source], i+1)
		}
	}
	return f
}

func newPolicy(spec PolicySpec, e *env, fut *future) (policy, error) {
	reserve := spec.Int("reserve", reserveFor(e.prof, e.window))
	if reserve >= e.window {
		return nil, &SpecError{Spec: spec.Name, Param: "reserve", Err: fmt.Errorf("%d leaves nothing of the %d-token window", reserve, e.window)}
	}
	budget := e.window - reserve
	switch spec.Name {
	case "flat":
		return &flatPolicy{env: e, budget: budget}, nil
	case "flat-keep-system":
		return &flatPolicy{env: e, budget: budget, keepSystem: true}, nil
	case "flat-compact":
		// Claude Code auto-compacts at its effective window (the window minus
		// the output reserve) − 13K: 167K of 200K (PEERS.md §B.6). On small
		// windows, where that is under ¾ of the usable window, at ¾ of it.
		def := budget - 13000
		if def < budget*3/4 {
			def = budget * 3 / 4
		}
		// Keep the last 3 messages after the summary: MemGPT's
		// MESSAGE_SUMMARY_TRUNC_KEEP_N_LAST (PEERS.md §B.4).
		return &flatPolicy{env: e, budget: budget, compactAt: spec.Int("threshold", def),
			compactKeep: spec.Int("keep", 3), summaryMax: spec.Int("summary", summaryMaxTokens)}, nil
	case "flat-clear-tools":
		// Anthropic clear_tool_uses_20250919: trigger 100,000 input tokens,
		// keep 3 tool uses (PEERS.md §B.5); the trigger is capped at the usable
		// window so that clearing can happen on small windows at all.
		def := 100000
		if budget < def {
			def = budget
		}
		return &flatPolicy{env: e, budget: budget, clearAt: spec.Int("trigger", def), clearKeep: spec.Int("keep", 3)}, nil
	case "unbounded":
		return &flatPolicy{env: e, budget: math.MaxInt}, nil
	case "clairvoyant":
		return &flatPolicy{env: e, budget: budget, oracle: fut}, nil
	case "as-recorded":
		return &recordedPolicy{env: e, recorded: map[uint64]*Block{}}, nil
	case "regions":
		return newRegionPolicy(spec, e, budget)
	}
	return nil, &SpecError{Spec: spec.Name, Err: errors.New("unknown policy")}
}

// queued is an event waiting for its virtual time; ties go in insertion order.
type queued struct {
	due float64
	seq uint64
	ev  *trace.Event // see runner.hold
}

// eventQueue holds the events that arrived since the last inference, in
// arrival order, until drain applies them all.
type eventQueue []queued

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].due != q[j].due {
		return q[i].due < q[j].due
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

// sort puts the queue in order of due time, ties in insertion order. Events
// mostly arrive in that order already, which one pass checks.
func (q eventQueue) sort() {
	for i := 1; i < len(q); i++ {
		if q.Less(i, i-1) {
			sort.Sort(q) // (due, seq) is a total order: any sort gives the same
			return
		}
	}
}

type pendingProbe struct {
	probe *trace.Probe // the event's: it lasts as long as the queued events do
	depth int64
	src   *contentStat // the probe's source, if its stat was found
	memo  int32        // 1 + the index of the fact text's memo, if present made it
}

type runner struct {
	cfg  Config
	env  *env
	pol  policy
	fut  *future
	prof Profile
	m    meter

	q       eventQueue
	seq     uint64
	clock   float64
	anchor  float64 // virtual time the last inference finished
	anchorT float64 // recorded time of the last assistant event
	lastDue float64
	pos     int // events read
	events  int
	lastInf int // position of the last inference
	refetch int

	// stable: the source's events stay as they are for the whole run
	// (SliceSource), so the run holds them by pointer; else it copies them.
	stable   bool
	held     [][]trace.Event // copies of the queued events, heldLen each
	nheld    int             // events in held
	toolSlab []trace.Event   // backing for the kept tool results' copies
	pending  []pendingProbe

	// Reused by every inference: what evalProbes returns (read before its
	// next call) and a refetch turn (no policy keeps an event it observes).
	misses  []pendingProbe
	calls   []trace.ToolCall
	results []*contentStat
	call    trace.Event
	result  trace.Event
}

// heldLen is how many queued events an array of runner.held holds.
const heldLen = 64

// hold returns ev, or a copy of it that lasts until the queue is drained if
// the source may reuse it: copying every event, pointers and all, was a
// share of a run's write barriers.
func (r *runner) hold(ev *trace.Event) *trace.Event {
	if r.stable {
		return ev
	}
	i := r.nheld
	if i/heldLen == len(r.held) {
		r.held = append(r.held, make([]trace.Event, heldLen))
	}
	cp := &r.held[i/heldLen][i%heldLen]
	*cp = *ev
	r.nheld++
	return cp
}

// dueTime is when an event happens in virtual time: tool results after their
// tool latency from the inference that called them (parallel calls overlap),
// user turns after their think time; recorded times give the latency when
// the event does not.
func (r *runner) dueTime(ev *trace.Event) float64 {
	var due float64
	switch {
	case ev.Latency > 0 && ev.Kind == trace.KindToolResult:
		due = r.anchor + ev.Latency
	case ev.Latency > 0:
		due = math.Max(r.lastDue, r.anchor) + ev.Latency
	default:
		due = r.anchor + math.Max(0, ev.T-r.anchorT)
	}
	if due > r.lastDue {
		r.lastDue = due
	}
	return due
}

// drain applies the queued events in order of due time. Applying one queues
// nothing, so the queue is applied in place.
func (r *runner) drain() {
	q := r.q
	q.sort()
	for i := range q {
		it := &q[i]
		if it.due > r.clock {
			r.clock = it.due
		}
		r.apply(it.ev, it.due)
	}
	// The events q points to stay anyway (the source's, or held's), so q
	// is not cleared.
	r.q = q[:0]
	for i := 0; i < r.nheld; i += heldLen {
		clear(r.held[i/heldLen][:min(heldLen, r.nheld-i)]) // let the events' strings go
	}
	r.nheld = 0
}

func (r *runner) apply(ev *trace.Event, due float64) {
	switch ev.Kind {
	case trace.KindProbe:
		var depth int64 = -1
		st := r.env.lookup(ev.Probe.Source)
		if st != nil && st.entered {
			depth = r.env.arrived - st.arrivedAt
		}
		r.pending = append(r.pending, pendingProbe{probe: ev.Probe, depth: depth, src: st})
		return
	case trace.KindToolResult:
		// The run keeps every tool result: copies, if any, come from a slab.
		kept := ev
		if !r.stable {
			if len(r.toolSlab) == 0 {
				r.toolSlab = make([]trace.Event, 64)
			}
			kept = &r.toolSlab[0]
			r.toolSlab = r.toolSlab[1:]
			*kept = *ev
		}
		// Kept in the content stat of its id, which the policy's block of
		// it is recorded under: one map entry for both.
		st := r.env.stat(ev.ID)
		st.result, st.latency = kept, due-r.anchor
		r.env.cur, r.env.curID = st, ev.ID
		r.pol.observe(ev)
		r.env.cur = nil
		return
	}
	r.pol.observe(ev)
}

// infer runs the inference before an assistant event, and the refetch turn
// first when a probe missed a fact the agent can fetch again.
func (r *runner) infer(ev *trace.Event) {
	if r.fut != nil {
		r.fut.pos = r.lastInf + 1
	}
	for {
		req := r.pol.request()
		r.chargeSummaries()
		uncachedPrefill := r.m.measure(req, r.clock, r.cfg.Series)
		var calls []trace.ToolCall // most requests have no probe pending
		if len(r.pending) > 0 {
			calls = r.refetches(r.evalProbes(req, true))
		}
		if len(calls) == 0 {
			out := ev.OutputTokens
			if out == 0 {
				out = r.env.tok.Count(assistantText(ev))
			}
			r.finishInference(uncachedPrefill, out)
			break
		}
		// The model re-issues the calls instead of replying; their results
		// come back after the slowest tool's latency.
		r.refetch++
		call := &r.call
		*call = trace.Event{Kind: trace.KindAssistant, ID: "refetch#" + strconv.Itoa(r.refetch), ToolCalls: calls}
		r.finishInference(uncachedPrefill, r.env.tok.Count(assistantText(call)))
		r.env.refetching = true
		r.pol.observe(call)
		wait := 0.0
		for i, src := range r.results {
			cp := &r.result
			*cp = *src.result
			cp.CallID = calls[i].ID // the result answers the re-issued call
			r.env.cur, r.env.curID = src, cp.ID
			r.pol.observe(cp)
			wait = math.Max(wait, src.latency)
		}
		r.env.cur = nil
		r.env.refetching = false
		r.clock += wait
	}
	r.pol.observe(ev)
	r.anchor = r.clock
	r.anchorT = ev.T
	r.lastDue = r.clock
	r.lastInf = r.pos
}

// refetches returns the calls that fetch again what the probes in misses
// missed, the content of each in r.results, and records the facts lost.
func (r *runner) refetches(misses []pendingProbe) []trace.ToolCall {
	calls, results := r.calls[:0], r.results[:0]
	for i := range misses {
		p := &misses[i]
		var src *contentStat
		if !r.cfg.NoRefetch && p.probe.Refetch != nil {
			src = p.src
		}
		if src == nil || src.result == nil {
			r.m.lose(p)
			continue
		}
		calls = append(calls, *p.probe.Refetch)
		results = append(results, src)
	}
	r.calls, r.results = calls, results
	return calls
}

func (r *runner) finishInference(prefill, out int) {
	ttft := r.prof.TTFTBase + float64(prefill)/r.prof.PrefillTPS
	r.m.ttftSum += ttft
	r.m.output += int64(out)
	r.m.cost += float64(out) * r.prof.Output / 1e6
	r.clock += ttft + float64(out)/r.prof.DecodeTPS
}

// chargeSummaries charges the summariser calls a policy made while building
// its request: their tokens at the model's prices, and their time.
func (r *runner) chargeSummaries() {
	in, out := r.env.sumIn, r.env.sumOut
	if in == 0 && out == 0 {
		return
	}
	r.env.sumIn, r.env.sumOut = 0, 0
	r.m.cost += (float64(in)*r.prof.Input + float64(out)*r.prof.Output) / 1e6
	r.clock += r.prof.TTFTBase + float64(in)/r.prof.PrefillTPS + float64(out)/r.prof.DecodeTPS
}

func (r *runner) evalProbes(req *Request, measured bool) []pendingProbe {
	misses := r.misses[:0]
	for i := range r.pending {
		p := &r.pending[i]
		if p.src == nil {
			p.src = r.env.lookup(p.probe.Source) // arrived since the probe
		}
		listing := r.env.factIdx[p.probe.Fact]
		var found *Block
		if measured {
			found = r.m.present(req, p, listing)
		} else {
			for _, b := range req.Blocks {
				if b.Has(p.probe) {
					found = b
					break
				}
			}
		}
		hit := found != nil
		r.m.probe(p, hit)
		if hit {
			// The block the fact was found in (its source, a summary, a
			// message quoting it) was used: its sends so far were not dead.
			r.m.used(found)
		}
		if !hit {
			misses = append(misses, *p)
		}
		// The content this probe needed was used: its sends so far were not dead.
		if st := p.src; st != nil {
			for _, b := range st.blocks {
				r.m.used(b)
			}
		}
		for _, b := range listing {
			r.m.used(b)
		}
	}
	r.pending = r.pending[:0]
	r.misses = misses
	return misses
}

// meter accumulates the metrics of DESIGN.md §6 request by request.
type meter struct {
	env   *env
	cache cacheModel

	taskText   string
	taskTokens int // tokens of taskText
	taskHash   uint64
	taskSig    gramSig // trigrams of taskText
	taskIn     int     // blocks holding the task text in the current request

	prev  []*Block
	tot   int       // tokens of prev
	rtot  int       // tokens of prev's refetched blocks
	lz    int       // prev's blocks from lz on are listed, see add
	k     int64     // requests that counted the listed blocks' re-prefill
	fresh []int32   // the request's blocks absent from the last one, by index
	sigs  []gramSig // filters of the request's first blocks, see present
	valid int       // how many of sigs are written, not stale
	// sigs[dropped.lo:dropped.hi] are the filters of blocks a flat policy
	// dropped since present last read sigs: present takes them out, so
	// that requests no probe reads do not move the others.
	dropped span
	view    prefixView
	ratios  []float64 // per-pair prefix stability
	sizes   []int32   // request tokens, for input growth

	listedTokens int64 // of the listed places, but refetched ones
	walkAll      bool  // see Config.walkAll
	// counts is set from a policy's first tracked request on (see
	// countPlaces): then Block.places counts a block's places in the last
	// request, each walked block adding one and each that may have left
	// taking one, so that a block that left need not be looked for among
	// the kept ones. Before, it is the last request whose walk saw the
	// block (0 once it left), which costs less where a walk sees most
	// blocks again (a flat policy's requests).
	counts bool
	// lazy is set for a flat policy, whose requests neither track nor
	// repeat blocks: then the blocks past the read point but the first are
	// re-prefilled by counting, not walked, see settle.
	lazy bool

	requests                        int
	input, read, write, output      int64
	reprefill, refetch              int64
	dead, deadRep                   int64   // sums of the blocks' pending tokens, see pend
	deadBy                          []int64 // dead by block slot - 1
	cost, ttftSum                   float64
	peak                            int
	overWindow                      int // requests larger than the window
	taskHits, firstLoss, taskReqs   int
	factProbes, factHits, refProbes int
	refHits                         int
	lost                            int               // distinct facts lost, see lose
	lostMore                        map[lostFact]bool // those lost with a text another fact's memo holds
	memo                            map[string]int32  // fact text -> its index in memos
	memos                           []factMemo
	depth                           []DepthBucket // by bucket; UpTo 0 if none yet

	resent  keyCounts // see lazy
	resends int       // requests that re-prefilled from a key, see settle
	nextKey int       // the last key given
	from    int       // the key this request re-prefills from, counted once it is measured
}

func (m *meter) init(e *env, cm cacheModel) {
	m.env, m.cache = e, cm
	if s := e.scratch; s != nil {
		m.ratios, m.sizes, m.lostMore, m.memo, m.memos = s.ratios, s.sizes, s.lostMore, s.memo, s.memos
		m.view.chains, m.view.cum, m.sigs, m.fresh, m.deadBy, m.prev = s.chains, s.cum, s.sigs, s.fresh, s.deadBy, s.prev
	}
	if m.memo == nil {
		m.lostMore = map[lostFact]bool{}
		m.memo = map[string]int32{}
	}
}

// measure meters one request sent at time now and returns the tokens the
// model had to prefill (not read from cache).
func (m *meter) measure(req *Request, now float64, sink SeriesSink) int {
	blocks, prev := req.Blocks, m.prev
	n := len(blocks)
	m.requests++
	r := m.requests
	// The same blocks (by identity) as last time need no work; equal content
	// (by hash) still counts as a common prefix.
	lcpPtr := min(req.same, n, len(prev))
	for lcpPtr < n && lcpPtr < len(prev) && blocks[lcpPtr] == prev[lcpPtr] {
		lcpPtr++
	}
	lcp := lcpPtr
	for lcp < n && lcp < len(prev) && blocks[lcp].Hash == prev[lcp].Hash {
		lcp++
	}
	v := &m.view
	v.blocks = blocks
	v.valid = min(v.valid, lcpPtr)
	if cap(v.chains) < n || cap(v.cum) < n {
		v.grow(n)
	}
	v.chains, v.cum = v.chains[:n], v.cum[:n]
	// The last request's blocks that follow a change in the same order (a
	// policy that tracks what left says where: the messages it kept) are
	// carried, not walked: blocks[tn:tn+tl] are prev[tp:tp+tl]. Their
	// running totals are written only if a cache or the meter reads them
	// (see prefixView.prefixes): most requests read none past the change.
	tn, tp, tl := n, len(prev), 0
	tracked := req.tracked && !m.walkAll
	if tracked && !m.counts {
		m.countPlaces()
	}
	if g := req.gone; tracked && lcpPtr <= req.keptFrom && g[0].hi >= lcpPtr {
		tn, tp = req.keptFrom, g[0].hi
		if tl = min(g[1].lo-tp, n-tn, len(prev)-tp); tl <= 0 {
			tn, tp, tl = n, len(prev), 0
		}
	}
	m.fresh = m.fresh[:0]
	walked := 0           // the tokens of the blocks walked past carried ones
	left := prev[lcpPtr:] // the last request's blocks that may have left
	cut := lcpPtr         // present's filters kept, see present
	if m.counts {
		walked = m.walk(blocks, lcpPtr, tn) + m.walk(blocks, tn+tl, n)
	} else if d := req.dropped; m.lazy && d > 0 && lcpPtr == req.same && d <= len(left) && len(prev)-d <= n {
		// A flat policy dropped its oldest messages: the others are carried
		// to blocks[lcpPtr:len(prev)-d], only hashed, and only the dropped
		// ones may have left.
		left = left[:d]
		m.rtot -= refetchedTokens(left)
		m.walkHashed(blocks, len(prev)-d)
		m.dropSigs(lcpPtr, d)
		cut = len(prev) - d
	} else {
		// The refetched tokens of the blocks kept: the last request's but
		// those of the others, or counted, whichever are fewer (a flat
		// policy's requests change near their start).
		if len(left) <= lcpPtr {
			m.rtot -= refetchedTokens(left)
		} else {
			m.rtot = refetchedTokens(blocks[:lcpPtr])
		}
		m.walkHashed(blocks, lcpPtr)
	}
	m.cutSigs(cut) // present extends them
	v.marks = req.Marks
	stable := v.tokensThrough(lcp - 1)
	v.partialAt, v.partial = lcp, 0
	if lcp < n && lcp < len(prev) {
		v.partial = m.commonTokens(prev[lcp], blocks[lcp])
		stable += v.partial
	}
	use := m.cache.serve(v, now)

	// Waste: refetched content counts as refetch; other content is dead until
	// a later probe uses it; what was sent before and missed the cache is
	// re-prefill.
	start := v.after(use.Read, use.whole)
	read := use.Read - v.tokensThrough(start-1) // of the first block
	// A tracked request's blocks from its kept messages on (or from past the
	// read point) are listed, see add.
	lz := n
	if tracked {
		lz = min(n, max(start+1, req.keptFrom))
	}
	if m.lazy {
		m.resendLazy(blocks, start, read)
	} else {
		m.resendFrom(blocks, start, read, lz, lcpPtr, carry{tn, tn + tl, tp - tn})
	}
	// A block present in the last request was sent then (or before).
	for _, i := range m.fresh {
		blocks[i].sent = true
	}
	// Presence intervals for dead waste: the blocks of the last request that
	// are neither in the common prefix nor carried close their interval,
	// unless this request has them elsewhere (see Block.places).
	var tot int
	if m.counts {
		// The blocks kept or carried hold the last request's tokens and
		// refetched tokens but those of the others.
		left, rleft := m.closeCounted(prev, [2]span{{lcpPtr, tp}, {tp + tl, len(prev)}}, r)
		m.rtot -= rleft
		tot = m.tot - left + walked
	} else {
		var prefix []*Block // where a block that left may still be
		if req.repeats {
			prefix = blocks[:lcpPtr]
		}
		m.closeGone(left, prefix, r)
		tot = v.tokensThrough(n - 1) // counted by walkHashed
	}
	m.tot = tot
	if r > 1 && tot > 0 {
		m.ratios = append(m.ratios, float64(stable)/float64(tot))
	}
	m.sizes = append(m.sizes, int32(min(tot, math.MaxInt32)))
	if tot > m.peak {
		m.peak = tot
	}
	if tot > m.env.window {
		m.overWindow++
	}
	writes := use.Write5m + use.Write1h
	if use.Read+writes > tot { // defensive: a model never serves more than sent
		writes = tot - use.Read
	}
	uncached := tot - use.Read - writes
	m.input += int64(tot)
	m.read += int64(use.Read)
	m.write += int64(writes)
	p := &m.env.prof
	m.cost += (float64(uncached)*p.Input + float64(use.Write5m)*p.CacheWrite5m + float64(use.Write1h)*p.CacheWrite1h + float64(use.Read)*p.CacheRead) / 1e6
	m.refetch += int64(m.rtot)

	// Task retention, judged from the task's arrival on.
	if m.taskText != "" {
		m.taskReqs++
		if m.taskIn > 0 {
			m.taskHits++
		} else if m.firstLoss == 0 {
			m.firstLoss = m.requests
		}
	}
	if sink != nil {
		sink.Request(RequestSample{Index: m.requests, Time: now, RequestTokens: tot, StableTokens: stable,
			CacheReadTokens: use.Read, Regions: req.Regions, Request: req})
	}
	m.lz = lz
	if req.kept {
		m.prev = blocks
	} else {
		m.prev = append(m.prev[:lcpPtr], blocks[lcpPtr:]...)
	}
	return tot - use.Read
}

// walk meters blocks[lo:hi], which follow a change: their refetched
// tokens, and their arrival if they are new to the context. It returns
// their tokens.
func (m *meter) walk(blocks []*Block, lo, hi int) int {
	tot, rtot := 0, 0
	for j, b := range blocks[lo:hi] {
		tot += b.Tokens
		if b.Refetched {
			rtot += b.Tokens
		}
		b.places++
		if b.since < 0 {
			m.arrive(b, lo+j)
		}
	}
	m.rtot += rtot
	return tot
}

// walkHashed is walk of the request's blocks from lo on, hashing their
// prefixes and writing their running totals too: a request that changed
// near its end (as a flat policy's do) has its breakpoints there.
func (m *meter) walkHashed(blocks []*Block, lo int) {
	v := &m.view
	r32 := int32(m.requests)
	n := len(blocks)
	if v.valid < lo {
		v.prefixes(lo)
	}
	var h uint64
	tot, rtot := 0, 0
	if lo > 0 {
		h, tot = v.chains[lo-1], v.cum[lo-1]
	}
	lazy, key := m.lazy, 0
	if lazy && lo > 0 {
		key = blocks[lo-1].pos
	}
	// Walked as slices of one length, so that indexing them is not checked.
	walk := blocks[lo:]
	wch, wcum := v.chains[lo:][:len(walk)], v.cum[lo:][:len(walk)]
	for j, b := range walk {
		h = extend(h, b.Hash)
		tot += b.Tokens
		if b.Refetched {
			rtot += b.Tokens
		}
		wch[j], wcum[j] = h, tot
		b.places = r32 // not counted: see meter.counts
		if lazy {
			if b.pos <= key {
				m.rekey(b)
			}
			key = b.pos
		}
		if b.since < 0 {
			// arrive, written out: a flat policy's requests add blocks at
			// their end, one at a time.
			b.since = r32
			m.fresh = append(m.fresh, int32(lo+j))
			if b.sigState == 0 {
				m.sign(b, lo+j)
			}
			if m.taskText != "" && m.holdsTask(b) {
				m.holds(b)
			}
		}
	}
	v.valid = n
	m.rtot += rtot
}

// refetchedTokens is the tokens of the refetched blocks among blocks.
func refetchedTokens(blocks []*Block) int {
	n := 0
	for _, b := range blocks {
		if b.Refetched {
			n += b.Tokens
		}
	}
	return n
}

// arrive starts the presence of block b, the i-th of the request.
func (m *meter) arrive(b *Block, i int) {
	b.since = int32(m.requests)
	m.fresh = append(m.fresh, int32(i))
	if b.sigState == 0 {
		m.sign(b, i)
	}
	if m.taskText != "" && m.holdsTask(b) {
		m.holds(b)
	}
}

// holds counts block b, which arrived, as holding the task.
func (m *meter) holds(b *Block) {
	m.taskIn++
	if !b.exempt {
		// The task is never dead, whatever block carries it; the rest of
		// that block (a summary's other lines) can be.
		b.taskTokens = int32(min(b.Tokens, m.taskTokens))
	}
}

// carry is a range [lo, hi) of a request's blocks that were the last
// request's from lo+sh.
type carry struct{ lo, hi, sh int }

// resendFrom adds the re-prefill of the request's blocks from start on,
// whose first has read tokens read from cache: those before lz one by one,
// the others as listed (see add). Its first lcpPtr blocks and those of
// carried are the last request's.
func (m *meter) resendFrom(blocks []*Block, start, read, lz, lcpPtr int, carried carry) {
	if lz < len(blocks) || m.lz < len(m.prev) {
		m.relist(blocks, lz, lcpPtr, carried)
	}
	m.resendAll(blocks[start:lz], read)
}

// relist lists the request's blocks from lz on. Those listed in the last
// request and kept are the common prefix's and the carried ones, in order;
// the places between are dropped (counted until the last request) or added
// (counted from the next on).
func (m *meter) relist(blocks []*Block, lz, lcpPtr int, carried carry) {
	prev := m.prev
	was, is := m.lz, lz
	if lo := max(lz, m.lz); lo < lcpPtr {
		m.unlist(prev[was:lo])
		m.add(blocks[is:lo])
		was, is = lcpPtr, lcpPtr
	}
	if lo := max(lz, carried.lo, m.lz-carried.sh); lo < carried.hi {
		m.unlist(prev[was : lo+carried.sh])
		m.add(blocks[is:lo])
		was, is = carried.hi+carried.sh, carried.hi
	}
	m.unlist(prev[was:])
	m.add(blocks[is:])
	m.reprefill += m.listedTokens // add took those it added out
	m.k++
}

// While the meter is lazy (see meter.lazy), a present block's pos is its
// key, which grows along the request, and its used is how many requests
// re-prefilled from a key up to its own when it was last settled: each
// request re-prefills its blocks from a key on (those past its read
// point but the first, whose keys are that key's or higher), counted in
// resent once, and a block's re-prefill is added when its pending tokens
// are read (settle). (Flat policies' blocks leave pos and used, the
// region policy's, unused.)

// keyCounts counts, per key, the requests that re-prefilled from it: a
// Fenwick tree (1-based, its length a power of two), so that the requests
// from a key up to k are counted in O(log k).
type keyCounts struct{ tree []int32 }

func (c *keyCounts) add(k int) {
	for ; k < len(c.tree); k += k & -k {
		c.tree[k]++
	}
}

// upTo is how many requests re-prefilled from a key up to k.
func (c *keyCounts) upTo(k int) int {
	n := 0
	for ; k > 0; k -= k & -k {
		n += int(c.tree[k])
	}
	return n
}

// grow makes room for key k. Of the new nodes, only those at powers of
// two sum keys below the old length: all of them.
func (c *keyCounts) grow(k int) {
	l := len(c.tree)
	n := max(1024, 2*l)
	for n <= k {
		n *= 2
	}
	all := int32(c.upTo(l - 1))
	c.tree = append(c.tree, make([]int32, n-l)...)
	for p := max(l, 1); p < n; p *= 2 {
		c.tree[p] = all
	}
}

// rekey gives block b, walked past a block whose key is not lower than
// its own (or new), the next key, settling what it had.
func (m *meter) rekey(b *Block) {
	if b.pos != 0 {
		m.settle(b)
	}
	m.nextKey++
	if m.nextKey >= len(m.resent.tree) {
		m.resent.grow(m.nextKey)
	}
	b.pos, b.used = m.nextKey, m.resends // every request's key is lower
}

// settle adds the re-prefill the requests counted in resent since block b
// was last settled gave it, as resendAll would have.
func (m *meter) settle(b *Block) {
	if b.pos == 0 || b.used == m.resends {
		return // no key (not present), or no request counted since
	}
	n := m.resent.upTo(b.pos) - b.used
	if n == 0 {
		return
	}
	b.used += n
	if b.Refetched {
		return
	}
	part := int64(b.Tokens) * int64(n)
	m.reprefill += part
	if !b.exempt {
		m.resend(b, part) // the same as n resends of b.Tokens, summed
	}
}

// unkey settles block b, which leaves, and takes its key.
func (m *meter) unkey(b *Block) {
	m.settle(b)
	b.pos, b.used = 0, 0
}

// resendLazy is resendFrom for a lazy meter: the first block past the read
// point is re-prefilled at once, as is new content (its part is not its
// tokens); the others are counted from the next block's key on. A few
// blocks (most requests re-prefill only what they added) are walked.
// (A block's re-prefill, in one go or counted and settled, adds up to the
// same: resend's dead part sums.)
func (m *meter) resendLazy(blocks []*Block, start, read int) {
	if len(blocks)-start <= 8 {
		m.resendAll(blocks[start:], read)
		return
	}
	m.resendAll(blocks[start:start+1], read)
	m.from = blocks[start+1].pos
	for _, i := range m.fresh {
		if b := blocks[i]; int(i) > start && !b.sent {
			b.used++ // not counted by this request's key
			m.resendAll(blocks[i:i+1], 0)
		}
	}
}

// resendAll adds the re-prefill of blocks, all past the read point but the
// first, read tokens of whose are.
func (m *meter) resendAll(blocks []*Block, read int) {
	for _, b := range blocks {
		// A block sent before is re-prefilled whole (a grown chunk: its
		// previous version).
		part := b.Tokens
		if !b.sent {
			part = b.prior // new content; a grown chunk's previous version was sent before
		}
		part, read = part-read, 0
		if part <= 0 || b.Refetched {
			continue
		}
		m.reprefill += int64(part)
		if !b.exempt {
			m.resend(b, int64(part))
		}
	}
}

// extend is the hash of a prefix that ends with a block, from the prefix's
// hash and the block's: a bijection of either (so two differ only by chance,
// as chain's), in a third of chain's instructions.
func extend(prefix, block uint64) uint64 {
	x := (prefix ^ block) * 0x9e3779b97f4a7c15
	return x ^ x>>29
}

// lostFact is a fact a probe missed that the agent could not fetch again.
type lostFact struct{ id, text string }

// factMemo remembers, per fact text, the last request whose blocks were
// all searched for it and the blocks found to hold it, so that a fact probed
// again is searched for only in blocks that arrived since.
type factMemo struct {
	scannedAt int
	hits      []*Block
	need      gramSig // the fact's signature
	lost      bool    // the fact of lostID with this text was lost
	lostID    string
}

// memoOf returns the index of the memo of fact text, made if new.
func (m *meter) memoOf(text string) int32 {
	i, ok := m.memo[text]
	if !ok {
		// A reused memo's hits are empty, their array kept (see reclaim).
		i = int32(len(m.memos))
		if len(m.memos) < cap(m.memos) {
			m.memos = m.memos[:i+1]
		} else {
			m.memos = append(m.memos, factMemo{})
		}
		m.memos[i].scannedAt = -1
		m.memos[i].need = sigOf(text)
		m.memo[text] = i
	}
	return i
}

// lose counts the fact of probe p as lost, once per fact id and text: in
// the memo of its text (which a missed probe has mostly), not in a map keyed
// by both strings.
func (m *meter) lose(p *pendingProbe) {
	if p.memo == 0 {
		p.memo = m.memoOf(p.probe.Text) + 1
	}
	f, id := &m.memos[p.memo-1], p.probe.Fact
	switch {
	case !f.lost:
		f.lost, f.lostID = true, id
		m.lost++
	case f.lostID != id && !m.lostMore[lostFact{id, p.probe.Text}]:
		m.lostMore[lostFact{id, p.probe.Text}] = true
		m.lost++
	}
}

// present returns a block of the measured request that holds the probe's
// fact (a block listing it, or its text verbatim in one block), or nil;
// listing is the fact's blocks in the fact index.
func (m *meter) present(req *Request, pp *pendingProbe, listing []*Block) *Block {
	for _, b := range listing {
		if b.since >= 0 {
			return b
		}
	}
	p := pp.probe
	i := m.memoOf(p.Text)
	pp.memo = i + 1
	memo := &m.memos[i]
	for _, b := range memo.hits {
		if b.since >= 0 {
			return b
		}
	}
	need := &memo.need
	m.takeDropped()
	// sigs holds the filters of the request's first blocks, written at
	// earlier probes: measure cuts it at the first block changed since, and
	// those from m.valid on are stale. If most of the request is unchanged
	// since the last probe, the others are written in; if not (a region
	// near its start changed), each block's own is read: written, it would
	// soon be written again.
	n := len(req.Blocks)
	stable, k := len(m.sigs), min(m.valid, len(m.sigs))
	m.sigs = slices.Grow(m.sigs, n-stable)[:n]
	if n-stable <= n/2 {
		for i, b := range req.Blocks[k:] {
			m.sigs[k+i] = b.filter()
		}
		k = n
	}
	m.valid = k
	sigs := m.sigs[:k]
	for i := range sigs {
		if !sigs[i].covers(need) {
			continue
		}
		if b := req.Blocks[i]; m.found(b, p, need, memo) {
			return b
		}
	}
	for _, b := range req.Blocks[k:] {
		if b.mayHold(need) && m.found(b, p, need, memo) {
			return b
		}
	}
	memo.scannedAt = m.requests
	return nil
}

// dropSigs notes that the blocks at [at, at+d) of the last request left
// and the later ones were carried, as their filters will be in present.
func (m *meter) dropSigs(at, d int) {
	g := m.dropped
	if g.hi > g.lo && g.lo != at {
		m.cutSigs(at)
		g = m.dropped
	}
	if g.hi == g.lo {
		g = span{at, at}
	}
	g.hi += d
	if g.hi >= len(m.sigs) {
		m.sigs, g = m.sigs[:min(at, len(m.sigs))], span{}
	}
	m.dropped = g
}

// takeDropped takes the filters of the blocks dropped out of sigs.
func (m *meter) takeDropped() {
	if g := m.dropped; g.hi > g.lo {
		m.sigs = append(m.sigs[:g.lo], m.sigs[g.hi:]...)
		if m.valid > g.lo {
			m.valid = max(g.lo, m.valid-(g.hi-g.lo))
		}
		m.dropped = span{}
	}
}

// cutSigs keeps the filters of the request's first n blocks.
func (m *meter) cutSigs(n int) {
	if g := m.dropped; g.hi > g.lo {
		if n > g.lo {
			n += g.hi - g.lo
		} else {
			m.dropped = span{}
		}
	}
	m.sigs = m.sigs[:min(n, len(m.sigs))]
}

// found reports whether block b, which its filter does not rule out, holds
// the probe's fact, keeping it among memo's hits if it does.
func (m *meter) found(b *Block, p *trace.Probe, need *gramSig, memo *factMemo) bool {
	if b.since >= 0 && int(b.since) <= memo.scannedAt {
		return false // present at the last full search, and did not hold it
	}
	if !b.hasFact(p, need) {
		return false
	}
	memo.hits = append(memo.hits, b)
	return true
}

// closeGone closes the blocks of left, listed in the last request, that the
// current one (r) no longer lists: those its walk did not see (see
// walkHashed) and it does not list (see add), unless listed in prefix, the
// part of its unchanged prefix that may hold them (a policy whose request
// repeats blocks may list one there too). Then a lazy meter counts the
// request's re-prefill (see resendLazy).
func (m *meter) closeGone(left, prefix []*Block, r int) {
	r32 := int32(r)
	for _, b := range left {
		if b.places != r32 && b.listed == 0 && b.since >= 0 && !slices.Contains(prefix, b) {
			if m.lazy {
				m.unkey(b)
			}
			m.close(b, r)
			b.places = 0 // see countPlaces
		}
	}
	if m.from > 0 { // after closing: the blocks that left were not re-prefilled
		m.resent.add(m.from)
		m.resends++
		m.from = 0
	}
}

// countPlaces starts counting the blocks' places (see meter.counts) with
// those of the last request. A block that left before has none: its mark
// was cleared when it was closed.
func (m *meter) countPlaces() {
	for _, b := range m.prev {
		b.places = 0
	}
	for _, b := range m.prev {
		b.places++
	}
	m.counts = true
}

// closeCounted takes the places of the blocks of prev in gone, which may
// have left, out of their counts (walk counted those of the current
// request, r), closing those that have none left; it returns their tokens
// and those of the refetched ones among them.
func (m *meter) closeCounted(prev []*Block, gone [2]span, r int) (tokens, refetched int) {
	for _, s := range gone {
		for _, b := range prev[s.lo:s.hi] {
			tokens += b.Tokens
			if b.Refetched {
				refetched += b.Tokens
			}
			if b.places--; b.places == 0 && b.since >= 0 {
				m.close(b, r)
			}
		}
	}
	return tokens, refetched
}

// close ends block b's presence before request r: its requests since then
// are pending dead tokens until a probe uses the content.
func (m *meter) close(b *Block, r int) {
	if since := int(b.since); !b.exempt && !b.Refetched && r > since {
		m.pend(b, b.pendingTokens+int64(b.Tokens-int(b.taskTokens))*int64(r-since), b.pendingReprefill) // not listed
	}
	if b.taskState == 2 {
		m.taskIn--
	}
	b.since = -1
}

// pend sets the pending dead and re-prefill tokens of block b, keeping
// their totals over all blocks. Task, system and refetched blocks never
// have any.
func (m *meter) pend(b *Block, tokens, reprefill int64) {
	if m.lazy {
		m.settle(b) // (close settled its block before reading it)
	}
	m.dead += tokens - b.pendingTokens
	if b.slot > 0 {
		for len(m.deadBy) < int(b.slot) {
			m.deadBy = append(m.deadBy, 0)
		}
		m.deadBy[b.slot-1] += tokens - b.pendingTokens
	}
	// Re-prefill of dead tokens counts as dead; a block's re-sent task
	// tokens stay re-prefill. (A listed block's is counted when it is no
	// longer listed, and its pendingReprefill is not its pending
	// re-prefill, see add.)
	if b.listed == 0 {
		m.deadRep += min(reprefill, tokens) - min(b.pendingReprefill, b.pendingTokens)
	}
	b.pendingTokens, b.pendingReprefill = tokens, reprefill-m.listedReprefill(b)
}

// resend adds part to the pending re-prefill tokens of block b, as pend
// with its pending dead tokens unchanged (no region's dead tokens change).
func (m *meter) resend(b *Block, part int64) {
	// Most blocks have no dead tokens pending: none re-prefilled. (A listed
	// block's are counted when it is no longer listed, see add.)
	if pt := b.pendingTokens; pt > 0 && b.listed == 0 {
		m.deadRep += min(b.pendingReprefill+part, pt) - min(b.pendingReprefill, pt)
	}
	b.pendingReprefill += part
}

// A tracked request's blocks from some index on (its kept messages) are
// listed, Block.listed counting a block's places there: each request that
// keeps them re-prefills them whole, as most do, so the meter walks only
// the places a request adds or drops. Each such request counts one
// re-prefill of every listed place by incrementing m.k: a listed block's
// pending re-prefill is its pendingReprefill plus its tokens times its
// places times m.k (a place added when m.k was k took its tokens times k
// off). The dead part of it (a block that came back with dead tokens
// pending) is counted in deadRep when the block is no longer listed.

// listedReprefill is the re-prefill that block b's places counted, as if
// each had been listed since request 0.
func (m *meter) listedReprefill(b *Block) int64 {
	if b.listed == 0 || b.exempt || b.Refetched {
		return 0
	}
	return int64(b.Tokens) * int64(b.listed) * m.k
}

// add adds the re-prefill of blocks, past the read point, and a place of
// each, counted from the next request on.
func (m *meter) add(blocks []*Block) {
	next := m.k + 1
	for _, b := range blocks {
		part := b.Tokens
		if !b.sent {
			part = b.prior // new content; a grown chunk's previous version was sent before
		}
		plain := !b.exempt && !b.Refetched
		if !b.Refetched {
			m.listedTokens += int64(b.Tokens)
			m.reprefill -= int64(b.Tokens)
			if part > 0 {
				m.reprefill += int64(part)
				if plain {
					m.resend(b, int64(part))
				}
			}
		}
		if b.listed == 0 && b.pendingTokens > 0 {
			// Its dead re-prefill is counted when it is no longer listed.
			m.deadRep -= min(b.pendingReprefill, b.pendingTokens)
		}
		b.listed++
		if plain {
			b.pendingReprefill -= int64(b.Tokens) * next
		}
	}
}

// unlist drops a place of each of blocks, counted until the last request.
func (m *meter) unlist(blocks []*Block) {
	for _, b := range blocks {
		if !b.Refetched {
			m.listedTokens -= int64(b.Tokens)
		}
		b.listed--
		if !b.exempt && !b.Refetched {
			b.pendingReprefill += int64(b.Tokens) * m.k
		}
		if b.listed == 0 && b.pendingTokens > 0 {
			m.deadRep += min(b.pendingReprefill, b.pendingTokens)
		}
	}
}

// used records that a probe at the current request used block b: its sends
// so far, this request's included, were not dead.
func (m *meter) used(b *Block) {
	m.pend(b, 0, 0)
	if b.since >= 0 {
		b.since = int32(m.requests + 1)
	}
}

// holdsTask reports whether block b holds the whole task text, checking each
// block once.
func (m *meter) holdsTask(b *Block) bool {
	if b.taskState == 0 {
		b.taskState = 1
		if (b.Kind == BlockTask && b.Hash == m.taskHash) ||
			(b.Text != "" && (b.sigState != 1 || b.sig.covers(&m.taskSig)) && containsText(b.Text, m.taskText)) {
			b.taskState = 2
		}
	}
	return b.taskState == 2
}

// sign computes the trigram signature of block b, the i-th of the request
// being measured, as sigOf would, but skipping runs of filler: a stand-in of
// kilobytes gets a signature as selective as its facts'. The previous
// request's i-th block is sometimes the same chunk before it grew (the
// engine appends to one buffer): then only the appended bytes are read.
func (m *meter) sign(b *Block, i int) {
	if i < len(m.prev) {
		a := m.prev[i]
		grown := len(a.Text) >= 2 && len(a.Text) <= len(b.Text) && unsafe.StringData(a.Text) == unsafe.StringData(b.Text)
		if grown && a.sigState == 1 {
			b.sig = a.sig
			signText(&b.sig, b.Text, len(a.Text), math.MaxInt)
			b.sigState = 1
			return
		}
		if grown && a.wide != nil {
			// Too long for a signature, as a was: extend a's wide one.
			b.sigState = 2
			extendWide(b, a)
			return
		}
	}
	if signText(&b.sig, b.Text, 0, sigMaxBytes) {
		b.sigState = 1
	} else {
		b.sig, b.sigState = gramSig{}, 2
		m.widen(b, i)
	}
}

// widen makes the wide signature of block b, the i-th of the request being
// measured, from that of the previous request's i-th block (extendWide).
func (m *meter) widen(b *Block, i int) {
	if i < len(m.prev) {
		extendWide(b, m.prev[i])
	}
}

// extendWide makes the wide signature of block b from that of block a
// (nil, or without one: b gets one at its first search, if any) when b
// shares most of a's text: a chunk grown in the engine's buffer (only the
// appended bytes are read), or a region re-rendered (a history that a
// compaction summarised again keeps kilobytes). It holds the trigrams of
// a's rest too: a filter that rules out less, never a fact b holds.
func extendWide(b, a *Block) {
	if a == nil || a.wide == nil {
		return
	}
	n := len(a.Text)
	if n < 2 || n > len(b.Text) || unsafe.StringData(a.Text) != unsafe.StringData(b.Text) {
		n = commonPrefix(a.Text, b.Text)
		if s := encodedRunAt(b.Text, n); s >= 0 {
			n = s // the run is signed whole, from its start
		}
		if n < len(b.Text)/2 {
			return
		}
	}
	b.wide = new(wideSig)
	*b.wide = *a.wide
	signText(b.wide, b.Text, n, math.MaxInt)
}

// filter is a signature that rules block b out of holding any fact whose
// trigrams it lacks, for present: its text's, or all trigrams if it has
// no signature or lists facts that are not in the fact index. (A block
// that lists facts is in the index unless refetched, see env.record, and
// present looks there first: a block it searches cannot list the fact.)
func (b *Block) filter() gramSig {
	if b.sigState != 1 || b.Refetched && len(b.Facts) > 0 {
		return gramSig{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	}
	return b.sig
}

// mayHold reports whether b.filter() covers need, reading the block alone.
func (b *Block) mayHold(need *gramSig) bool {
	return b.sigState != 1 || b.Refetched && len(b.Facts) > 0 || b.sig.covers(need)
}

// signText adds to g (a signature or a wide one) the trigrams of s that
// start from two bytes before from on, its runs of filler written out (a run
// adds only "~~~" and the trigrams across its ends), hashing at most limit
// bytes outside runs; it reports false if s has more.
func signText[S gramAdder](g S, s string, from, limit int) bool {
	w := gramWriter[S]{g: g}
	w.a, w.b, w.n = before2(s, from)
	rs := runsOf(s)
	for pos := from; ; {
		i, _, size := rs.next(pos)
		if limit -= i - pos; limit < 0 {
			return false
		}
		w.write(s[pos:i])
		if i == len(s) {
			return true
		}
		w.write(fillerMark[:3])
		pos = i + size
	}
}

// before2 is the last two bytes of s[:from] written out, and how many
// there are (an encoded run ends with its mark, where filler precedes).
func before2(s string, from int) (a, b byte, n int) {
	const mark = 0xFF
	switch {
	case from == 0:
		return 0, 0, 0
	case s[from-1] == mark:
		return fillerByte[0], fillerByte[0], 2
	case from == 1:
		return 0, s[0], 1
	case s[from-2] == mark:
		return fillerByte[0], s[from-1], 2
	}
	return s[from-2], s[from-1], 2
}

// commonTokens is the token length of the common prefix of two differing
// blocks: only here does the meter look inside a block.
func (m *meter) commonTokens(a, b *Block) int {
	if a.Text == "" || b.Text == "" {
		return 0
	}
	i, extra := commonPrefixRuns(a.Text, b.Text)
	if i == 0 && extra == 0 {
		return 0
	}
	size := prefixLen(a, i) + extra
	var n int
	if bp, ok := m.env.tok.(bytesPer); ok {
		n = bp.CountBytes(size)
	} else if extra == 0 && !engine.HasFiller(a.Text[:i]) {
		n = m.env.tok.Count(a.Text[:i])
	} else {
		n = m.env.tok.Count(engine.ExpandFiller(a.Text[:i]) + strings.Repeat(fillerByte, extra))
	}
	if i < len(a.Text) || i < len(b.Text) {
		n = sharedTokens(m.env.tok, size, n)
	}
	return max(0, min(n, a.Tokens, b.Tokens))
}

// prefixLen is engine.TextLen(b.Text[:i]): where the block's length is
// known and i is past the text's middle, that less the rest's, unless an
// encoded run might hold i (the byte before i would be its mark or a digit).
func prefixLen(b *Block, i int) int {
	if b.textLen > 0 && 2*i > len(b.Text) {
		if i == len(b.Text) {
			return b.textLen
		}
		if c := b.Text[i-1]; c < 0x80 || 0xC0 <= c && c < 0xFF {
			return b.textLen - engine.TextLen(b.Text[i:])
		}
	}
	return engine.TextLen(b.Text[:i])
}

// commonPrefixRuns is the common prefix of a and b, their runs written out:
// a[:i] and extra bytes of filler, where the two diverge inside runs of
// filler (encoded, or one written out) that start at i.
func commonPrefixRuns(a, b string) (i, extra int) {
	i = commonPrefix(a, b)
	if i == len(a) || i == len(b) {
		// One is the other's start (a grown chunk): the shorter's runs all
		// close within it, so none that both have holds i.
		return i, 0
	}
	s := encodedRunAt(a, i)
	if s < 0 {
		s = encodedRunAt(b, i)
	}
	if s < 0 {
		return i, 0
	}
	return s, min(fillerAt(a, s), fillerAt(b, s))
}

// encodedRunAt is where the encoded run of s that i falls in (or starts at)
// starts, or -1: found from the last mark at or before i, among the last
// maxRunSize bytes (a mark before them opens no run that reaches i), so that
// the text before is not searched, a byte at a time.
func encodedRunAt(s string, i int) int {
	const mark = 0xFF
	from := max(0, i+1-maxRunSize)
	r := strings.LastIndexByte(s[from:min(i+1, len(s))], mark)
	if r < 0 {
		return -1
	}
	r += from
	if _, size := engine.FillerAt(s[r:]); size > 0 {
		return r // the mark opens a run: i is in it
	}
	// The mark may close a run that i is at the end of.
	if i != r {
		return -1
	}
	from = max(0, r+1-maxRunSize)
	if o := strings.LastIndexByte(s[from:r], mark); o >= 0 {
		if _, size := engine.FillerAt(s[from+o:]); size > 0 && from+o+size == r+1 {
			return from + o
		}
	}
	return -1
}

// maxRunSize is the most bytes an encoded run takes: a mark, ten digits
// (engine.AppendFiller's n < 1<<60) and a mark.
const maxRunSize = 12

// fillerAt is the bytes of filler s has at i: an encoded run's, or those
// written out.
func fillerAt(s string, i int) int {
	if at, n, _ := engine.NextFiller(s[i:]); at == 0 {
		return n
	}
	n := 0
	for i+n < len(s) && s[i+n] == fillerByte[0] {
		n++
	}
	return n
}

// extendsText reports whether text, its runs written out, is old's written
// out and more.
func extendsText(old, text string) bool {
	if len(text) > len(old) && commonPrefix(old, text) == len(old) {
		return true
	}
	if old == "" || old[len(old)-1] != 0xFF {
		return false // only a run of filler at old's end can go on in text
	}
	i, extra := commonPrefixRuns(old, text)
	n := engine.TextLen(old)
	return engine.TextLen(old[:i])+extra == n && engine.TextLen(text) > n
}

// sharedTokens is how many of the tokens of a text's first size bytes
// (counted as tokens) two texts that diverge right after them share. Under
// bytes/N token k covers bytes [(k−1)·N, k·N): ⌊size/N⌋ tokens lie wholly
// before the divergence. A BPE may merge across it, so its last token is
// not counted as shared.
func sharedTokens(tok Tokenizer, size, tokens int) int {
	if bp, ok := tok.(bytesPer); ok {
		return min(tokens, int(math.Floor(float64(size)/bp.per)))
	}
	return max(0, tokens-1)
}

// commonPrefix is the length of the common prefix of a and b. A growing
// chunk shares kilobytes with its previous version, often the very bytes
// (the engine appends to one buffer), which settles it at once; otherwise
// comparing 256 bytes at a time (a vectorised memequal) before the last
// bytes one by one is many times faster than a byte loop.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	if n == 0 || unsafe.StringData(a) == unsafe.StringData(b) {
		return n // the same bytes (strings are immutable): a grown chunk
	}
	if a[:n] == b[:n] {
		return n
	}
	const step = 256
	i := 0
	for i+step <= n && a[i:i+step] == b[i:i+step] {
		i += step
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func (m *meter) probe(p *pendingProbe, hit bool) {
	if p.probe.Derived {
		m.refProbes++
		if hit {
			m.refHits++
		}
		return
	}
	m.factProbes++
	if hit {
		m.factHits++
	}
	if p.depth >= 0 {
		// Bucket k holds depths in (1024<<(k-1), 1024<<k]; 0..1024 is bucket 0.
		k := 0
		if p.depth > 0 {
			k = bits.Len64(uint64(p.depth-1) / 1024)
		}
		for len(m.depth) <= k {
			m.depth = append(m.depth, DepthBucket{})
		}
		b := &m.depth[k]
		b.UpTo = 1024 << k
		b.Probes++
		if hit {
			b.Hits++
		}
	}
}

// deadByRegion is Result.DeadByRegion, once finish has closed every block.
func (m *meter) deadByRegion() []RegionTokens {
	var out []RegionTokens
	for i, t := range m.deadBy {
		if t > 0 {
			out = append(out, RegionTokens{Name: m.env.regionNames[i], Tokens: int(t)})
		}
	}
	slices.SortFunc(out, func(a, b RegionTokens) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (m *meter) depthBuckets() []DepthBucket {
	out := make([]DepthBucket, 0, len(m.depth))
	for _, b := range m.depth {
		if b.UpTo > 0 {
			out = append(out, b)
		}
	}
	return out
}

func pct(num, den int64) float64 {
	if den == 0 {
		return math.NaN()
	}
	return 100 * float64(num) / float64(den)
}

func (m *meter) finish(out *Metrics, clock float64) {
	// Content still waiting for a use at the end was dead in every request
	// since its last use; its re-prefill is counted as dead instead.
	m.unlist(m.prev[m.lz:])
	m.lz = len(m.prev)
	for _, b := range m.prev {
		if b.since >= 0 {
			if m.lazy {
				m.unkey(b)
			}
			m.close(b, m.requests+1)
		}
	}
	dead, deadRep := m.dead, m.deadRep
	reprefill := m.reprefill - deadRep
	n := int64(m.requests)
	set := func(k string, v float64) { out.Set(k, v) }
	if m.taskText == "" || m.taskReqs == 0 {
		set("task_retained_pct", math.NaN())
		set("task_first_loss", math.NaN())
	} else {
		set("task_retained_pct", pct(int64(m.taskHits), int64(m.taskReqs)))
		fl := m.firstLoss
		if fl == 0 {
			fl = m.requests + 1
		}
		set("task_first_loss", float64(fl))
	}
	set("fact_recall_pct", pct(int64(m.factHits), int64(m.factProbes)))
	set("reference_recall_pct", pct(int64(m.refHits), int64(m.refProbes)))
	if len(m.ratios) == 0 {
		set("prefix_stability_pct", math.NaN())
		set("prefix_stability_p10_pct", math.NaN())
	} else {
		s := 0.0
		for _, r := range m.ratios {
			s += r
		}
		set("prefix_stability_pct", 100*s/float64(len(m.ratios)))
		set("prefix_stability_p10_pct", 100*percentile(m.ratios, 0.10)) // summed already
	}
	set("cache_hit_pct", pct(m.read, m.input))
	set("input_tokens", float64(m.input))
	set("cache_read_tokens", float64(m.read))
	set("cache_write_tokens", float64(m.write))
	set("uncached_tokens", float64(m.input-m.read-m.write))
	set("output_tokens", float64(m.output))
	set("waste_pct", pct(reprefill+dead+m.refetch, m.input))
	set("waste_reprefill_pct", pct(reprefill, m.input))
	set("waste_dead_pct", pct(dead, m.input))
	set("waste_refetch_pct", pct(m.refetch, m.input))
	set("cost_usd", m.cost)
	set("virtual_seconds", clock)
	if n == 0 {
		set("ttft_mean_s", math.NaN())
		set("input_growth", math.NaN())
	} else {
		set("ttft_mean_s", m.ttftSum/float64(n))
		set("input_growth", growth(m.sizes))
	}
	set("peak_request_tokens", float64(m.peak))
	set("over_window_requests", float64(m.overWindow))
	set("evictions", float64(m.env.evictions))
	set("compactions", float64(m.env.compactions))
	set("lost_facts", float64(m.lost))
	set("requests", float64(n))
}

// percentile is the nearest-rank percentile of values (no NaN), which it
// reorders: one rank of them sorted needs no sort.
func percentile(values []float64, q float64) float64 {
	k := int(math.Ceil(q*float64(len(values)))) - 1
	return selectRank(values, max(0, min(k, len(values)-1)))
}

// selectRank puts at x[k] the value sorting x (no NaN) would put there, and
// returns it: Hoare's selection, with the median of three as the pivot.
func selectRank(x []float64, k int) float64 {
	lo, hi := 0, len(x)-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if x[mid] < x[lo] {
			x[lo], x[mid] = x[mid], x[lo]
		}
		if x[hi] < x[lo] {
			x[lo], x[hi] = x[hi], x[lo]
		}
		if x[hi] < x[mid] {
			x[mid], x[hi] = x[hi], x[mid]
		}
		p := x[mid]
		i, j := lo, hi
		for i <= j {
			for x[i] < p {
				i++
			}
			for p < x[j] {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		// x[lo:j+1] <= p <= x[i:hi+1], and what lies between them is p.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return x[k]
		}
	}
	return x[k]
}

// growth is mean request tokens of the last quarter ÷ the first quarter
// (quarters of at least one request).
func growth(sizes []int32) float64 {
	q := max(1, len(sizes)/4)
	var a, b float64
	for _, s := range sizes[:q] {
		a += float64(s)
	}
	for _, s := range sizes[len(sizes)-q:] {
		b += float64(s)
	}
	if a == 0 {
		return math.NaN()
	}
	return b / a
}

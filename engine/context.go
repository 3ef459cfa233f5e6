package engine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Options configure one live context window.
type Options struct {
	Window            int               // model window in tokens
	Counter           TokenCounter      // nil = bytes/4 rounded up
	Summarizer        Summarizer        // nil = the deterministic extractive default
	Task              string            // the task text (task_input)
	Inputs            map[string]string // other caller inputs for caller seeds
	Stage             string            // "" = the initial stage
	AllowCommandSeeds bool
	Scripts           ScriptEngine // custom-region hooks (nil: custom regions are an error at New)
	WorkDir           string       // where files/glob/rhai seeds resolve; "" = no file seeds
	Model             string       // model name, shown to custom-region scripts
	// EvictAt and EvictFree are the window-level trigger of D1: the cascade
	// runs when usage reaches EvictAt of the window and frees EvictFree of it.
	// Zero means the defaults 0.90 and 0.10.
	EvictAt   float64
	EvictFree float64
	// LegacyStageInstructions writes stage prompts into the first pinned
	// region when no stage_instructions region is declared (the seeds'
	// "without the declaration" behaviour) instead of the runtime's
	// automatic stage_instructions region.
	LegacyStageInstructions bool
}

// EventKind classifies engine events.
type EventKind uint8

// Event kinds.
const (
	EventEvict     EventKind = iota // entries removed to make room
	EventClear                      // a region wiped
	EventCompact                    // a region summarised
	EventSummarize                  // one summariser call (input/output tokens)
	EventWarning                    // something degraded but the run goes on
	EventDrop                       // content that could not be stored
	EventRecompact                  // a compact_history folded into one summary (D3)
	EventGate                       // a gate held or was forced
	EventStage                      // a stage was entered
)

var eventNames = [...]string{"evict", "clear", "compact", "summarize", "warning", "drop", "recompact", "gate", "stage"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is one thing the engine did on its own.
type Event struct {
	Kind         EventKind
	Region       string
	Tokens       int // tokens removed, cleared or dropped
	Entries      int
	InputTokens  int // summariser calls
	OutputTokens int
	Message      string
}

// RegionUsage is one region's occupancy.
type RegionUsage struct {
	Name      string
	Kind      Kind
	Tokens    int
	MaxTokens int
	Entries   int
	Hidden    bool
}

// Context is a live context window for one agent run. It is not safe for
// concurrent use.
type Context struct {
	// literalRuns (tests only) keeps content as written, runs of filler
	// not encoded: as the engine was before it knew the encoding.
	literalRuns bool

	bp      *Blueprint
	opt     Options
	counter TokenCounter
	bpf     bool // counter is BytesPerFour: a count is lenTokens of TextLen, not a call
	sum     Summarizer
	regions []*region
	byName  map[string]*region
	conv    *region // the conversation
	stage   *StageDef
	clock   uint64
	total   int
	events  []Event
	drained []Event // the array the last Drain handed out
	// The calls awaiting their result: the newest few listed, the rest
	// by id (addCall).
	pending []ToolCall
	calls   map[string]ToolCall
	gates   map[string]int
	iter    int
	scripts map[string]RegionScript
	asm     assembler
	sumSc   sumScratch // the Extractive summariser's buffers
	// shortfall is the high-water mark of provider-reported prompt tokens
	// over the engine's estimate (reference calibration.rs).
	shortfall int

	// Unused room for assistant turns' calls and call tokens.
	callBuf    []ToolCall
	callTokBuf []int
	// The name of the last call counted and its tokens (BytesPerFour):
	// a run's calls are of few tools, most of the last one's.
	lastName    string
	lastNameTok int
	callRooms   []callRoom      // of turns that left, for AddAssistant to reuse
	pointers    strings.Builder // the slab of wholePointer
	ptrs        pointerCache    // wholePointer's pointers by tokens
	call        ToolCall        // the call takeMapped took last
	route       route           // the last tool result's routing (resolveRoute)
	free        []*entry        // entries let go of, for newEntry to reuse
}

// The runtime's infra regions (ENGINE.md §1.9).
var infraDefs = []*RegionDef{
	newRegionDef("tool_results", KindTemporary, 5000),
	func() *RegionDef {
		d := newRegionDef("conversation", KindSlidingWindow, 10000)
		d.MaxItems = 50
		return d
	}(),
	newRegionDef("final_output", KindPinned, 2000),
}

// New builds a live window for a blueprint: resolves budgets at the window,
// compiles custom-region scripts, fills seeds and enters the initial stage.
func New(b *Blueprint, opt Options) (*Context, error) {
	if opt.Window <= 0 {
		return nil, fmt.Errorf("new context: window must be positive, got %d", opt.Window)
	}
	if opt.EvictAt == 0 {
		opt.EvictAt = 0.90
	}
	if opt.EvictFree == 0 {
		opt.EvictFree = 0.10
	}
	if opt.EvictAt < 0 || opt.EvictAt > 1 || opt.EvictFree < 0 || opt.EvictFree > 1 {
		return nil, fmt.Errorf("new context: EvictAt and EvictFree must be fractions in (0, 1], got %v and %v", opt.EvictAt, opt.EvictFree)
	}
	if rep := b.Validate(opt.Window); !rep.OK() {
		msgs := make([]string, len(rep.Errors))
		for i, e := range rep.Errors {
			msgs[i] = e.Message
		}
		return nil, fmt.Errorf("new context: blueprint %s does not validate at %d tokens: %s", b.Name, opt.Window, strings.Join(msgs, "; "))
	}
	c := &Context{
		bp: b, opt: opt, counter: opt.Counter, sum: opt.Summarizer,
		byName: map[string]*region{}, calls: map[string]ToolCall{}, gates: map[string]int{},
		scripts: map[string]RegionScript{},
	}
	if c.counter == nil {
		c.counter = BytesPerFour{}
	}
	_, c.bpf = c.counter.(BytesPerFour)
	if c.sum == nil {
		c.sum = Extractive{}
	}
	if err := c.compileScripts(); err != nil {
		return nil, err
	}
	for _, d := range b.RegionDefs {
		c.addRegion(d, false)
	}
	for _, d := range infraDefs {
		if c.byName[d.Name] == nil {
			c.addRegion(d, true)
		}
	}
	// Every window has it, and keeps it (a stage layout that declares it
	// takes it over).
	c.conv = c.byName["conversation"]
	if c.byName[StageInstructions] == nil && b.anyPrompt() && !opt.LegacyStageInstructions {
		d := newRegionDef(StageInstructions, KindPinned, b.autoStageInstrTokens(opt.Window))
		c.addRegion(d, true)
	}
	if err := c.seed(); err != nil {
		return nil, err
	}
	start := opt.Stage
	if start == "" && len(b.StageDefs) > 0 {
		start = b.StageDefs[0].Name
	}
	if start != "" {
		if err := c.EnterStage(start); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Context) addRegion(d *RegionDef, infra bool) *region {
	rr := resolveDef(d, c.opt.Window)
	r := &region{def: d, name: d.Name, kind: d.Kind, max: rr.MaxTokens, threshold: rr.ThresholdTokens, infra: infra, dirtyFrom: 0, slideAt: slideAt(d)}
	if d.Kind == KindCustom {
		r.script = c.scripts[d.Script]
	}
	c.regions = append(c.regions, r)
	c.byName[d.Name] = r
	c.route = route{}
	c.asm.listed = false
	return r
}

func (c *Context) compileScripts() error {
	for _, lay := range c.bp.layouts() {
		for _, d := range lay.defs {
			if d.Kind != KindCustom || c.scripts[d.Script] != nil {
				continue
			}
			if c.opt.Scripts == nil {
				return fmt.Errorf("region '%s': custom region script '%s' needs a script engine (Options.Scripts)", d.Name, d.Script)
			}
			s, err := c.opt.Scripts.Compile(d.Script, d.scriptSrc)
			if err != nil {
				return fmt.Errorf("region '%s': custom region script failed to compile: %s: %v", d.Name, d.Script, err)
			}
			n, ok := s.HasHook("render")
			if !ok {
				return fmt.Errorf("region '%s': custom region script failed to compile: %s: script must define fn render(ctx)", d.Name, d.Script)
			}
			if n != 1 {
				return fmt.Errorf("region '%s': custom region script failed to compile: %s: fn render must take exactly one parameter (ctx), found %d", d.Name, d.Script, n)
			}
			for _, h := range []string{"on_write", "on_overflow"} {
				if n, ok := s.HasHook(h); ok && n != 1 {
					return fmt.Errorf("region '%s': custom region script failed to compile: %s: fn %s must take exactly one parameter (ctx), found %d", d.Name, d.Script, h, n)
				}
			}
			c.scripts[d.Script] = s
		}
	}
	return nil
}

func (c *Context) emit(e Event) {
	c.events = append(c.events, e)
}

func (c *Context) warn(region, msg string) {
	c.emit(Event{Kind: EventWarning, Region: region, Message: msg})
}

// scriptOutput turns what a hook of r's script printed into one warning per
// line, naming the region and the hook. It runs after every hook call, so
// a script shared by several regions has each line reported for the region
// whose hook printed it.
func (c *Context) scriptOutput(r *region, hook string) {
	d, ok := r.script.(outputDrainer)
	if !ok {
		return
	}
	for _, line := range d.DrainOutput() {
		// engine/rhai already starts each line with the hook's name.
		if !strings.HasPrefix(line, hook+" ") {
			line = hook + ": " + line
		}
		c.warn(r.name, "script output: "+line)
	}
}

// ObserveUsage calibrates the eviction trigger against what a provider
// reported for a request the engine estimated at estimatedTokens: the gap's
// high-water mark is added to usage when deciding whether to evict.
func (c *Context) ObserveUsage(estimatedTokens, reportedTokens int) {
	if reportedTokens <= 0 || reportedTokens < estimatedTokens {
		return
	}
	c.shortfall = max(c.shortfall, reportedTokens-estimatedTokens)
}

// Shortfall is the calibration gap ObserveUsage has recorded.
func (c *Context) Shortfall() int { return c.shortfall }

// Drain returns the engine events since the last Drain. They are the
// Context's and valid until the next Drain, which reuses their array: read
// them before, or copy them to keep.
func (c *Context) Drain() []Event {
	n := len(c.events)
	if n == 0 {
		return nil
	}
	out := c.events
	clear(c.drained)
	c.events, c.drained = c.drained[:0], out
	return out[:n:n]
}

// Tokens is the current total over every region, hidden ones included.
func (c *Context) Tokens() int { return c.total }

// Stage is the current stage's name.
func (c *Context) Stage() string {
	if c.stage == nil {
		return ""
	}
	return c.stage.Name
}

// Occupancy lists every region's use, in assembly order.
func (c *Context) Occupancy() []RegionUsage {
	return c.AppendOccupancy(make([]RegionUsage, 0, len(c.regions)))
}

// AppendOccupancy is Occupancy appended to dst, for a caller that asks on
// every request and reuses its slice.
func (c *Context) AppendOccupancy(dst []RegionUsage) []RegionUsage {
	for _, r := range c.regions {
		n := len(dst)
		if n < cap(dst) && dst[:n+1][n].Name == r.name {
			// The caller's reused slice names this region here already:
			// only the numbers are written, so no pointer is (a write
			// barrier each while the GC marks).
			dst = dst[:n+1]
			u := &dst[n]
			u.Kind, u.Tokens, u.MaxTokens, u.Entries, u.Hidden = r.kind, r.tokens, r.max, len(r.entries), r.hidden
			continue
		}
		dst = append(dst, RegionUsage{Name: r.name, Kind: r.kind, Tokens: r.tokens, MaxTokens: r.max, Entries: len(r.entries), Hidden: r.hidden})
	}
	return dst
}

// RegionText returns a region's entries joined by blank lines, runs of
// filler written out.
func (c *Context) RegionText(name string) (string, bool) {
	r := c.byName[name]
	if r == nil {
		return "", false
	}
	return ExpandFiller(r.joined()), true
}

// CheckInvariants verifies the engine's bookkeeping: no region over budget
// (hashmap updates and single oversized pinned writes excepted only if they
// were refused), token sums consistent.
func (c *Context) CheckInvariants() error {
	total := 0
	for _, r := range c.regions {
		sum := 0
		for _, e := range r.entries {
			sum += e.tokens
		}
		if sum != r.tokens {
			return fmt.Errorf("region '%s': entries sum to %d tokens, region says %d", r.name, sum, r.tokens)
		}
		if r.tokens > r.max {
			return fmt.Errorf("region '%s' holds %d tokens over its budget of %d", r.name, r.tokens, r.max)
		}
		if r.kind == KindSlidingWindow {
			slack := 0
			switch r.def.Strategy {
			case StrategyBulk:
				slack = r.def.Overflow
			case StrategyCompact:
				slack = r.def.CompactCount
			}
			if len(r.entries) > r.def.MaxItems+slack {
				return fmt.Errorf("region '%s' holds %d entries, past max_items %d and its strategy's slack of %d", r.name, len(r.entries), r.def.MaxItems, slack)
			}
		}
		total += sum
	}
	if total != c.total {
		return fmt.Errorf("regions sum to %d tokens, window says %d", total, c.total)
	}
	return nil
}

// AddUser records a user message in the conversation.
func (c *Context) AddUser(text string) error {
	return c.write(c.conv, c.newEntry(EntryUser, text))
}

// AddAssistant records an assistant turn, with its tool calls, in the
// conversation.
func (c *Context) AddAssistant(text string, calls []ToolCall) error {
	e := c.newEntry(EntryAssistant, text)
	if n := len(calls); n > 0 {
		// The calls and their tokens take the room of a turn that left,
		// or are cut from arrays shared by many turns: two allocations
		// fewer a turn.
		if k := len(c.callRooms); k > 0 && cap(c.callRooms[k-1].calls) >= n {
			room := c.callRooms[k-1]
			c.callRooms[k-1] = callRoom{}
			c.callRooms = c.callRooms[:k-1]
			e.calls, e.callTok = room.calls[:n], room.tok[:n]
		} else {
			if len(c.callBuf) < n {
				c.callBuf, c.callTokBuf = make([]ToolCall, max(n, 64)), make([]int, max(n, 64))
			}
			e.calls, c.callBuf = c.callBuf[:n:n], c.callBuf[n:]
			e.callTok, c.callTokBuf = c.callTokBuf[:n:n], c.callTokBuf[n:]
		}
		for i := range e.calls {
			// Copied as counted: a turn has one call or few, and copy
			// would be a runtime call.
			tc := &e.calls[i]
			*tc = calls[i]
			var t int
			if c.bpf && bytes.IndexByte(tc.Args, runMark) < 0 {
				// JSON holds no run (runMark is not UTF-8): its TextLen
				// is its length, and no string of it is needed.
				if tc.Name != c.lastName {
					c.lastName, c.lastNameTok = tc.Name, lenTokens(TextLen(tc.Name))
				}
				t = c.lastNameTok + lenTokens(len(tc.Args))
			} else {
				t = c.counter.Count(tc.Name) + c.counter.Count(string(tc.Args))
			}
			e.tokens += t
			e.callTok[i] = t
		}
		if n == 1 && len(c.pending) == 0 && len(c.calls) == 0 {
			// A turn's one call, the last turn's answered (most turns):
			// no call to replace, none to map.
			c.pending = append(c.pending, e.calls[0])
		} else {
			for i := range e.calls {
				c.addCall(&e.calls[i])
			}
		}
	}
	c.iter++
	return c.write(c.conv, e)
}

// maxPending is how many of the newest calls awaiting their result are
// listed rather than mapped.
const maxPending = 8

// addCall records a call awaiting its result. A result most often answers
// one of the newest calls, so those are listed: a map insert and delete
// per call cost more than the rest of writing the turn.
func (c *Context) addCall(tc *ToolCall) {
	if len(c.pending) > 0 || len(c.calls) > 0 {
		c.takeCall(tc.ID) // a repeated id replaces the call it repeats
	}
	if len(c.pending) == maxPending {
		c.calls[c.pending[0].ID] = c.pending[0]
		c.pending = slices.Delete(c.pending, 0, 1)
	}
	c.pending = append(c.pending, *tc)
}

// takeCall forgets the call awaiting id's result and returns it (the zero
// call if none is). A listed call is left just past the list's end, where
// the pointer finds it until the next call is listed: a result's call is
// read by the result's routing only, and most results answer the newest
// call, which is neither moved nor copied.
func (c *Context) takeCall(id string) *ToolCall {
	for i := len(c.pending) - 1; i >= 0; i-- {
		if c.pending[i].ID == id {
			// The newest takes its place: the list's order is not
			// kept, which addCall needs only to pick a call to map.
			last := len(c.pending) - 1
			if i != last {
				c.pending[i], c.pending[last] = c.pending[last], c.pending[i]
			}
			c.pending = c.pending[:last]
			return &c.pending[:last+1][last]
		}
	}
	return c.takeMapped(id)
}

// takeMapped is takeCall for a call that is not among the newest.
func (c *Context) takeMapped(id string) *ToolCall {
	c.call = c.calls[id]
	delete(c.calls, id)
	return &c.call
}

// AddNudge records a "[System] …" runtime nudge in the conversation.
func (c *Context) AddNudge(text string) error {
	return c.write(c.conv, c.newEntry(EntryText, "[System] "+text))
}

// Write appends text to a region as the runtime would (seeds, inbox).
func (c *Context) Write(regionName, text string) error {
	return c.writeNamed(regionName, c.newEntry(EntryText, text))
}

func (c *Context) writeNamed(name string, e *entry) error {
	r := c.byName[name]
	if r == nil {
		return &RegionNotFoundError{Region: name}
	}
	return c.write(r, e)
}

// ErrTaskNotAccepted is returned by New when a task is given but no region
// is seeded from it.
var ErrTaskNotAccepted = errors.New("no region is seeded from the task (seed = \"task_input\", or a region named task)")

// RequiredNudges lists the nudges for required regions of the current
// stage that are still empty (caller-seeded regions excepted).
func (c *Context) RequiredNudges() []string {
	var out []string
	if c.stage != nil && !contains(c.stage.Tools, "context_write") && !contains(c.stage.Tools, "context_append") {
		return nil // the stage cannot fill them, so nudging would only loop
	}
	defs, _ := c.bp.layout(c.Stage())
	for _, d := range defs {
		if !d.Required || (d.Seed != nil && d.Seed.Form == SeedCaller) {
			continue
		}
		if r := c.byName[d.Name]; r == nil || len(r.entries) == 0 {
			msg := d.RequiredMessage
			if msg == "" {
				msg = defaultRequiredNudge
			}
			out = append(out, strings.ReplaceAll(msg, "{region}", d.Name))
		}
	}
	return out
}

// GateError is a transition held by its gate; Nudge is what the model was
// told (also written to the conversation).
type GateError struct {
	Stage, Target string
	Nudge         string
	Attempt, Max  int
}

func (e *GateError) Error() string {
	return fmt.Sprintf("stage '%s': transition to '%s' held by its gate (attempt %d of %d): %s", e.Stage, e.Target, e.Attempt, e.Max, e.Nudge)
}

// Transition takes the named transition of the current stage: the gate,
// then the edge transform, then entry into the target stage.
func (c *Context) Transition(name string) error {
	if c.stage == nil {
		return fmt.Errorf("transition '%s': the blueprint has no stages", name)
	}
	var td *TransitionDef
	for _, t := range c.stage.Transitions {
		if t.Target == name {
			td = t
		}
	}
	if td == nil {
		var names []string
		for _, t := range c.stage.Transitions {
			names = append(names, t.Target)
		}
		return fmt.Errorf("stage '%s' has no transition '%s' (transitions: %s)", c.stage.Name, name, strings.Join(names, ", "))
	}
	if g := td.Gate; g != nil && g.RequireNoOpenItems != "" {
		if r := c.byName[g.RequireNoOpenItems]; r != nil && r.kind == KindChecklist {
			if open := r.openItems(); len(open) > 0 {
				key := c.stage.Name + "->" + name
				if c.gates[key] < g.MaxAttempts {
					c.gates[key]++
					nudge := g.Message
					if nudge == "" {
						parts := make([]string, len(open))
						for i, e := range open {
							parts[i] = fmt.Sprintf("%d %s", e.id, e.content)
						}
						nudge = fmt.Sprintf("%d item(s) are still open in `%s`: %s. Finish them, or use todo_done to drop the ones that no longer apply, before moving on.", len(open), r.name, strings.Join(parts, "; "))
					}
					_ = c.AddNudge(nudge)
					c.emit(Event{Kind: EventGate, Region: r.name, Message: "gate held: " + nudge})
					return &GateError{Stage: c.stage.Name, Target: name, Nudge: nudge, Attempt: c.gates[key], Max: g.MaxAttempts}
				}
				c.emit(Event{Kind: EventGate, Region: r.name, Message: fmt.Sprintf("gate forced after %d attempts with %d open item(s)", g.MaxAttempts, len(open))})
			}
		}
	}
	c.applyTransform(td)
	return c.EnterStage(name)
}

// applyTransform runs an edge transform (ENGINE.md §5, D10).
func (c *Context) applyTransform(td *TransitionDef) {
	switch td.Transform {
	case TransformClear:
		for _, r := range c.regions {
			if r.stageSpecific() && len(r.entries) > 0 {
				c.clearRegion(r, "clear edge")
			}
		}
	case TransformCompact:
		for _, r := range c.regions {
			if r.stageSpecific() && r.def.Summarizable && len(r.entries) > 0 {
				c.compact(r, "compact edge")
			}
		}
	case TransformCustom:
		for _, n := range td.Clear {
			if r := c.byName[n]; r != nil && !contains(td.Carry, n) && len(r.entries) > 0 {
				c.clearRegion(r, "custom edge clear")
			}
		}
		for _, n := range td.Compact {
			r := c.byName[n]
			if r == nil || contains(td.Carry, n) || len(r.entries) == 0 {
				continue
			}
			if !r.def.Summarizable {
				c.warn(n, "custom edge names a region with summarizable = false; carried raw")
				continue
			}
			c.compact(r, "custom edge compact")
		}
	}
}

func (c *Context) clearRegion(r *region, why string) {
	n := len(r.entries)
	freed := r.clearAll()
	c.total -= freed
	c.emit(Event{Kind: EventClear, Region: r.name, Tokens: freed, Entries: n, Message: why})
}

// EnterStage switches to a stage directly: its layout (D11), hidden regions,
// and its instructions.
func (c *Context) EnterStage(name string) error {
	sd, ok := c.bp.Stage(name)
	if !ok {
		return fmt.Errorf("enter stage: unknown stage '%s' (stages: %s)", name, strings.Join(c.bp.Stages(), ", "))
	}
	c.route = route{} // the stage routes anew, and its layout may change regions
	if sd.HasLayout {
		if err := c.applyLayout(sd); err != nil {
			return err
		}
	}
	c.stage = sd
	c.iter = 0
	legacy := c.opt.LegacyStageInstructions
	defs, _ := c.bp.layout(name)
	target, _ := c.bp.stageInstrTarget(defs, c.opt.Window, legacy)
	tr := c.byName[target]
	if tr == nil {
		tr = c.conv
	}
	if tr.name == StageInstructions {
		if len(tr.entries) > 0 {
			c.total -= tr.clearAll()
		}
		c.moveLast(tr)
	} else {
		for i := len(tr.entries) - 1; i >= 0; i-- {
			if strings.HasPrefix(tr.entries[i].content, "[Stage instructions:") {
				c.total -= tr.entries[i].tokens
				tr.removeRange(i, 1)
			}
		}
	}
	if sd.Prompt != "" {
		e := c.newEntry(EntryText, stageInstrPrefix+sd.Prompt+"]")
		if err := c.write(tr, e); err != nil {
			return &StagePromptError{Tokens: e.tokens, Region: tr.name, Err: err}
		}
	}
	c.emit(Event{Kind: EventStage, Message: "entered stage " + name})
	return nil
}

func (c *Context) moveLast(r *region) {
	for i, x := range c.regions {
		if x == r && i != len(c.regions)-1 {
			c.regions = append(append(c.regions[:i:i], c.regions[i+1:]...), r)
			c.asm.orderChanged = true
			return
		}
	}
}

// applyLayout swaps to a stage's own layout. Regions it declares take their
// new definitions; their entries are carried, keeping the newest that fit
// (D11); pinned content that no longer fits is an error. Regions it does not
// declare are kept but hidden, except the four the runtime always carries.
func (c *Context) applyLayout(sd *StageDef) error {
	declared := map[string]bool{}
	var next []*region
	for _, d := range sd.Regions {
		declared[d.Name] = true
		rr := resolveDef(d, c.opt.Window)
		old := c.byName[d.Name]
		if old == nil {
			r := &region{def: d, name: d.Name, kind: d.Kind, max: rr.MaxTokens, threshold: rr.ThresholdTokens, dirtyFrom: 0, slideAt: slideAt(d)}
			if d.Kind == KindCustom {
				r.script = c.scripts[d.Script]
			}
			c.byName[d.Name] = r
			next = append(next, r)
			continue
		}
		if old.kind == KindPinned && old.tokens > rr.MaxTokens {
			return fmt.Errorf("enter stage '%s': pinned region '%s' holds %d tokens, which no longer fit its stage budget of %d", sd.Name, d.Name, old.tokens, rr.MaxTokens)
		}
		if old.kind == KindCustom && d.Kind != KindCustom && old.name != "conversation" {
			// Results routed into a custom region are tool_result entries
			// for its hooks only; built-in kinds hold routed results as
			// text (their calls are not in the region to pair with).
			for _, e := range old.entries {
				if e.kind == EntryToolResult {
					e.kind, e.msg = EntryText, nil
				}
			}
		}
		old.def, old.kind, old.max, old.threshold, old.hidden = d, d.Kind, rr.MaxTokens, rr.ThresholdTokens, false
		if d.Kind == KindCustom {
			old.script = c.scripts[d.Script]
		}
		// D11: keep the newest entries that fit.
		keepFrom := len(old.entries)
		sum := 0
		for i := len(old.entries) - 1; i >= 0; i-- {
			if sum+old.entries[i].tokens > old.max || (d.Kind == KindSlidingWindow && len(old.entries)-i > d.MaxItems) {
				break
			}
			sum += old.entries[i].tokens
			keepFrom = i
		}
		// Never split a turn group at the cut. (A custom region's routed
		// results stand alone: no assistant turn leads them.)
		for (d.Kind != KindCustom || old.name == "conversation") && keepFrom < len(old.entries) && old.entries[keepFrom].kind == EntryToolResult {
			sum -= old.entries[keepFrom].tokens
			keepFrom++
		}
		if keepFrom > 0 {
			c.evicted(old, old.removeRange(0, keepFrom), "stage layout shrank the region")
		}
		old.touch(0)
		next = append(next, old)
	}
	for _, r := range c.regions {
		if declared[r.name] {
			continue
		}
		r.hidden = !contains(alwaysVisible, r.name)
		r.touch(0)
		next = append(next, r)
	}
	c.regions = next
	c.asm.orderChanged = true
	return nil
}

// RegionNotFoundError is a write to a region the window does not have.
type RegionNotFoundError struct{ Region string }

func (e *RegionNotFoundError) Error() string { return "Region not found: " + e.Region }

// StagePromptError is a stage prompt that does not fit where it must go.
type StagePromptError struct {
	Tokens int
	Region string
	Err    error
}

func (e *StagePromptError) Error() string {
	return fmt.Sprintf("stage system prompt (~%d tokens) does not fit context region '%s': %v. Increase that region's max_tokens (or shorten the prompt).", e.Tokens, e.Region, e.Err)
}

func (e *StagePromptError) Unwrap() error { return e.Err }

package sim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ctxsim/ctxsim/blueprints"
	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/engine/rhai"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// regionsAvailable reports whether the region engine is built in.
const regionsAvailable = true

// cacheLookbackBlocks is the reference provider's message breakpoint spacing.
const cacheLookbackBlocks = 16

// regionPolicy runs the region engine on a blueprint: tool results are
// routed, context ops and stages applied, and the engine's own evictions,
// compactions and summariser calls are counted. The engine counts tokens as
// the reference runtime does (bytes/4); the simulator measures its requests
// with the profile's tokenizer.
type regionPolicy struct {
	env  *env
	bp   *engine.Blueprint
	opt  engine.Options
	ctx  *engine.Context
	err  error
	sys  []*Block // the trace's system prompt and tool schemas, sent ahead of the regions
	task string

	calls   callTable // what observe recorded of each tool call id
	regions map[string]*regionState
	// seen holds the hashes of the blocks with a synthetic id (region#hash)
	// of each region, which no probe names: they are kept out of
	// env.content, whose string keys and kept blocks cost more, and only
	// their arrival is counted.
	seen seenSet
	// The states region last returned, the latest first: a region's blocks
	// come in a row, and a request's new ones mostly from two regions in
	// turn (a chunk of a system region, then messages).
	last [2]*regionState

	cached []*Block   // converted engine blocks, in the order converted (see Block.used)
	index  blockTable // their indices in cached by content key
	// marks holds, by index in cached, the last request that held the
	// block, as forget needs it: written for the requests it keeps only
	// (grown to cached's length then, see mark), and read without reading
	// the blocks (a cache miss each).
	marks []int32
	prev  []*Block // the last request's blocks
	// How many of prev are the trace's system blocks, and the engine's;
	// the blocks of its messages up to and including each.
	prevSys, prevSysBlocks int
	msgEnds                []int
	// The requests are built in two arrays by turns (the meter keeps the
	// last one), laid out alike so that a message block keeps its index
	// while it stays: lead counts the message blocks dropped so far, and the
	// first message block is at origin + lead - first. The message blocks
	// numbered below sameEnd are the last request's from the one before
	// (same blocks); laidOut is the request the layout dates from.
	arrays                    [2][]*Block
	lead, first, origin, room int
	sameEnd, laidOut          int
	req                       Request
	nreq                      int
	warned                    map[string]bool
	occ                       []engine.RegionUsage // reused by every request
	arena                     textArena            // bytes of converted blocks' ids and tool-use texts
	// standIns holds the stand-ins of elided tool results with facts (apart
	// from arena: the engine drops them long before the run ends).
	standIns textArena
	turn     []engine.ToolCall // reused by every assistant turn
	// The pointer to a tool result last made from its template (see
	// pointerBlock): its text from the number's end to the preview, and the
	// trigrams within it, the fixed parts and each end ("]", "…]").
	ptrMid string
	ptrSig [2]gramSig
	// The tool last called (see toolUseBlock): its name, its calls' text
	// from the id's closing quote to the args, and the trigrams within it
	// and the fixed parts.
	useName, useMid string
	useQuoteMid     string // the id's closing quote, then useMid
	useSig          gramSig
	useSigEmpty     gramSig // useSig, and for a call without args the trigrams across the name's end and the tail's start
	useRun          bool    // useMid holds a run of filler written out
}

// callInfo is what observe recorded of one tool call id.
type callInfo struct {
	id, event           string       // the call's id, and its last result's event id
	stat                *contentStat // event's content stat, if the runner gave it
	hasEvent, refetched bool         // a result was seen; a call was made while refetching
}

// callTable holds a callInfo per tool call id that had a result or was
// re-issued, in the order entered. A request converts the blocks of the
// newest call nearly always: that one is found by comparing its id (mostly
// the very string observe had), the others through the index.
type callTable struct {
	infos []callInfo
	// id -> 1 + its index in infos (0: absent), read without the ok
	// result: that is the map access env.stat makes for each tool result
	// just before, whereas the one with it is code of its own (some 8 I1
	// misses per inference, off the path now).
	index map[string]int
}

// init sizes the table for n calls.
func (t *callTable) init(n int) {
	t.infos = make([]callInfo, 0, n)
	t.index = make(map[string]int, n)
}

// find returns the info of id, or nil.
func (t *callTable) find(id string) *callInfo {
	if n := len(t.infos); n > 0 && t.infos[n-1].id == id {
		return &t.infos[n-1]
	}
	if i := t.index[id]; i > 0 {
		return &t.infos[i-1]
	}
	return nil
}

// add returns the info of id, added if new. The pointer is valid until the
// next add.
func (t *callTable) add(id string) *callInfo {
	if c := t.find(id); c != nil {
		return c
	}
	if t.index == nil {
		t.index = map[string]int{}
	}
	t.index[id] = len(t.infos) + 1
	t.infos = append(t.infos, callInfo{id: id})
	return &t.infos[len(t.infos)-1]
}

// enter is add for an id that is most likely new (the call of a result
// that is no refetch): entered first, in one map access that adds to the
// value, and looked up only if it was there already. A new id is hashed
// once, not twice.
func (t *callTable) enter(id string) *callInfo {
	if t.index == nil {
		t.index = map[string]int{}
	}
	n, had := len(t.infos), len(t.index)
	t.index[id] += n + 1
	if len(t.index) == had { // entered before: undone
		t.index[id] -= n + 1
		return &t.infos[t.index[id]-1]
	}
	t.infos = append(t.infos, callInfo{id: id})
	return &t.infos[n]
}

// regionState is what converting blocks keeps of one region.
type regionState struct {
	name  string
	kind  engine.Kind
	slot  uint16     // the blocks' slot (see Block.slot)
	grown grownCount // its last system block counted
	chunk *Block     // its last system block converted
	id    uint32     // 1 + its index in order of creation, for regionPolicy.seen
}

// region returns the state of the region called name.
func (p *regionPolicy) region(name string) *regionState {
	// The engine names a region by one string: its bytes settle it.
	for _, rs := range p.last {
		if rs != nil && len(rs.name) == len(name) && unsafe.StringData(rs.name) == unsafe.StringData(name) {
			return rs
		}
	}
	if rs := p.last[0]; rs != nil && rs.name == name {
		return rs
	}
	rs := p.last[1]
	if rs == nil || rs.name != name {
		rs = p.regions[name]
	}
	if rs == nil {
		rs = &regionState{name: name, id: uint32(len(p.regions) + 1)}
		if len(p.env.regionNames) < math.MaxUint16 {
			p.env.regionNames = append(p.env.regionNames, name)
			rs.slot = uint16(len(p.env.regionNames))
		}
		p.regions[name] = rs
	}
	p.last = [2]*regionState{rs, p.last[0]}
	return rs
}

// seenSet is a set of content hashes of regions by open addressing: they
// are XXH64 sums, whose low bits index its slots as well as a map's hash
// would, and adding one costs a fraction of a map insert.
type seenSet struct {
	slots []seenKey
	n     int // keys in slots
}

type seenKey struct {
	hash   uint64
	region uint32 // regionState.id; 0 marks an empty slot
}

// add adds the hash h of region id to the set, reporting whether it was
// not there.
func (s *seenSet) add(h uint64, id uint32) bool {
	if 2*(s.n+1) > len(s.slots) {
		old := s.slots
		s.slots, s.n = make([]seenKey, max(64, 2*len(old))), 0
		for _, o := range old {
			if o.region != 0 {
				s.add(o.hash, o.region)
			}
		}
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch k := &s.slots[i]; {
		case k.region == 0:
			*k = seenKey{h, id}
			s.n++
			return true
		case k.hash == h && k.region == id:
			return false
		}
	}
}

// blockTable maps the keys of converted blocks to their indices in
// regionPolicy.cached, by open addressing as hashSet: adding and finding one
// cost a fraction of a map's, and its array holds no pointers for the GC.
// Emptied, it counts a generation more, whose slots are those filled since:
// its slots are not all written (a cache miss a line).
type blockTable struct {
	slots []blockSlot
	n     int    // keys in slots
	gen   uint32 // times emptied
}

type blockSlot struct {
	key  uint64
	i    int32  // 1 + the index; 0 marks an empty slot
	mark uint32 // 1 + the table's generation when filled: an earlier one's slot is empty
}

// slot returns the slot of key, or the empty one it would take, which
// stays valid until the table next changes: a key is looked up, and added
// when missing, with one probe.
func (t *blockTable) slot(key uint64) *blockSlot {
	if 2*(t.n+1) > len(t.slots) {
		old, mark := t.slots, t.gen+1
		t.slots, t.n = make([]blockSlot, max(64, 2*len(old))), 0
		for _, s := range old {
			if s.mark == mark {
				t.add(s.key, int(s.i-1))
			}
		}
	}
	mark := t.gen + 1
	mask := uint64(len(t.slots) - 1)
	for j := key & mask; ; j = (j + 1) & mask {
		s := &t.slots[j]
		if s.mark != mark {
			s.i = 0 // never filled, or before the table was emptied
			return s
		}
		if s.key == key {
			return s
		}
	}
}

// fill enters key with index i in s, its empty slot.
func (t *blockTable) fill(s *blockSlot, key uint64, i int) {
	*s = blockSlot{key: key, i: int32(i + 1), mark: t.gen + 1}
	t.n++
}

// empty removes every key.
func (t *blockTable) empty() {
	t.gen++
	if t.gen+1 == 0 { // the next mark would be a zero slot's
		t.gen = 0
		clear(t.slots)
	}
	t.n = 0
}

// add adds key, which the table lacks, with index i.
func (t *blockTable) add(key uint64, i int) {
	t.fill(t.slot(key), key, i)
}

// parsedBlueprint is an embedded blueprint parsed once.
type parsedBlueprint struct {
	once sync.Once
	bp   *engine.Blueprint
	err  error
}

// embedded holds the embedded blueprints by name, each parsed on first use:
// parsing was a thirtieth of a 10,000-event run, and a sweep starts a run per
// cell. The engine only reads a blueprint after parsing it (its Resolved and
// WithBudgets copy), so runs on several goroutines can share one.
var embedded sync.Map // name -> *parsedBlueprint

// loadBlueprint reads regions:<arg>: an embedded blueprint name, or a path.
func loadBlueprint(arg string) (*engine.Blueprint, string, error) {
	for _, n := range blueprints.Names() {
		if n == arg {
			v, _ := embedded.LoadOrStore(n, &parsedBlueprint{})
			pb := v.(*parsedBlueprint)
			pb.once.Do(func() {
				data, err := blueprints.Source(n)
				if err != nil {
					pb.err = err
					return
				}
				pb.bp, pb.err = engine.ParseBlueprint(n+".leviath", data, "")
			})
			return pb.bp, "", pb.err
		}
	}
	if _, err := os.Stat(arg); err != nil {
		return nil, "", fmt.Errorf("blueprint %q: not an embedded blueprint (%s) nor a readable file: %w", arg, strings.Join(blueprints.Names(), ", "), err)
	}
	bp, err := engine.LoadBlueprint(arg)
	return bp, filepath.Dir(arg), err
}

func newRegionPolicy(spec PolicySpec, e *env, _ int) (policy, error) {
	bp, dir, err := loadBlueprint(spec.Arg)
	if err != nil {
		return nil, err
	}
	scripts, err := rhai.NewEngine(rhai.Limits{})
	if err != nil {
		return nil, err
	}
	p := &regionPolicy{env: e, bp: bp,
		opt:     engine.Options{Window: e.window, Scripts: scripts, WorkDir: dir, Model: e.prof.Name},
		regions: map[string]*regionState{},
		warned:  map[string]bool{}}
	if s := e.scratch; s != nil {
		p.calls, p.seen, p.index, p.cached, p.marks, p.arrays = s.calls, s.seen, s.index, s.cached, s.marks, s.arrays
	}
	if p.calls.index == nil {
		p.calls.init(e.toolResults)
	}
	// Validate now, so that a blueprint that cannot run at this window fails
	// the run before any event.
	probe := p.opt
	if _, err := engine.New(bp, probe); err != nil {
		return nil, fmt.Errorf("regions:%s: %w", spec.Arg, err)
	}
	return p, nil
}

func (p *regionPolicy) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	// Warnings name their kind, not every instance: keep the first of each.
	key := msg
	if i := strings.IndexByte(msg, ':'); i > 0 {
		key = msg[:i]
	}
	if !p.warned[key] && len(p.warned) < 50 {
		p.warned[key] = true
		p.env.warnings = append(p.env.warnings, "regions: "+msg)
	}
}

// start creates the engine once the task is known (or the first event that
// needs the engine arrives), reporting whether it runs: every event and
// request asks, and all but the first find it running.
func (p *regionPolicy) start() bool {
	return p.ctx != nil || p.startEngine()
}

func (p *regionPolicy) startEngine() bool {
	if p.ctx != nil || p.err != nil {
		return p.ctx != nil
	}
	opt := p.opt
	opt.Task = p.task
	// The trace's system prompt is sent ahead of the regions, as tool
	// schemas and a base prompt would be: the engine gets the rest of the
	// window (counted its way, bytes/4).
	for _, b := range p.sys {
		opt.Window -= (engine.TextLen(b.Text) + 3) / 4
	}
	if opt.Window <= 0 {
		p.err = fmt.Errorf("the trace's system prompt (%d tokens) fills the %d-token window", p.opt.Window-opt.Window, p.opt.Window)
		p.warn("no room for regions: %v; requests carry the system prompt alone", p.err)
		return false
	}
	c, err := engine.New(p.bp, opt)
	if errors.Is(err, engine.ErrTaskNotAccepted) {
		opt.Task = ""
		c, err = engine.New(p.bp, opt)
		if err == nil && p.task != "" {
			p.warn("blueprint %s takes no task input: the task is the first user message", p.bp.Name)
			p.check("task", c.AddUser(p.task))
		}
	}
	if err != nil {
		p.err = err
		p.warn("engine: %v", err)
		return false
	}
	p.ctx = c
	c.LendRequests() // each request is read before the next
	for _, u := range c.Occupancy() {
		p.region(u.Name).kind = u.Kind
	}
	return true
}

func (p *regionPolicy) check(what string, err error) {
	if err != nil {
		p.warn("%s: %v", what, err)
	}
}

// content is an event's text, or for elided content a stand-in of the same
// size that holds the facts verbatim in its middle (so that routing, budgets,
// truncation and summaries see facts where real content would have them:
// neither first nor last), cut from the policy's arena: made one by one,
// they were a sixth of a run's allocation.
func (p *regionPolicy) content(ev *trace.Event) string {
	if ev.Text != "" || ev.Size == 0 {
		return ev.Text
	}
	literal := p.env.literalRuns
	// Room for its facts and two runs of filler, each encoded in at most 15
	// bytes: measuring their encodings cost a third of making the stand-in.
	n := 2 + 2*15
	for _, f := range ev.Facts {
		n += len(f.Text) + 1
	}
	if literal {
		n = standInLen(ev.Size, ev.Facts, literal)
	}
	b := p.standIns.room(n)
	return p.standIns.finish(appendStandIn(b, ev.Size, ev.Facts, literal))
}

// fillerByte pads elided content; countText counts a run of it as bytes, not
// as the few tokens a BPE would make of it.
const fillerByte = "~"

func (p *regionPolicy) observe(ev *trace.Event) {
	switch ev.Kind {
	case trace.KindSystem:
		if p.ctx != nil {
			p.warn("system prompt after the first turn: sent ahead of the regions, but the engine's window was set without it")
		}
		p.sys = append(p.sys, p.env.newBlock(BlockSystem, ev.ID, p.content(ev), 0, ev.Facts))
	case trace.KindTask:
		if p.ctx == nil && p.task == "" {
			p.task = p.content(ev)
			return
		}
		if p.start() {
			p.check("task", p.ctx.AddUser(p.content(ev)))
		}
	case trace.KindUser:
		if p.start() {
			p.check("user", p.ctx.AddUser(p.content(ev)))
		}
	case trace.KindAssistant:
		if !p.start() {
			return
		}
		// The engine copies the calls it keeps, so one slice serves every turn.
		if cap(p.turn) < len(ev.ToolCalls) {
			p.turn = make([]engine.ToolCall, len(ev.ToolCalls))
		}
		calls := p.turn[:len(ev.ToolCalls)]
		for i := range ev.ToolCalls {
			// Field by field: a copy of the trace's call, then of a whole
			// engine call, took two temporaries.
			c, d := &ev.ToolCalls[i], &calls[i]
			d.ID, d.Name, d.Args = c.ID, c.Name, c.Args
			// A call is entered by its result, or here if it is re-issued:
			// a call with neither converts as one not entered.
			if p.env.refetching {
				p.calls.add(c.ID).refetched = true
			}
		}
		text := ev.Text
		if text == "" && ev.Size > 0 {
			text = p.content(ev)
		}
		p.check("assistant", p.ctx.AddAssistant(text, calls))
	case trace.KindToolResult:
		if !p.start() {
			return
		}
		var ci *callInfo
		if p.env.refetching { // the call was re-issued: entered already
			ci = p.calls.add(ev.CallID)
		} else {
			ci = p.calls.enter(ev.CallID)
		}
		ci.event, ci.stat, ci.hasEvent = ev.ID, p.env.observed(ev.ID), true
		_, err := p.ctx.AddToolResult(engine.ToolResult{CallID: ev.CallID, Tool: ev.Tool, Content: p.content(ev), IsError: ev.IsError})
		p.check("tool result", err)
	case trace.KindContextOp:
		if p.start() {
			_, err := p.ctx.CallTool(ev.Op.Tool, ev.Op.Args)
			p.check("context op "+ev.Op.Tool, err)
		}
	case trace.KindStage:
		if !p.start() {
			return
		}
		if ev.Stage.Transition != "" {
			if err := p.ctx.Transition(ev.Stage.Transition); err == nil {
				return
			}
		}
		p.check("stage "+ev.Stage.To, p.ctx.EnterStage(ev.Stage.To))
	}
}

// drain counts what the engine did on its own since the last request.
func (p *regionPolicy) drain() {
	for _, ev := range p.ctx.Drain() {
		switch ev.Kind {
		case engine.EventEvict, engine.EventClear:
			p.env.evictions += max(1, ev.Entries)
		case engine.EventCompact, engine.EventRecompact:
			p.env.compactions++
		case engine.EventSummarize:
			p.env.sumIn += ev.InputTokens
			p.env.sumOut += ev.OutputTokens
		case engine.EventDrop:
			p.env.evictions += max(1, ev.Entries)
			p.warn("dropped: %s", ev.Message)
		case engine.EventWarning:
			p.warn("engine warning: %s", ev.Message)
		}
	}
}

// blockKey identifies an engine block's content. Region blocks carry their
// region's label in their text, so the engine's content hash with the role and
// type is enough.
func blockKey(eb *engine.Block) uint64 {
	// The content hash is an XXH64 sum already: a bijection of it per role
	// and type keeps its spread, in a fifth of chain's instructions.
	return eb.Hash ^ (uint64(eb.Role)<<8|uint64(eb.Type)+1)*0x9e3779b97f4a7c15
}

// convert makes the simulator block of an engine block.
func (p *regionPolicy) convert(eb *engine.Block, key uint64) *Block {
	kind := BlockRegion
	text := eb.Text
	if p.env.literalRuns {
		text = engine.ExpandFiller(text)
	}
	var call *callInfo // what observe recorded of the block's call
	if eb.ToolCallID != "" || eb.Type == engine.BlockToolResult {
		call = p.calls.find(eb.ToolCallID)
	}
	evID, isEvent := "", false
	var st *contentStat
	switch eb.Type {
	case engine.BlockToolResult:
		kind = BlockToolResult
		if call != nil {
			evID, st, isEvent = call.event, call.stat, call.hasEvent
		}
	case engine.BlockToolUse:
		kind = BlockAssistant
	default:
		switch eb.Role {
		case engine.RoleUser:
			kind = BlockUser
		case engine.RoleAssistant:
			kind = BlockAssistant
		}
	}
	rs := p.region(eb.Region)
	// The engine hashed the content already; the key adds region, role and type.
	var b *Block
	if eb.Role == engine.RoleSystem && eb.Type == engine.BlockText && text != "" {
		// A region's open last chunk grows by appending: count and sign only
		// what follows the part counted for its previous version.
		oldSize := rs.grown.size() // rs.chunk's text, written out
		n, sig, signed := rs.grown.count(p.env.tok, text)
		b = p.env.makeTextBlock(kind, text, key, n)
		b.textLen = rs.grown.size()
		if signed {
			b.sig, b.sigState = sig, 1
		} else {
			signLong(b, rs.chunk)
		}
		// What the chunk held before it grew was sent already (re-prefill
		// counts it when the cache misses it): its tokens wholly before the
		// seam, as prefix stability counts them.
		// (rs.chunk's text is the one counted before.)
		if old := rs.chunk; old != nil && old.sent && (rs.grown.grew || extendsText(old.Text, text)) {
			b.prior = min(sharedTokens(p.env.tok, oldSize, old.Tokens), b.Tokens)
		}
		rs.chunk = b
	} else if eb.Type == engine.BlockToolUse {
		b = p.toolUseBlock(eb, key)
	} else if b = p.pointerBlock(eb, text, key); b == nil {
		b = p.env.makeBlockSigned(kind, "", text, 0, nil, key)
	}
	if isEvent {
		b.ID = evID
		p.env.record(b, st)
	} else {
		if p.env.series {
			// Only a sink reads the ids of blocks no event made.
			b.ID = p.arena.regionBlockID(eb.Region, eb.Hash)
		}
		if p.seen.add(eb.Hash, rs.id) {
			p.env.arrived += int64(b.Tokens)
		}
	}
	b.Region, b.slot = eb.Region, rs.slot
	b.key = key
	if eb.Role == engine.RoleSystem && rs.kind == engine.KindPinned {
		b.exempt = true // instructions and the task, as for flat policies
	}
	if eb.ToolCallID != "" && call != nil && call.refetched {
		b.Refetched = true
	}
	return b
}

func (p *regionPolicy) request() *Request {
	p.req.Blocks, p.req.Marks, p.req.Regions = p.req.Blocks[:0], p.req.Marks[:0], p.req.Regions[:0]
	p.req.same, p.req.kept, p.req.tracked = 0, false, false
	p.req.repeats = true // identical messages share a block
	if !p.start() {
		return p.engineless()
	}
	er := p.ctx.Assemble()
	p.drain()
	p.nreq++
	// What leads as in the last request is the last request's blocks (a
	// block is found by its key alone; the walk only serves as a hint): only
	// the rest is walked. The blocks that may have left are marked as used
	// by the last request, and those kept are marked before forgetting.
	ns, prevSys := len(p.sys), min(p.prevSys, len(p.prev))
	sameSys, sameMsgs, drop := er.SameSystem, er.SameMessages, er.DroppedMessages
	if ns != prevSys || p.env.rebuild {
		sameSys, sameMsgs, drop = 0, 0, 0 // or the first request
	}
	// The blocks of the messages that are the same are counted already;
	// the messages of the last request's drop first ones went.
	dropBlocks, sameBlocks := 0, 0
	ends := p.msgEnds[:sameMsgs]
	if drop > 0 {
		dropBlocks = p.msgEnds[drop-1]
		for i := range ends {
			ends[i] = p.msgEnds[drop+i] - dropBlocks
		}
	}
	if sameMsgs > 0 {
		sameBlocks = ends[sameMsgs-1]
	}
	nblocks := sameBlocks
	for i := sameMsgs; i < len(er.Messages); i++ {
		nblocks += len(er.Messages[i].Blocks)
		ends = append(ends, nblocks)
	}
	p.msgEnds = ends
	prevMsgs := min(prevSys+p.prevSysBlocks, len(p.prev))
	if d := p.nreq % forgetEvery; d == 0 || d > forgetEvery-forgetAfter {
		// Only forget reads the marks, and only those of the requests it keeps.
		p.mark(p.prev[prevSys+sameSys:prevMsgs+dropBlocks], p.nreq-1)
		p.mark(p.prev[prevMsgs+dropBlocks+sameBlocks:], p.nreq-1)
	}
	// The messages start at the place of the block that now leads them, the
	// system blocks right before; both arrays get a new layout when there
	// is no room left before or after.
	p.lead += dropBlocks
	nsys := ns + len(er.System)
	start := p.origin + p.lead - p.first - nsys
	if start < 0 || start+nsys+nblocks > p.room {
		const slack = 1024 // message blocks that may go before the next layout
		p.first, p.origin = p.lead, nsys+16
		p.room = p.origin + nblocks + slack
		start = 16
		p.laidOut = p.nreq
	}
	// The message blocks that this request and the last both kept from the
	// one before are in its array already: only the rest is compared.
	inPlace := 0
	if p.laidOut <= p.nreq-2 {
		inPlace = max(0, min(p.lead+sameBlocks, p.sameEnd)-p.lead)
	}
	p.sameEnd = p.lead + sameBlocks
	a := &p.arrays[p.nreq%2]
	if len(*a) < p.room {
		*a = make([]*Block, p.room)
	}
	head := p.sys
	if ns == prevSys {
		head = p.prev[:ns+sameSys] // the last request led with the same trace's system blocks
		p.req.same = ns + sameSys  // the meter need not compare them
	}
	p.req.Blocks = keep((*a)[start:start+len(head)], head)
	w := cursor{k: prevSys + sameSys, base: ns, prevBase: prevSys}
	for i := sameSys; i < len(er.System); i++ {
		p.add(&w, &er.System[i])
	}
	sysMarks := 0
	for _, i := range er.SystemBreakpoints {
		if i >= 0 {
			p.req.Marks = append(p.req.Marks, CacheMark{Index: ns + i, TTL: "5m"})
			sysMarks++
		}
	}
	msgStart := len(p.req.Blocks)
	p.req.Blocks = p.req.Blocks[:msgStart+sameBlocks]
	keep(p.req.Blocks[msgStart+inPlace:], p.prev[prevMsgs+dropBlocks+inPlace:prevMsgs+dropBlocks+sameBlocks])
	if ns == prevSys {
		// The blocks that may have left are those marked above.
		p.req.gone = [2]span{{prevSys + sameSys, prevMsgs + dropBlocks}, {prevMsgs + dropBlocks + sameBlocks, len(p.prev)}}
		p.req.keptFrom, p.req.tracked = msgStart, true
		if sameSys == len(er.System) && sameSys == p.prevSysBlocks && dropBlocks == 0 {
			p.req.same = msgStart + sameBlocks // only the last messages changed
		}
	}
	w = cursor{k: prevMsgs + dropBlocks + sameBlocks, base: msgStart, prevBase: prevMsgs}
	for i := sameMsgs; i < len(er.Messages); i++ {
		m := &er.Messages[i]
		for b := range m.Blocks {
			p.add(&w, &m.Blocks[b])
		}
	}
	p.prevSys, p.prevSysBlocks = ns, len(er.System)
	// Message breakpoints, as the reference's Anthropic provider places them
	// (spec/ENGINE.md §6.4): only when the assembler flagged a message; the
	// breakpoints left of the 4 go to content blocks anchored every 16 from
	// the start of the messages (CACHE_LOOKBACK_BLOCKS), the last ones kept;
	// with fewer than 16 blocks, to the end of the last message.
	if budget := anthropicMaxMarks - sysMarks; er.FlaggedMessage >= 0 && budget > 0 {
		p.markMessages(er, msgStart, nblocks, budget)
	}
	// The request's blocks are the next one's prev, not a copy of them; the
	// next is built in the array before, so the meter may keep this one.
	p.prev = p.req.Blocks
	p.req.kept = true
	if p.env.series {
		p.regionTokens()
	}
	if p.nreq%forgetEvery == 0 {
		p.forget()
	}
	return &p.req
}

// The rarer parts of a request are methods of their own, so that the code
// every request runs is not spread among them.

// engineless is the request when the engine could not start (see the
// warning): the agent still sends what it always sends, so the request is
// measured, not left empty.
func (p *regionPolicy) engineless() *Request {
	p.req.Blocks = append(p.req.Blocks, p.sys...)
	if n := len(p.sys); n > 0 {
		p.req.Marks = append(p.req.Marks, CacheMark{Index: n - 1, TTL: "5m"})
	}
	return &p.req
}

// cursor is where request's walk of the new blocks is: k is where the next
// block may be in prev; pos counts from the start of a block's part
// (system or messages), which moves as the system grows, at base in the
// request and prevBase in prev.
type cursor struct{ k, base, prevBase int }

// add appends the simulator block of an engine block to the request: the
// last request's, a converted one, or a new one.
func (p *regionPolicy) add(w *cursor, eb *engine.Block) {
	key := blockKey(eb)
	var b *Block
	switch {
	case w.k < len(p.prev) && p.prev[w.k].key == key:
		b = p.prev[w.k]
		w.k++
	default:
		if s := p.index.slot(key); s.i != 0 {
			b = p.cached[s.i-1]
			w.k = w.prevBase + b.pos + 1
		} else {
			b = p.convert(eb, key)
			b.used = len(p.cached)
			p.index.fill(s, key, b.used)
			p.cached = append(p.cached, b)
		}
	}
	n := len(p.req.Blocks)
	b.pos = n - w.base
	// keep of one block, which most requests add a few of (the layout
	// left room for it).
	p.req.Blocks = p.req.Blocks[:n+1]
	if p.req.Blocks[n] != b {
		p.req.Blocks[n] = b
	}
}

// markMessages places the message breakpoints left of the budget.
func (p *regionPolicy) markMessages(er *engine.Request, msgStart, nblocks, budget int) {
	lastAnchor := nblocks/cacheLookbackBlocks*cacheLookbackBlocks - 1 // index of the last anchored block
	if lastAnchor < 0 {
		if n := len(er.Messages); n > 0 && len(er.Messages[n-1].Blocks) > 0 {
			p.req.Marks = append(p.req.Marks, CacheMark{Index: msgStart + nblocks - 1, TTL: "5m"})
		}
		return
	}
	// Anchors are the blocks j with (j+1)%16 == 0, as are both ends.
	for j := max(cacheLookbackBlocks-1, lastAnchor-(budget-1)*cacheLookbackBlocks); j <= lastAnchor; j += cacheLookbackBlocks {
		p.req.Marks = append(p.req.Marks, CacheMark{Index: msgStart + j, TTL: "5m"})
	}
}

// regionTokens lists the regions' tokens in the request, for the series.
func (p *regionPolicy) regionTokens() {
	p.occ = p.ctx.AppendOccupancy(p.occ[:0])
	for _, u := range p.occ {
		if u.Tokens > 0 {
			p.req.Regions = append(p.req.Regions, RegionTokens{Name: u.Name, Tokens: u.Tokens})
		}
	}
	slices.SortFunc(p.req.Regions, func(a, b RegionTokens) int { return strings.Compare(a.Name, b.Name) })
}

// Every forgetEvery requests, forget drops the converted blocks that no
// request of the last forgetAfter used.
const forgetEvery, forgetAfter = 512, 8

// mark marks blocks, converted ones, as held by request r.
func (p *regionPolicy) mark(blocks []*Block, r int) {
	if n := len(p.cached); len(p.marks) < n {
		// The blocks converted since are marked 0 (before any kept).
		p.marks = append(p.marks, make([]int32, n-len(p.marks))...)
	}
	for _, b := range blocks {
		p.marks[b.used] = int32(r)
	}
}

// forget drops the converted blocks that left the request a while ago
// (by their marks, in the order converted), and indexes the rest anew.
func (p *regionPolicy) forget() {
	p.mark(p.req.Blocks[len(p.sys):], p.nreq)
	n := 0
	for i, m := range p.marks {
		if m >= int32(p.nreq-forgetAfter) {
			b := p.cached[i]
			b.used = n
			p.cached[n], p.marks[n] = b, m
			n++
		}
	}
	clear(p.cached[n:])
	p.cached, p.marks = p.cached[:n], p.marks[:n]
	p.index.empty()
	for i, b := range p.cached {
		p.index.add(b.key, i)
	}
}

// keep copies src to dst, which the layout made as long, in the array of
// the request before last: it mostly holds the same blocks at the same
// places (see regionPolicy.lead), and writing only those that differ
// spares the write barriers of a copy (while the GC marks, each pointer
// copied is shaded twice). The layout leaves room for every block of a
// request, so no append is needed (whose growing was code of its own).
func keep(dst, src []*Block) []*Block {
	for i, b := range src {
		if dst[i] != b {
			dst[i] = b
		}
	}
	return dst
}

// The trigrams across a pointer's preview, one run of filler, and what ends
// it: "]", or "…]" when the result is longer than the preview.
var (
	pointerEnd    = sigOf(": " + fillerMark[:3] + "]")
	pointerEndCut = sigOf(": " + fillerMark[:3] + "…]")
)

// pointerBlock makes the block of a tool result's pointer (see pointerHead)
// whose preview is one run of filler, as makeBlockSigned would, or returns
// nil for any other text: its segments, the pointer, the run and its end,
// are counted from their lengths, and only the trigrams around its number
// are hashed, the rest taken from the last region's (nearly every pointer
// names the same) and the constant end's.
func (p *regionPolicy) pointerBlock(eb *engine.Block, text string, key uint64) *Block {
	if eb.Type != engine.BlockToolResult || !strings.HasPrefix(text, pointerHead) {
		return nil
	}
	// Nearly every pointer names the same region as the last one: past its
	// number, it is the last one's text up to the preview.
	num := len(pointerHead)
	for num < len(text) && text[num]-'0' <= 9 {
		num++
	}
	e := num + len(p.ptrMid)
	if p.ptrMid == "" || !strings.HasPrefix(text[num:], p.ptrMid) {
		pp, ok := splitPointer(text)
		if !ok {
			return nil
		}
		// A name with filler in it would be more segments.
		if name := text[pp.name:pp.nameEnd]; strings.IndexByte(name, 0xFF) >= 0 || literalRun(name, 0) < len(name) {
			return nil
		}
		sig := pointerSig
		sig.add(text[pp.name-2 : pp.nameEnd+2]) // across A's end, the region's name, across B's start
		p.ptrMid, p.ptrSig = text[pp.num:pp.preview], [2]gramSig{sig.union(pointerEnd), sig.union(pointerEndCut)}
		e = pp.preview
	}
	run, size := engine.FillerAt(text[e:])
	end := text[e+size:]
	if size == 0 || end != "]" && end != "…]" || e+len(end) > sigMaxBytes {
		return nil
	}
	var n int
	if bp, ok := p.env.tok.(bytesPer); ok {
		n = bp.CountBytes(e) + bp.CountBytes(run) + bp.CountBytes(len(end))
	} else {
		n = p.env.tok.Count(text[:e]) + p.env.tok.CountBytes(run) + p.env.tok.Count(end)
	}
	b := p.env.makeTextBlock(BlockToolResult, text, key, n)
	sig := p.ptrSig[min(len(end)-1, 1)]
	sig.add(text[len(pointerHead)-2 : num+2]) // across the head's end, the number, across A's start
	b.sig, b.sigState, b.textLen = sig, 1, e+run+len(end)
	return b
}

// textArena hands out the bytes of the strings a conversion builds (block
// ids, tool-use texts) from a shared buffer, so that each is not its own
// allocation (they were a fifth of a run's allocations). Bytes handed out
// are never written again; the strings live as long as the run's blocks.
type textArena struct{ buf []byte }

// room returns an empty slice to append at most n bytes to in place. A new
// buffer holds at least 16 such strings.
func (a *textArena) room(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(4096, 16*n))
	}
	return a.buf[len(a.buf):len(a.buf)]
}

// finish makes the string of b, built by appending to room's result. If b
// outgrew the room it is a fresh array of its own, which serves as well.
func (a *textArena) finish(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if n := len(a.buf); cap(a.buf)-n >= len(b) && unsafe.SliceData(b) == unsafe.SliceData(a.buf[n:n+1]) {
		a.buf = a.buf[:n+len(b)]
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// regionBlockID is "region#hash" (the hash as 16 hex digits): built by hand,
// as fmt was a tenth of converting blocks.
func regionBlockID(region string, hash uint64) string {
	var a textArena
	return a.regionBlockID(region, hash)
}

func (a *textArena) regionBlockID(region string, hash uint64) string {
	b := a.room(len(region) + 17)
	b = append(b, region...)
	b = append(b, '#')
	b = binary.BigEndian.AppendUint64(b, hexDigits(uint32(hash>>32)))
	return a.finish(binary.BigEndian.AppendUint64(b, hexDigits(uint32(hash))))
}

// hexDigits is the 8 hex digits of x, the first in the top byte: its
// nibbles spread one to a byte, then made digits all at once (a table of
// digits missed the cache, evicted between requests).
func hexDigits(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	v = (v | v<<8) & 0x00FF00FF00FF00FF
	v = (v | v<<4) & 0x0F0F0F0F0F0F0F0F
	letters := (v + 0x0606060606060606) >> 4 & 0x0101010101010101 // 1 in the bytes over 9
	return v + 0x3030303030303030 + letters*('a'-'0'-10)
}

// toolUseText renders a tool call as <tool_use id="…" name="…">args</tool_use>
// (id and name Go-quoted).
func toolUseText(id, name string, args []byte) string {
	var a textArena
	text, _ := a.toolUseText(id, toolUseMid(name), args)
	return text
}

// The fixed parts of a tool call's text.
const (
	toolUseHead = "<tool_use id="
	toolUseName = " name="
	toolUseTail = "</tool_use>"
)

// toolUseSig holds the trigrams within the fixed parts of a tool call's text.
var toolUseSig = sigOf(toolUseHead).union(sigOf(toolUseName)).union(sigOf(toolUseTail))

// toolUseMid is a tool call's text from its id's closing quote to its args.
func toolUseMid(name string) string {
	return string(append(appendQuote([]byte(toolUseName), name), '>'))
}

// toolUseText also returns where the quoted id ends in the text; mid is
// toolUseMid of the call's name.
func (a *textArena) toolUseText(id, mid string, args []byte) (text string, idEnd int) {
	b := a.room(len(id) + len(mid) + len(args) + 30)
	b = append(b, toolUseHead...)
	b = appendQuote(b, id)
	idEnd = len(b)
	b = append(b, mid...)
	b = append(b, args...)
	b = append(b, toolUseTail...)
	return a.finish(b), idEnd
}

// toolUseBlock makes the block of a tool call, as makeBlockSigned would:
// unless its args hold filler (the quoted id and name cannot hold a byte
// 0xFF, nor a run of filler that reaches past their quotes), its text is
// one plain segment, counted from its length, and signed from the trigrams
// of the parts that vary, those within the fixed parts and the name's
// (nearly every call names the tool the last one did) taken from useSig.
// An id that needs no escaping (nearly all) is copied as it is.
func (p *regionPolicy) toolUseBlock(eb *engine.Block, key uint64) *Block {
	if eb.ToolName != p.useName || p.useMid == "" {
		p.useTool(eb.ToolName)
	}
	id, args := eb.ToolCallID, eb.Args
	// A run written out lies within the id, the name or the args: the
	// quotes and brackets around each end it.
	if p.useRun || len(id) >= len(fillerMark) && strings.Contains(id, fillerMark) ||
		len(args) > 0 && (bytes.IndexByte(args, 0xFF) >= 0 || bytes.Contains(args, []byte(fillerMark))) {
		text, _ := p.arena.toolUseText(id, p.useMid, args)
		return p.env.makeBlockSigned(BlockAssistant, "", text, 0, nil, key)
	}
	var text string
	idEnd := len(toolUseHead) + len(id) + 2 // past the id's closing quote
	if plainQuoted(id) {
		t := p.arena.room(idEnd + len(p.useMid) + len(args) + len(toolUseTail))
		t = append(t, toolUseHead+`"`...)
		t = append(t, id...)
		t = append(t, p.useQuoteMid...)
		if len(args) > 0 {
			t = append(t, args...)
		}
		text = p.arena.finish(append(t, toolUseTail...))
	} else {
		text, idEnd = p.arena.toolUseText(id, p.useMid, args)
	}
	if len(text) > sigMaxBytes {
		return p.env.makeBlockSigned(BlockAssistant, "", text, 0, nil, key)
	}
	var n int
	if bp, ok := p.env.tok.(bytesPer); ok {
		n = bp.CountBytes(len(text))
	} else {
		n = p.env.tok.Count(text)
	}
	b := p.env.makeTextBlock(BlockAssistant, text, key, n)
	sig := p.useSigEmpty
	if len(args) > 0 {
		sig = p.useSig
		sig.addLong(text[idEnd+len(p.useMid)-2 : len(text)-len(toolUseTail)+2]) // across the name's end, the args, across the tail's start
	}
	sig.add(text[len(toolUseHead)-2 : idEnd+2]) // across the head's end, the id, across the name's start
	b.sig, b.sigState, b.textLen = sig, 1, len(text)
	return b
}

// useTool makes the parts of a call's text that depend on its tool's name.
func (p *regionPolicy) useTool(name string) {
	p.useName, p.useMid = name, toolUseMid(name)
	p.useQuoteMid = `"` + p.useMid
	p.useSig = toolUseSig
	p.useSig.add(p.useMid[len(toolUseName)-2:]) // across the attribute's end, the name, '>'
	p.useRun = strings.Contains(p.useMid, fillerMark)
	p.useSigEmpty = p.useSig
	p.useSigEmpty.add(p.useMid[len(p.useMid)-2:] + toolUseTail[:2])
}

// plainQuoted reports whether s is quoted as it is: printable ASCII,
// without a quote or a backslash.
func plainQuoted(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendQuote is strconv.AppendQuote, without its rune decoding for the
// printable ASCII of most ids and names.
func appendQuote(b []byte, s string) []byte {
	if !plainQuoted(s) {
		return strconv.AppendQuote(b, s)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

package engine

import (
	"fmt"
	"math"
	"strings"
)

// RegionFullError is a write refused by admission = "reject".
type RegionFullError struct {
	Region    string
	Used, Max int
}

func (e *RegionFullError) Error() string {
	return fmt.Sprintf("Region '%s' is full (%d/%d tokens) and does not evict automatically - release an entry before adding another", e.Region, e.Used, e.Max)
}

// BudgetError is a write that does not fit a region's budget.
type BudgetError struct{ Need, Max int }

func (e *BudgetError) Error() string {
	return fmt.Sprintf("Content exceeds token budget: %d > %d", e.Need, e.Max)
}

// EntryTooLargeError is a keyed entry bigger than its whole hashmap.
type EntryTooLargeError struct{ Tokens, Max int }

func (e *EntryTooLargeError) Error() string {
	return fmt.Sprintf("Entry (%d tokens) exceeds region budget (%d max)", e.Tokens, e.Max)
}

// entry is one stored item. Its tokens are counted once, when written.
// It packs into 192 bytes, three cache lines: the fields every write and
// every rendered message use come first, the one-byte fields together
// among them, and what only some regions use (keys, checklist items, the
// summariser's lines) last.
type entry struct {
	content string
	tokens  int
	stamp   uint64   // logical write clock (D6)
	msg     *Message // cached message rendering (sliding regions)

	kind                EntryKind
	hasKey              bool
	isError             bool
	item, done          bool // checklist item
	scanned, summarised bool

	callID  string     // tool result
	tool    string     // tool result
	calls   []ToolCall // assistant turn
	callTok []int      // tokens of each call, counted when written

	key  string
	id   int // checklist item
	note string

	// The content's lines as the Extractive summariser scores them, kept
	// from its second summary on (content does not change once the entry
	// is stored).
	lines []sumLine
}

// region is a region instance in a live window.
type region struct {
	def       *RegionDef
	name      string
	kind      Kind
	max       int
	threshold int
	entries   []*entry
	store     []*entry // an array of ours that entries may be a window of
	tokens    int
	hidden    bool
	infra     bool
	nextID    int        // checklist ids handed out so far (D7)
	version   uint64     // bumped on every change
	dirtyFrom int        // lowest entry index changed since the last render; -1 clean
	asm       *assembler // told of changes; set when the assembler lists the region
	script    RegionScript
	rend      rendered
	lastStamp uint64 // the newest write into the region
	// Front removals since the last render, so a one-block region keeps
	// the rest of its text instead of joining every entry again: entries
	// removed, their bytes with the blank line after each, and the lowest
	// index changed otherwise (-1: none), in current indices.
	shifted, shiftedBytes, changedFrom int
	// overBudget digests the last render warned about as over budget
	// (0: the last render fitted), so an unchanged render warns once.
	overBudget uint64
	// The number of entries past which the sliding strategy acts
	// (slideAt(def)): push calls it only then, as most writes to a
	// window leave it as it is.
	slideAt int
}

// slideAt is the number of entries of a region of d past which
// enforceSliding acts; no number for a region that does not slide.
func slideAt(d *RegionDef) int {
	if d.Kind != KindSlidingWindow {
		return math.MaxInt
	}
	switch d.Strategy {
	case StrategyBulk:
		return d.MaxItems + d.Overflow
	case StrategyCompact:
		if d.CompactCount <= 0 {
			return math.MaxInt
		}
		return d.MaxItems + d.CompactCount
	}
	return d.MaxItems
}

func (r *region) touch(from int) {
	r.version++
	r.changed()
	r.dirtyAt(from)
}

// dirtyAt records that the entries from from on changed. (touch does not
// inline, so appendEntry, which every write runs, writes touch out with it.)
func (r *region) dirtyAt(from int) {
	if r.dirtyFrom < 0 || from < r.dirtyFrom {
		r.dirtyFrom = from
	}
	if r.changedFrom < 0 || from < r.changedFrom {
		r.changedFrom = from
	}
}

// touchFront records the removal of the n oldest entries, bytes long with
// a blank line after each.
func (r *region) touchFront(n, bytes int) {
	r.version++
	r.changed()
	r.dirtyFrom = 0
	r.shifted += n
	r.shiftedBytes += bytes
	if r.changedFrom >= 0 {
		// A changed entry removed with them leaves 0: nothing is kept.
		r.changedFrom = max(r.changedFrom-n, 0)
	}
}

// changed tells the assembler that the region's side of the request
// changed. (Regions it has not listed yet it lists at the next Assemble.)
func (r *region) changed() {
	if r.asm == nil || r.hidden {
		return
	}
	a := r.asm
	if r.kind == KindSlidingWindow {
		a.msgTouched = true
		a.emptyTouched = a.emptyTouched || len(r.rend.msgs) == 0
		return
	}
	a.sysTouched = true
	if n := len(a.sysChanged); n > 0 && a.sysChanged[n-1] == r {
		return
	}
	if len(a.sysChanged) < maxChanged {
		a.sysChanged = append(a.sysChanged, r)
	} else {
		a.manyChanged = true
	}
}

func (r *region) persistentCustom() bool { return r.kind == KindCustom && r.def.Persistent }

// pinnedLike: never evicted by the cascade nor cleared by clear/compact edges.
func (r *region) pinnedLike() bool {
	switch r.kind {
	case KindPinned, KindHashMap, KindCompactHistory:
		return true
	case KindCustom:
		return r.def.Persistent
	}
	return false
}

// stageSpecific: cleared by clear edges, summarised by compact edges.
func (r *region) stageSpecific() bool { return !r.pinnedLike() }

func (r *region) rolls() bool {
	return r.def.Admission == AdmissionEvict && r.kind.rollsOffOldest()
}

// groupSize is the turn group at index i: an assistant turn and the tool
// results that immediately follow it; anything else is a group of one.
func (r *region) groupSize(i int) int {
	if i >= len(r.entries) {
		return 0
	}
	n := 1
	if r.entries[i].kind == EntryAssistant {
		for i+n < len(r.entries) && r.entries[i+n].kind == EntryToolResult {
			n++
		}
	}
	return n
}

// removeOldest drops the oldest turn group and returns its entries.
func (r *region) removeOldest() []*entry {
	n := r.groupSize(0)
	if n == 0 {
		return nil
	}
	return r.removeRange(0, n)
}

func (r *region) removeRange(i, n int) []*entry {
	out := make([]*entry, n)
	copy(out, r.entries[i:i+n])
	r.dropRange(i, n)
	return out
}

// dropRange is removeRange for a caller that needs only the tokens freed.
func (r *region) dropRange(i, n int) (tokens int) {
	bytes := 0
	for _, e := range r.entries[i : i+n] {
		tokens += e.tokens
		bytes += len(e.content) + 2
	}
	r.tokens -= tokens
	if i == 0 {
		clear(r.entries[:n])
		r.entries = r.entries[n:]
		r.touchFront(n, bytes)
		return tokens
	}
	r.entries = append(r.entries[:i], r.entries[i+n:]...)
	r.touch(0)
	return tokens
}

func (r *region) clearAll() int {
	freed := r.tokens
	r.entries = nil
	r.tokens = 0
	r.touch(0)
	return freed
}

func (r *region) appendEntry(e *entry) {
	r.lastStamp = max(r.lastStamp, e.stamp)
	if len(r.entries) == cap(r.entries) {
		r.appendFull(e)
	} else {
		r.entries = append(r.entries, e)
	}
	r.tokens += e.tokens
	// touch(len(r.entries)-1), written out: every write runs it.
	r.version++
	r.changed()
	r.dirtyAt(len(r.entries) - 1)
}

// appendFull is appendEntry's append to a full array.
func (r *region) appendFull(e *entry) {
	if n := len(r.entries); 2*n <= cap(r.store) {
		// The oldest entries left from the front of the array: the rest
		// move down to its start rather than into a bigger one.
		copy(r.store[:n], r.entries)
		clear(r.store[n:cap(r.store)])
		r.entries = r.store[:n]
	}
	if len(r.entries) == cap(r.entries) {
		r.entries = append(r.entries, e)
		r.store = r.entries
	} else {
		r.entries = append(r.entries, e)
	}
}

func (r *region) joined() string {
	parts := make([]string, len(r.entries))
	for i, e := range r.entries {
		parts[i] = e.content
	}
	return strings.Join(parts, "\n\n")
}

func (r *region) indexOfKey(key string) int {
	for i, e := range r.entries {
		if e.hasKey && e.key == key {
			return i
		}
	}
	return -1
}

// newEntry counts a text entry's tokens once, here. It reuses an entry
// the window let go of, if any: a new one per write was a quarter of the
// engine's allocation.
func (c *Context) newEntry(kind EntryKind, content string) *entry {
	return c.newSizedEntry(kind, content, -1)
}

// newSizedEntry is newEntry for content whose written-out length (TextLen)
// is size, or -1 if not known: BytesPerFour's count follows from it.
func (c *Context) newSizedEntry(kind EntryKind, content string, size int) *entry {
	return c.newTextEntry(kind, content, size, false)
}

// newTextEntry is newSizedEntry for content known to be canonical
// (canonicalRuns leaves it as it is) if canon.
func (c *Context) newTextEntry(kind EntryKind, content string, size int, canon bool) *entry {
	if !canon && !c.literalRuns && len(content) >= len(fillerMark) {
		// The same text written out; a shorter one holds no run to encode.
		content = canonicalRuns(content)
	}
	var tokens int
	switch {
	case !c.bpf:
		tokens = c.counter.Count(content)
	case size >= 0:
		tokens = lenTokens(size)
	default:
		tokens = lenTokens(TextLen(content))
	}
	if n := len(c.free); n > 0 {
		e := c.free[n-1]
		c.free = c.free[:n-1]
		e.content, e.tokens, e.kind = content, tokens, kind
		return e
	}
	return &entry{content: content, tokens: tokens, kind: kind}
}

// release hands entries that left r, and that nothing else holds, to
// newEntry.
func (c *Context) release(r *region, gone []*entry) {
	for _, e := range gone {
		c.forget(r, e)
	}
	c.free = append(c.free, gone...)
}

// forget empties an entry that left r, so that it keeps no content alive:
// its message goes to r's window and the room of its calls to AddAssistant,
// for reuse.
func (c *Context) forget(r *region, e *entry) {
	if e.msg != nil {
		r.rend.retire(e.msg, c.asm.count)
	}
	if cap(e.calls) > 0 && len(c.callRooms) < maxCallRooms {
		// Past its length the room is empty already; most turns have
		// one call, emptied without a runtime call.
		if len(e.calls) == 1 {
			e.calls[0] = ToolCall{}
		} else {
			clear(e.calls)
		}
		c.callRooms = append(c.callRooms, callRoom{e.calls[:0], e.callTok[:0]})
	}
	if sc := &c.sumSc; cap(e.lines) > 0 && len(sc.rooms) < maxLineRooms {
		clear(e.lines) // past its length the room is empty already
		sc.rooms = append(sc.rooms, e.lines[:0])
	}
	*e = entry{}
}

// maxCallRooms caps the rooms kept for AddAssistant.
const maxCallRooms = 64

// callRoom is the room of an assistant turn's calls and their tokens.
type callRoom struct {
	calls []ToolCall
	tok   []int
}

func (c *Context) stampEntry(e *entry) {
	c.clock++
	e.stamp = c.clock
}

// write is the window-level write: on_write for custom regions, the core
// append (ENGINE.md §3.1), compaction at the threshold (D2), the sliding
// strategies (D4) and custom on_overflow.
func (c *Context) write(r *region, e *entry) error {
	if r.kind == KindCustom && r.script != nil && c.onWrite(r, e) {
		return nil
	}
	if r.kind == KindCompacting && len(r.entries) > 0 && r.tokens+e.tokens > r.threshold {
		// D2: summarise what is there before the new content lands, so the
		// newest read stays verbatim.
		c.compact(r, "threshold")
	}
	if err := c.push(r, e); err != nil {
		return c.overflow(r, e, err)
	}
	return nil
}

// onWrite runs a custom region's on_write hook on e, and reports whether
// it dropped e.
func (c *Context) onWrite(r *region, e *entry) bool {
	if _, ok := r.script.HasHook("on_write"); !ok {
		return false
	}
	repl, accept, err := r.script.OnWrite(c.scriptCtx(r), scriptEntry(e))
	c.scriptOutput(r, "on_write")
	switch {
	case err != nil:
		c.warn(r.name, fmt.Sprintf("on_write failed, entry accepted unchanged: %v", err))
	case repl != nil:
		e.content = repl.Content
		e.tokens = c.counter.Count(e.content)
		e.lines, e.scanned, e.summarised = nil, false, false
	case !accept:
		c.emit(Event{Kind: EventDrop, Region: r.name, Tokens: e.tokens, Entries: 1, Message: "on_write dropped the entry"})
		return true
	}
	return false
}

// overflow is write's answer to a push that failed with err: a
// non-persistent custom region's on_overflow makes room, else err stands.
func (c *Context) overflow(r *region, e *entry, err error) error {
	if r.kind != KindCustom || r.def.Persistent {
		return err
	}
	var be *BudgetError
	if !asBudget(err, &be) || e.tokens > r.max {
		return err
	}
	c.customOverflow(r, r.tokens+e.tokens-r.max, true)
	return c.push(r, e)
}

func asBudget(err error, be **BudgetError) bool {
	b, ok := err.(*BudgetError)
	if ok {
		*be = b
	}
	return ok
}

// push is the reference core append (region/mod.rs push_entry) with D4.
func (c *Context) push(r *region, e *entry) error {
	if r.tokens+e.tokens > r.max || r.def.Admission == AdmissionReject {
		if err := c.makeRoom(r, e); err != nil {
			return err
		}
	}
	c.stampEntry(e)
	r.appendEntry(e)
	c.total += e.tokens
	if len(r.entries) > r.slideAt {
		c.enforceSliding(r)
	}
	return nil
}

// makeRoom is push's admission of e to r when r is over budget with it or
// rejects what does not fit: the eviction that rolls r, else the error.
func (c *Context) makeRoom(r *region, e *entry) error {
	if r.tokens+e.tokens > r.max {
		if r.def.Admission == AdmissionReject && len(r.entries) > 0 {
			return &RegionFullError{Region: r.name, Used: r.tokens, Max: r.max}
		}
		if r.rolls() && e.tokens <= r.max {
			for r.tokens+e.tokens > r.max && len(r.entries) > 0 {
				c.evictOldest(r, "region budget")
			}
		}
	}
	if r.tokens+e.tokens > r.max {
		return &BudgetError{Need: r.tokens + e.tokens, Max: r.max}
	}
	if r.def.Admission == AdmissionReject && r.kind == KindSlidingWindow && len(r.entries)+1 > r.def.MaxItems {
		return &RegionFullError{Region: r.name, Used: r.tokens, Max: r.max}
	}
	return nil
}

// evictOldest drops a region's oldest turn group, recorded as evicted.
func (c *Context) evictOldest(r *region, why string) {
	n := r.groupSize(0)
	if n == 0 {
		return
	}
	// Forgotten once dropRange has read them.
	k := len(c.free)
	c.free = append(c.free, r.entries[:n]...)
	t := r.dropRange(0, n)
	for _, e := range c.free[k:] {
		c.forget(r, e)
	}
	c.total -= t
	c.emit(Event{Kind: EventEvict, Region: r.name, Tokens: t, Entries: n, Message: why})
}

// evictDownTo drops r's oldest turn groups until it holds at most keep
// entries, each group recorded as evictOldest records it; the groups leave
// the region in one cut, not one at a time.
func (c *Context) evictDownTo(r *region, keep int, why string) {
	n := 0
	for len(r.entries)-n > keep {
		g := r.groupSize(n)
		if g == 0 {
			break
		}
		t := 0
		for _, e := range r.entries[n : n+g] {
			t += e.tokens
		}
		c.emit(Event{Kind: EventEvict, Region: r.name, Tokens: t, Entries: g, Message: why})
		n += g
	}
	if n == 0 {
		return
	}
	// Forgotten once dropRange has read them.
	k := len(c.free)
	c.free = append(c.free, r.entries[:n]...)
	c.total -= r.dropRange(0, n)
	for _, e := range c.free[k:] {
		c.forget(r, e)
	}
}

// evicted records entries a region shed and keeps the window total.
func (c *Context) evicted(r *region, gone []*entry, why string) {
	t := 0
	for _, e := range gone {
		t += e.tokens
	}
	c.total -= t
	if len(gone) > 0 {
		c.emit(Event{Kind: EventEvict, Region: r.name, Tokens: t, Entries: len(gone), Message: why})
	}
}

func (c *Context) enforceSliding(r *region) {
	if r.kind != KindSlidingWindow {
		return
	}
	d := r.def
	switch d.Strategy {
	case StrategyPerItem:
		c.evictDownTo(r, d.MaxItems, "max_items")
	case StrategyBulk:
		if len(r.entries) > d.MaxItems+d.Overflow {
			c.evictDownTo(r, d.MaxItems, "max_items (bulk)")
		}
	case StrategyCompact:
		// D4: fold the oldest compact_count entries into one summary entry.
		if len(r.entries) > d.MaxItems+d.CompactCount && d.CompactCount > 0 {
			n := 0
			for n < max(d.CompactCount, 2) && n < len(r.entries) {
				n += r.groupSize(n)
			}
			c.foldOldest(r, n)
		}
	}
}

// foldOldest replaces the oldest n entries of a sliding window with one
// summary entry at its front (D4); a failed summary drops them instead.
func (c *Context) foldOldest(r *region, n int) {
	in := 0
	for i := 0; i < n; i++ {
		in += r.entries[i].tokens
	}
	joined := func() string {
		parts := make([]string, n)
		for i := 0; i < n; i++ {
			parts[i] = r.entries[i].content
		}
		return strings.Join(parts, "\n\n")
	}
	sum, err := c.summarize(r.name, r.entries[:n], joined, min(c.bp.Compaction.MaxSummaryTokens, max(r.max/4, 1)), in)
	gone := r.removeRange(0, n)
	c.total -= in
	if err != nil {
		c.emit(Event{Kind: EventEvict, Region: r.name, Tokens: in, Entries: len(gone), Message: "strategy compact: summariser failed, entries dropped"})
		return
	}
	se := c.summaryEntry(sum)
	c.stampEntry(se)
	r.entries = append([]*entry{se}, r.entries...)
	r.lastStamp = max(r.lastStamp, se.stamp)
	r.tokens += se.tokens
	c.total += se.tokens
	r.touch(0)
	c.emit(Event{Kind: EventCompact, Region: r.name, Tokens: in, Entries: len(gone), InputTokens: in, OutputTokens: se.tokens, Message: "strategy compact folded the oldest entries"})
}

// upsert writes a keyed entry into a hashmap (D6: LRU on the logical clock).
func (c *Context) upsert(r *region, key, content string) error {
	tokens := c.counter.Count(content)
	if i := r.indexOfKey(key); i >= 0 {
		old := r.entries[i]
		if tokens > r.max {
			return &EntryTooLargeError{Tokens: tokens, Max: r.max}
		}
		r.tokens += tokens - old.tokens
		c.total += tokens - old.tokens
		ne := &entry{content: content, tokens: tokens, kind: EntryText, key: key, hasKey: true}
		c.stampEntry(ne)
		r.entries[i] = ne
		r.lastStamp = ne.stamp
		r.touch(i)
		for r.tokens > r.max {
			c.evictLRU(r, ne)
		}
		return nil
	}
	if r.def.HasMaxEntries && r.def.MaxEntries > 0 {
		for len(r.entries) >= r.def.MaxEntries {
			c.evictLRU(r, nil)
		}
	}
	for r.tokens+tokens > r.max && len(r.entries) > 0 {
		c.evictLRU(r, nil)
	}
	if r.tokens+tokens > r.max {
		return &EntryTooLargeError{Tokens: tokens, Max: r.max}
	}
	ne := &entry{content: content, tokens: tokens, kind: EntryText, key: key, hasKey: true}
	c.stampEntry(ne)
	r.appendEntry(ne)
	c.total += tokens
	return nil
}

// evictLRU removes the least recently written entry (ties: lowest index),
// never keep.
func (c *Context) evictLRU(r *region, keep *entry) {
	best := -1
	for i, e := range r.entries {
		if e == keep {
			continue
		}
		if best < 0 || e.stamp < r.entries[best].stamp {
			best = i
		}
	}
	if best < 0 {
		return
	}
	c.evicted(r, r.removeRange(best, 1), "least recently used")
}

// todoAdd adds a checklist item; ids come from a counter that never goes
// back (D7).
func (c *Context) todoAdd(r *region, item string) (int, error) {
	e := c.newEntry(EntryText, item)
	e.item = true
	e.id = r.nextID + 1
	if err := c.write(r, e); err != nil {
		return 0, err
	}
	r.nextID = e.id
	return e.id, nil
}

func (r *region) item(id int) *entry {
	for _, e := range r.entries {
		if e.item && e.id == id {
			return e
		}
	}
	return nil
}

func (r *region) openItems() []*entry {
	var out []*entry
	for _, e := range r.entries {
		if e.item && !e.done {
			out = append(out, e)
		}
	}
	return out
}

// renderChecklist is the reference render_checklist.
func (r *region) renderChecklist() string {
	var open, done []*entry
	for _, e := range r.entries {
		if !e.item {
			continue
		}
		if e.done {
			done = append(done, e)
		} else {
			open = append(open, e)
		}
	}
	if len(open)+len(done) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Checklist (%d open, %d done):\n", len(open), len(done))
	lines := make([]string, 0, len(open)+len(done))
	for _, e := range append(open, done...) {
		mark := "[ ]"
		if e.done {
			mark = "[x]"
		}
		l := fmt.Sprintf("%s %d %s", mark, e.id, e.content)
		if e.note != "" {
			l += "\n    note: " + e.note
		}
		lines = append(lines, l)
	}
	b.WriteString(strings.Join(lines, "\n"))
	return strings.TrimRight(b.String(), " \t\n")
}

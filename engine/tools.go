package engine

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxReadFileBytes is read_file's own hard cap (reference exec.rs).
const MaxReadFileBytes = 256 * 1024

// RouteOutcome says what became of a routed tool result.
type RouteOutcome uint8

// Route outcomes; the last four carry a pointer in the conversation.
const (
	RoutedInline    RouteOutcome = iota // stored in the conversation itself
	RoutedWhole                         // stored whole in its region
	RoutedTruncated                     // its start stored, the rest dropped
	RoutedDropped                       // the region refused it; only the preview survives
	RoutedHidden                        // stored in a region the stage does not carry
)

var routeNames = [...]string{"inline", "whole", "truncated", "dropped", "hidden"}

func (o RouteOutcome) String() string {
	if int(o) < len(routeNames) {
		return routeNames[o]
	}
	return fmt.Sprintf("RouteOutcome(%d)", o)
}

// Routed reports where a tool result went.
type Routed struct {
	Region  string
	Outcome RouteOutcome
	Tokens  int    // tokens stored in Region
	Pointer string // the pointer text left in the conversation, if any
	File    bool   // stored by file tracking
}

// toolAliases maps a tool name to its canonical name: writing bash covers
// the shell the model calls.
var toolAliases = map[string]string{"shell": "bash", "run_shell": "bash", "exec": "bash", "Bash": "bash", "Read": "read_file", "Write": "write_file"}

func canonicalTool(name string) string {
	if c, ok := toolAliases[name]; ok {
		return c
	}
	return name
}

func lookupTool[V any](m map[string]V, tool string) (V, bool) {
	if len(m) == 0 {
		var zero V
		return zero, false
	}
	if v, ok := m[tool]; ok {
		return v, true
	}
	// The first matching key in sorted order: the least, found without
	// sorting (this runs for every routed result).
	ct := canonicalTool(tool)
	var v V
	best, ok := "", false
	for k, kv := range m {
		if (!ok || k < best) && canonicalTool(k) == ct {
			best, v, ok = k, kv, true
		}
	}
	return v, ok
}

// AddToolResult stores a tool result where the stage's routing sends it
// (ENGINE.md §8): caps, file tracking, the target region with its
// truncation ladder, and the pointer left in the conversation. What most
// results skip is done in functions of its own, so that the code a result
// runs through takes few cache lines.
func (c *Context) AddToolResult(tr ToolResult) (Routed, error) {
	call := c.takeCall(tr.CallID)
	tool := tr.Tool
	if tool == "" {
		tool = call.Name
	}
	rc := c.resolveRoute(tool)
	content := tr.Content
	size := -1 // TextLen(content), once counted: newEntry need not count it again
	if rc.ct == "read_file" {
		if size = TextLen(content); size > MaxReadFileBytes {
			content, size = capReadFile(content, size), -1
		}
	}
	var routed Routed
	if tr.IsError || rc.capTokens > 0 || rc.files != nil {
		content, size, routed.File = c.shapeResult(tr, rc, call, content, size)
	}
	r := rc.region
	if r == nil {
		return routed, noRoute(tool, rc.target)
	}
	routed.Region = rc.target
	if rc.target == "conversation" {
		return c.addInlineResult(tr, tool, content, size, routed)
	}
	e := c.newSizedEntry(EntryText, content, size)
	if r.kind == KindCustom {
		// Seed 001 hands a custom region's hooks a routed result as a
		// tool_result entry (its brain.rhai trims successes by that kind);
		// built-in regions keep it as text, which is how they render it.
		e.kind, e.callID, e.tool, e.isError = EntryToolResult, tr.CallID, tool, tr.IsError
	}
	full := e.tokens
	out := RoutedWhole // ladder, written out for the two writes of a result
	if err := c.write(r, e); err != nil {
		if out, err = c.cutToFit(r, e, err); err != nil {
			return routed, err
		}
	}
	routed.Outcome, routed.Tokens = out, e.tokens
	var ptr string
	canon := false // ptr is as canonicalRuns leaves it
	if out == RoutedWhole && !r.hidden {
		ptr, size, canon = c.wholePointer(full, rc, content)
	} else {
		ptr, size = otherPointer(&routed, r, full, content, e.content), -1
	}
	routed.Pointer = ptr
	pe := c.newTextEntry(EntryToolResult, ptr, size, canon)
	pe.callID, pe.tool, pe.isError = tr.CallID, tool, tr.IsError
	if err := c.write(c.conv, pe); err != nil {
		if _, err = c.cutToFit(c.conv, pe, err); err != nil {
			return routed, err
		}
	}
	return routed, nil
}

// capReadFile cuts a read_file result of size bytes to MaxReadFileBytes,
// saying so.
func capReadFile(content string, size int) string {
	head := truncateUTF8(content, MaxReadFileBytes)
	return head + fmt.Sprintf("\n[truncated] The file is %d bytes; the first %d are shown. Read a range, or narrow with a search, rather than re-reading the whole file.", size, TextLen(head))
}

// shapeResult is what AddToolResult does to a result before storing it
// for an error, a cap or file tracking: the content, its TextLen (or -1),
// and whether file tracking took it.
func (c *Context) shapeResult(tr ToolResult, rc *route, call *ToolCall, content string, size int) (string, int, bool) {
	if tr.IsError {
		if hint := c.pathErrorHint(rc.ct, *call); hint != "" {
			content += hint
			size = -1
		}
	}
	if capTokens := rc.capTokens; capTokens > 0 {
		if size < 0 {
			size = TextLen(content)
		}
		if size > capTokens*4 {
			content = truncateChars(content, capTokens*4) + "\n[...truncated]"
			size = -1
		}
	}
	if fr := rc.files; fr != nil && !tr.IsError {
		if text, ok := c.trackFile(fr, rc.ct, *call, content); ok {
			return text, -1, true
		}
	}
	return content, size, false
}

func noRoute(tool, target string) error {
	return fmt.Errorf("route %s result: %w", tool, &RegionNotFoundError{Region: target})
}

// addInlineResult stores a result routed to the conversation itself.
func (c *Context) addInlineResult(tr ToolResult, tool, content string, size int, routed Routed) (Routed, error) {
	e := c.newSizedEntry(EntryToolResult, content, size)
	e.callID, e.tool, e.isError = tr.CallID, tool, tr.IsError
	out, err := c.ladder(c.conv, e)
	routed.Outcome, routed.Tokens = out, e.tokens
	if out == RoutedWhole {
		routed.Outcome = RoutedInline
	}
	return routed, err
}

// otherPointer is the pointer left for a result not stored whole in r, or
// stored in a hidden region, which sets its outcome; kept is what r stored
// of content, full tokens long.
func otherPointer(routed *Routed, r *region, full int, content, kept string) string {
	switch {
	case r.hidden:
		routed.Outcome = RoutedHidden
		return fmt.Sprintf("[output stored in context region '%s' (%d tokens), which this stage does not carry - it is kept for a later stage and cannot be read from here. Preview: %s]", r.name, full, previewOf(content))
	case routed.Outcome == RoutedTruncated:
		preview := previewOf(content)
		omitted := runeCount(content) - runeCount(kept)
		return fmt.Sprintf("[output was too large for context region '%s': the start of it is in this prompt under that heading and %d characters were dropped. Release what you are finished with (context_delete) before fetching more this size. Preview: %s]", r.name, max(omitted, 0), preview)
	}
	return fmt.Sprintf("[output could NOT be stored - context region '%s' is full and refused it, so only this preview survives. Release what you are finished with (context_delete) and fetch it again if you still need it. Preview: %s]", r.name, previewOf(content))
}

// route is a tool's routing in the current stage, resolved.
type route struct {
	tool, ct  string // the tool and its canonical name
	target    string // the region its results go to
	region    *region
	capTokens int     // 0: no cap
	files     *region // the file-tracking hashmap, if tracking is on
	mid       string  // pointerMid(target), once needed
	// The end of a whole result's pointer after its tokens when the result
	// starts with a run of more than 160 bytes (most): mid, then 160 bytes
	// of the run, once needed.
	runEnd string
}

// resolveRoute resolves tool's routing (ENGINE.md §8), or returns the last
// tool's: results of one tool come in runs, and resolving one took four
// map look-ups. EnterStage and addRegion forget it.
func (c *Context) resolveRoute(tool string) *route {
	rc := &c.route
	if rc.tool == tool && rc.ct != "" {
		return rc
	}
	*rc = route{tool: tool, ct: canonicalTool(tool), target: "conversation"}
	var rt *Routing
	if c.stage != nil {
		rt = c.stage.Routing
	}
	if rt != nil {
		rc.target = rt.DefaultRegion
		rc.capTokens = rt.MaxResultTokens
		if n, ok := lookupTool(rt.PerTool, tool); ok {
			rc.capTokens = n
		}
		if o, ok := lookupTool(rt.Overrides, tool); ok {
			if o.Region != "" {
				rc.target = o.Region
			}
			if o.HasCap {
				rc.capTokens = o.MaxResultTokens
			}
		}
		if !rt.Persist && c.byName["scratch"] != nil {
			rc.target = "scratch"
		}
	}
	if ft := c.bp.FileTracking; ft.Enabled {
		if fr := c.byName[ft.Region]; fr != nil && fr.kind == KindHashMap {
			rc.files = fr
		}
	}
	rc.region = c.byName[rc.target]
	return rc
}

// pathErrorHint: a failed file tool whose path names a region gets told
// where that region's content already is (ENGINE.md §8.5).
func (c *Context) pathErrorHint(tool string, call ToolCall) string {
	switch tool {
	case "read_file", "read_files", "list_dir", "write_file", "edit_file":
	default:
		return ""
	}
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(call.Args, &args) != nil || args.Path == "" {
		return ""
	}
	base := args.Path[strings.LastIndexAny(args.Path, `/\`)+1:]
	r := c.byName[base]
	if r == nil {
		return ""
	}
	if r.hidden {
		return fmt.Sprintf("\n'%s' is a context region, not a file - this stage does not carry it, so its contents are kept for a later stage and cannot be read from here.", base)
	}
	return fmt.Sprintf("\n'%s' is a context region, not a file - its contents are already in this prompt, under the '%s' heading. Read them there rather than through a tool.", base, base)
}

// wholePointer is the pointer left for a result stored whole in rc's
// region, its TextLen (so that its entry need not measure it again), and
// whether it is canonical (canonicalRuns need not look at it). It
// is written for nearly every routed result: it is cut from a slab shared
// by many (a Builder only appends, so the pointers cut from it stay as they
// are). It is written in pieces, the route's made once (mid, and runEnd for
// the results that start with a long run, most of them): each write is
// inlined, and as many as the pointer has parts were most of the
// instruction-cache misses of routing a result.
func (c *Context) wholePointer(tokens int, rc *route, content string) (ptr string, textLen int, canon bool) {
	k := twoDigitRun(content) // most results start with a run of two digits
	if k == 0 {
		k, _ = parseRun(content)
	}
	if k > 160 && rc.runEnd != "" {
		// The preview is 160 bytes of the run, cut (previewParts): runEnd
		// holds its encoding, the only run of the pointer.
		pc := &c.ptrs
		endLen := len(rc.mid) + 160 + len("…]")
		if tokens >= 0 && tokens < len(pc.byTokens) && pc.byTokens[tokens] != "" {
			// Made before: its tokens need not be written again.
			ptr = pc.byTokens[tokens]
			return ptr, len(ptr) - len(rc.runEnd) + endLen, pc.canon
		}
		var num [32]byte
		n := strconv.AppendInt(append(num[:0], "[output ("...), int64(tokens), 10)
		sb := c.pointerRoom(len(n) + len(rc.runEnd))
		from := sb.Len()
		sb.Write(n)
		sb.WriteString(rc.runEnd)
		ptr = sb.String()[from:]
		pc.add(tokens, ptr)
		return ptr, len(n) + endLen, pc.canon
	}
	ptr, textLen = c.previewPointer(tokens, rc, content)
	return ptr, textLen, false
}

// pointerCache holds the pointers wholePointer made for the route's runEnd,
// by tokens: results of equal tokens have equal pointers, and half of a
// run's results repeat an earlier one's tokens.
type pointerCache struct {
	end      string   // the runEnd the pointers end with
	canon    bool     // end holds no FillerByte: neither do the pointers
	byTokens []string // "" where none was made
}

// maxPointerTokens bounds the tokens pointerCache holds pointers for (of
// results up to 8 KB), and so its table.
const maxPointerTokens = 1 << 11

// add records ptr as the pointer of a result of tokens.
func (pc *pointerCache) add(tokens int, ptr string) {
	if tokens < 0 || tokens >= maxPointerTokens {
		return
	}
	if tokens >= len(pc.byTokens) {
		// Doubled at once to a power of two past tokens: results' sizes
		// spread over their whole range from the start.
		n := 256
		for n <= tokens {
			n *= 2
		}
		pc.byTokens = append(pc.byTokens, make([]string, n-len(pc.byTokens))...)
	}
	pc.byTokens[tokens] = ptr
}

// reset empties the cache if its pointers do not end with end, and returns
// end, or the equal string the cache holds (so that the cache stays valid
// for the route's runEnd).
func (pc *pointerCache) reset(end string) string {
	if pc.end == end {
		return pc.end
	}
	pc.end = end
	pc.canon = strings.IndexByte(end, FillerByte) < 0
	clear(pc.byTokens)
	return end
}

// previewPointer is wholePointer in full: for a result that does not start
// with a long run, or the route's first.
func (c *Context) previewPointer(tokens int, rc *route, content string) (ptr string, textLen int) {
	if rc.mid == "" {
		rc.mid = pointerMid(rc.target)
	}
	if k, size := parseRun(content); size > 0 && k > 160 {
		rc.runEnd = c.ptrs.reset(rc.mid + string(AppendFiller(nil, 160)) + "…]")
		ptr, textLen, _ = c.wholePointer(tokens, rc, content)
		return ptr, textLen
	}
	var num [32]byte
	n := strconv.AppendInt(append(num[:0], "[output ("...), int64(tokens), 10)
	head, tail, cut := previewParts(content)
	var run [16]byte
	end := AppendFiller(run[:0], tail)
	if cut {
		end = append(end, "…"...)
	}
	end = append(end, ']')
	// Its length written out, for its entry's tokens: end's filler is tail
	// bytes of it.
	textLen = len(n) + len(rc.mid) + TextLen(head) + tail + len("]")
	if cut {
		textLen += len("…")
	}
	sb := c.pointerRoom(len(n) + len(rc.mid) + len(head) + len(end))
	from := sb.Len()
	sb.Write(n)
	sb.WriteString(rc.mid)
	sb.WriteString(head)
	sb.Write(end)
	return sb.String()[from:], textLen
}

// pointerRoom is the slab pointers are cut from, with room for size bytes.
func (c *Context) pointerRoom(size int) *strings.Builder {
	sb := &c.pointers
	if sb.Cap()-sb.Len() < size {
		*sb = strings.Builder{}
		sb.Grow(max(size, pointerSlabBytes))
	}
	return sb
}

// pointerMid is the part of a whole result's pointer that names its region.
func pointerMid(region string) string {
	return " tokens) is in your context under the '" + region + "' heading - it is already in this prompt, so no tool call is needed to see it. Preview: "
}

// pointerSlabBytes is the size of the slabs pointers are cut from: a few
// dozen pointers, so that few slabs outlive the conversation that holds them.
const pointerSlabBytes = 8 << 10

// previewHead is previewOf(s) without its "…": s's head, and whether it was cut.
func previewHead(s string) (string, bool) {
	head, tail, cut := previewParts(s)
	return withFiller(head, tail), cut
}

// previewParts is previewHead as s's head and the bytes of filler that
// follow it if the cut falls in a run (written apart: no copy of s's head).
func previewParts(s string) (head string, tail int, cut bool) {
	if !HasFiller(s) {
		if len(s) <= 160 { // no more characters than bytes
			return s, 0, false
		}
		// Walk at most 160 characters, not the whole result.
		head, cut = cutChars(s, 160)
		return head, 0, cut
	}
	k, tail, cut := cutRunCharsAt(s, 160)
	return s[:k], tail, cut
}

func previewOf(s string) string {
	if t, cut := previewHead(s); cut {
		return t + "…"
	}
	return s
}

// truncateChars keeps the first n characters.
func truncateChars(s string, n int) string {
	t, _ := cutChars(s, n)
	return t
}

// cutChars is s's first n characters, and whether they are fewer than s's.
func cutChars(s string, n int) (string, bool) {
	if n >= 0 && len(s) >= n && isASCII(s[:n]) {
		return s[:n], len(s) > n // n characters, n bytes
	}
	if HasFiller(s) {
		return cutRunChars(s, n)
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos], true
		}
		i++
	}
	return s, false
}

// isASCII reports whether s is all ASCII, a word at a time.
func isASCII(s string) bool {
	for len(s) >= 8 {
		if le64(s)&0x8080808080808080 != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ladder is the region-full ladder (ENGINE.md §8.3): write, else truncate to
// what is left, else a [result omitted] placeholder.
func (c *Context) ladder(r *region, e *entry) (RouteOutcome, error) {
	if err := c.write(r, e); err != nil {
		return c.cutToFit(r, e, err)
	}
	return RoutedWhole, nil
}

// cutToFit is the ladder past a write that failed with err.
func (c *Context) cutToFit(r *region, e *entry, err error) (RouteOutcome, error) {
	orig := e.content
	avail := r.max - r.tokens
	if avail > 100 {
		keep := truncateChars(orig, (avail-10)*4)
		omitted := runeCount(orig) - runeCount(keep)
		e.content = keep + fmt.Sprintf("... [truncated, %d chars omitted]", omitted)
	} else {
		e.content = "[tool result truncated - context window full]"
	}
	e.tokens = c.counter.Count(e.content)
	e.msg, e.lines, e.scanned, e.summarised = nil, nil, false, false
	if c.write(r, e) == nil {
		c.emit(Event{Kind: EventDrop, Region: r.name, Tokens: c.counter.Count(orig) - e.tokens, Message: "result truncated to fit: " + err.Error()})
		return RoutedTruncated, nil
	}
	e.content, e.tokens = "[result omitted]", 5
	e.lines, e.scanned, e.summarised = nil, false, false
	c.emit(Event{Kind: EventDrop, Region: r.name, Tokens: c.counter.Count(orig), Entries: 1, Message: "result omitted: " + err.Error()})
	if c.write(r, e) != nil {
		c.emit(Event{Kind: EventDrop, Region: r.name, Tokens: 5, Entries: 1, Message: "even the placeholder did not fit"})
	}
	return RoutedDropped, nil
}

// trackFile stores a read or written file in the file-tracking hashmap and
// returns the text that replaces the inline result.
func (c *Context) trackFile(fr *region, tool string, call ToolCall, content string) (string, bool) {
	ft := c.bp.FileTracking
	var args struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if len(call.Args) == 0 || json.Unmarshal(call.Args, &args) != nil || args.Path == "" {
		return "", false
	}
	verb := ""
	switch {
	case tool == "read_file" && ft.TrackReads:
		verb = "stored"
	case tool == "write_file" && ft.TrackWrites:
		verb, content = "written", args.Content
	default:
		return "", false
	}
	if ft.MaxFileTokens > 0 && TextLen(content) > ft.MaxFileTokens*4 {
		content = truncateChars(content, ft.MaxFileTokens*4) + fmt.Sprintf("\n\n[... truncated at %d tokens ...]", ft.MaxFileTokens)
	}
	if err := c.upsert(fr, args.Path, content); err != nil {
		c.warn(fr.name, "file tracking: "+err.Error())
		return "", false
	}
	t := fr.entries[fr.indexOfKey(args.Path)].tokens
	return fmt.Sprintf("File %s in [%s] → ### [%s] (%d tokens). Reference it there; do not re-read this path.", verb, fr.name, args.Path, t), true
}

type toolArgs struct {
	Region  string  `json:"region"`
	Content *string `json:"content"`
	Key     *string `json:"key"`
	Index   *int    `json:"index"`
	Oldest  *int    `json:"oldest"`
	Item    *string `json:"item"`
	ID      *int    `json:"id"`
	Note    *string `json:"note"`
}

var contextTools = []string{"context_write", "context_append", "context_read", "context_delete", "context_list", "todo_add", "todo_done", "todo_note"}

// IsContextTool reports whether CallTool runs the named tool.
func IsContextTool(name string) bool { return contains(contextTools, name) }

// CallTool runs a context or todo tool against the window and returns the
// runtime's result text. Failures the model should read come back as
// "[error] …" text; the error is for calls the engine cannot run at all.
func (c *Context) CallTool(name string, args json.RawMessage) (string, error) {
	if !IsContextTool(name) {
		return "", fmt.Errorf("call tool: '%s' is not a context tool (%s)", name, strings.Join(contextTools, ", "))
	}
	var a toolArgs
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return fmt.Sprintf("[error] invalid arguments: %v", err), nil
		}
	}
	if name == "context_list" {
		return c.contextList(a.Region), nil
	}
	r := c.byName[a.Region]
	if r == nil {
		return fmt.Sprintf("[error] Section '%s' not found. Available sections: %s", a.Region, strings.Join(c.sectionNames(), ", ")), nil
	}
	content := ""
	if a.Content != nil {
		content = *a.Content
	}
	switch name {
	case "context_write", "context_append":
		if r.kind == KindHashMap {
			if a.Key == nil {
				return "[error] HashMap regions require a 'key' argument", nil
			}
			if name == "context_append" {
				if i := r.indexOfKey(*a.Key); i >= 0 {
					content = r.entries[i].content + "\n" + content
				}
			}
			if err := c.upsert(r, *a.Key, content); err != nil {
				return "[error] " + err.Error(), nil
			}
			return fmt.Sprintf("Stored in '%s' section under key '%s'.", r.name, *a.Key), nil
		}
		if name == "context_write" && len(r.entries) > 0 {
			c.total -= r.clearAll()
		}
		e := c.newEntry(EntryText, content)
		if a.Key != nil {
			e.key, e.hasKey = *a.Key, true
		}
		if err := c.write(r, e); err != nil {
			return "[error] " + err.Error(), nil
		}
		if a.Key != nil {
			return fmt.Sprintf("Stored in '%s' section under key '%s'.", r.name, *a.Key), nil
		}
		return fmt.Sprintf("Stored in '%s' section.", r.name), nil
	case "context_read":
		if r.kind == KindHashMap {
			if a.Key != nil {
				if i := r.indexOfKey(*a.Key); i >= 0 {
					return ExpandFiller(r.entries[i].content), nil
				}
				return fmt.Sprintf("[not found] No entry with key '%s' in '%s'.", *a.Key, r.name), nil
			}
			var lines []string
			for _, e := range r.entries {
				lines = append(lines, fmt.Sprintf("  %s (%d tokens)", e.key, e.tokens))
			}
			if len(lines) == 0 {
				return fmt.Sprintf("Section '%s' is empty.", r.name), nil
			}
			return strings.Join(lines, "\n"), nil
		}
		if len(r.entries) == 0 {
			return fmt.Sprintf("Section '%s' is empty.", r.name), nil
		}
		return ExpandFiller(r.joined()), nil
	case "context_delete":
		switch {
		case a.Key != nil:
			i := r.indexOfKey(*a.Key)
			if i < 0 {
				return fmt.Sprintf("[error] no entry with key '%s' in '%s'", *a.Key, r.name), nil
			}
			gone := r.removeRange(i, 1)
			c.total -= gone[0].tokens
			return fmt.Sprintf("Released '%s' from '%s' (%d tokens).", *a.Key, r.name, gone[0].tokens), nil
		case a.Index != nil:
			if *a.Index < 0 || *a.Index >= len(r.entries) {
				return fmt.Sprintf("[error] no entry at index %d in '%s' (it holds %d)", *a.Index, r.name, len(r.entries)), nil
			}
			gone := r.removeRange(*a.Index, 1)
			c.total -= gone[0].tokens
			return fmt.Sprintf("Released entry %d from '%s' (%d tokens).", *a.Index, r.name, gone[0].tokens), nil
		case a.Oldest != nil:
			n := min(max(*a.Oldest, 0), len(r.entries))
			for i := 0; i < n && len(r.entries) > 0; i++ {
				for _, e := range r.removeOldest() {
					c.total -= e.tokens
				}
			}
			return fmt.Sprintf("Released the %d oldest entries from '%s'.", n, r.name), nil
		}
		return "[error] name what to release: 'key', 'index', or 'oldest'", nil
	}
	// todo_*
	if r.kind != KindChecklist {
		return fmt.Sprintf("[error] region '%s' is not a checklist; declare it as kind = \"checklist\" to track items in it", r.name), nil
	}
	switch name {
	case "todo_add":
		if a.Item == nil {
			return "[error] missing 'item' argument", nil
		}
		id, err := c.todoAdd(r, *a.Item)
		if err != nil {
			return "[error] " + err.Error(), nil
		}
		return fmt.Sprintf("[ok] added item %d", id), nil
	case "todo_done", "todo_note":
		if a.ID == nil {
			return "[error] missing 'id' argument", nil
		}
		it := r.item(*a.ID)
		if name == "todo_note" && a.Note == nil {
			return "[error] missing 'note' argument", nil
		}
		if it == nil {
			return fmt.Sprintf("[error] no item %d in '%s'", *a.ID, r.name), nil
		}
		if name == "todo_done" {
			it.done = true
		} else {
			it.note = *a.Note
		}
		r.touch(0)
		return fmt.Sprintf("[ok] item %d updated", *a.ID), nil
	}
	return "", fmt.Errorf("call tool: '%s' not handled", name)
}

// sectionNames lists the regions a model may name, in window order.
func (c *Context) sectionNames() []string {
	var out []string
	for _, r := range c.regions {
		if r.kind != KindCompactHistory && r.name != "conversation" {
			out = append(out, r.name)
		}
	}
	return out
}

var kindLabels = map[Kind]string{
	KindPinned: "permanent", KindSlidingWindow: "conversation", KindTemporary: "temporary", KindClearable: "temporary",
	KindCompacting: "summarized when full", KindCompactHistory: "summary archive", KindChecklist: "checklist",
	KindHashMap: "key-value store", KindCustom: "scripted",
}

func (c *Context) contextList(name string) string {
	if name == "" {
		var lines []string
		for _, r := range c.regions {
			if r.hidden {
				continue
			}
			lines = append(lines, fmt.Sprintf("  %s [%s] %d/%d tokens, %d entries", r.name, kindLabels[r.kind], r.tokens, r.max, len(r.entries)))
		}
		return strings.Join(lines, "\n")
	}
	r := c.byName[name]
	if r == nil {
		return fmt.Sprintf("[error] Section '%s' not found. Available sections: %s", name, strings.Join(c.sectionNames(), ", "))
	}
	if len(r.entries) == 0 {
		return fmt.Sprintf("Section '%s' is empty.", name)
	}
	lines := make([]string, len(r.entries))
	for i, e := range r.entries {
		key := ""
		if e.hasKey {
			key = e.key + " "
		}
		lines[i] = fmt.Sprintf("  [%d] %s(%d tokens)", i, key, e.tokens)
	}
	return strings.Join(lines, "\n")
}

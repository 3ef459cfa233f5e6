package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ParseError is an error in a trace file, with its position.
type ParseError struct {
	File string // file name, or "" for an unnamed stream
	Line int    // 1-based line number
	Err  error
}

func (e *ParseError) Error() string {
	name := e.File
	if name == "" {
		name = "trace"
	}
	return fmt.Sprintf("%s:%d: %v", name, e.Line, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// maxLine bounds one event line; recorded tool outputs can be megabytes.
const maxLine = 256 << 20

// Reader reads a canonical trace one event at a time, in the manner of
// bufio.Scanner:
//
//	r := trace.NewReader(f, "run.jsonl")
//	for r.Scan() {
//		ev := r.Event()
//		...
//	}
//	if err := r.Err(); err != nil { ... }
//
// The header is read by the first call to Scan (or Header).
type Reader struct {
	name  string
	sc    *bufio.Scanner
	line  int
	hdr   Header
	hdrOK bool
	ev    Event
	err   error
	ids   map[string]int
	lastT float64
}

// NewReader returns a Reader of r; name is used in errors.
func NewReader(r io.Reader, name string) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &Reader{name: name, sc: sc, ids: make(map[string]int)}
}

func (r *Reader) fail(line int, format string, args ...any) bool {
	r.err = &ParseError{File: r.name, Line: line, Err: fmt.Errorf(format, args...)}
	return false
}

func (r *Reader) next() ([]byte, bool) {
	for r.sc.Scan() {
		r.line++
		b := bytes.TrimSpace(r.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		return b, true
	}
	if err := r.sc.Err(); err != nil {
		r.err = &ParseError{File: r.name, Line: r.line + 1, Err: err}
	}
	return nil, false
}

func (r *Reader) readHeader() bool {
	if r.hdrOK {
		return true
	}
	if r.err != nil {
		return false
	}
	b, ok := r.next()
	if !ok {
		if r.err == nil {
			r.err = &ParseError{File: r.name, Line: 1, Err: errors.New("empty trace: want a header line")}
		}
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r.hdr); err != nil {
		return r.fail(r.line, "header: %v", err)
	}
	if r.hdr.Schema != Schema {
		return r.fail(r.line, "header: schema %q, want %q", r.hdr.Schema, Schema)
	}
	if r.hdr.Version < 1 || r.hdr.Version > Version {
		return r.fail(r.line, "header: version %d not supported (this build reads 1..%d)", r.hdr.Version, Version)
	}
	r.hdrOK = true
	return true
}

// Header returns the trace header, reading it if needed.
func (r *Reader) Header() (Header, error) {
	if !r.readHeader() {
		return Header{}, r.err
	}
	return r.hdr, nil
}

// Scan advances to the next event. It returns false at the end of the trace
// or on the first error, which Err reports.
func (r *Reader) Scan() bool {
	if !r.readHeader() {
		return false
	}
	b, ok := r.next()
	if !ok {
		return false
	}
	r.ev = Event{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r.ev); err != nil {
		return r.fail(r.line, "event: %v", err)
	}
	if err := r.ev.Validate(); err != nil {
		return r.fail(r.line, "event %q: %v", r.ev.ID, err)
	}
	if prev, dup := r.ids[r.ev.ID]; dup {
		return r.fail(r.line, "event id %q already used on line %d", r.ev.ID, prev)
	}
	r.ids[r.ev.ID] = r.line
	if r.ev.T < r.lastT {
		return r.fail(r.line, "event %q: time %g before previous event's %g", r.ev.ID, r.ev.T, r.lastT)
	}
	r.lastT = r.ev.T
	return true
}

// Event returns the event read by the last successful Scan. The returned
// value is valid until the next call of Scan.
func (r *Reader) Event() *Event { return &r.ev }

// Line returns the line number of the current event.
func (r *Reader) Line() int { return r.line }

// Err returns the first error met, or nil at a clean end of input.
func (r *Reader) Err() error { return r.err }

// MaxSize bounds an elided event's Size. Elided content costs a run nothing
// per byte, but whatever writes it out (a summariser call, an inspected
// request) would need that much memory; no tool result comes near 1 GiB.
const MaxSize = 1 << 30

// Validate checks the fields an event of its kind must carry.
func (e *Event) Validate() error {
	if e.ID == "" {
		return errors.New("missing id")
	}
	if e.T < 0 {
		return fmt.Errorf("negative time %g", e.T)
	}
	if e.Size < 0 {
		return fmt.Errorf("negative size %d", e.Size)
	}
	if e.Size > MaxSize {
		return fmt.Errorf("size %d: over the %d-byte limit for one event's content", e.Size, MaxSize)
	}
	if e.Text != "" && e.Size != 0 {
		return errors.New("both text and size set: size is only for elided content")
	}
	switch e.Kind {
	case KindTask, KindSystem, KindUser, KindAssistant:
	case KindToolResult:
		if e.CallID == "" {
			return errors.New("tool_result without call_id")
		}
		if e.Tool == "" {
			return errors.New("tool_result without tool")
		}
	case KindContextOp:
		if e.Op == nil || e.Op.Tool == "" {
			return errors.New("context_op without op.tool")
		}
	case KindStage:
		if e.Stage == nil || e.Stage.To == "" {
			return errors.New("stage without stage.to")
		}
	case KindCompaction:
		if e.Compaction == nil {
			return errors.New("compaction without compaction")
		}
	case KindProbe:
		if e.Probe == nil || e.Probe.Text == "" {
			return errors.New("probe without probe.text")
		}
	case KindUsage:
		if e.Usage == nil {
			return errors.New("usage without usage")
		}
		u := e.Usage
		if u.Prompt < 0 || u.Uncached < 0 || u.CacheRead < 0 || u.CacheWrite < 0 || u.Output < 0 {
			return errors.New("usage with a negative count")
		}
		if u.Prompt != u.Uncached+u.CacheRead+u.CacheWrite {
			return fmt.Errorf("usage prompt %d != uncached %d + cache_read %d + cache_write %d", u.Prompt, u.Uncached, u.CacheRead, u.CacheWrite)
		}
	case "":
		return errors.New("missing kind")
	default:
		return fmt.Errorf("unknown kind %q (want task, system, user, assistant, tool_result, context_op, stage, compaction, probe or usage)", e.Kind)
	}
	for i, f := range e.Facts {
		if f.ID == "" || f.Text == "" {
			return fmt.Errorf("facts[%d]: want id and text", i)
		}
	}
	return nil
}

// Bytes returns the content length in bytes: len(Text), or Size when elided.
func (e *Event) Bytes() int {
	if e.Text != "" {
		return len(e.Text)
	}
	return e.Size
}

// Writer writes a canonical trace.
type Writer struct {
	w   *bufio.Writer
	enc *json.Encoder
	err error
}

// NewWriter writes the header h (Schema and Version filled in) and returns a
// Writer for the events.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h.Schema, h.Version = Schema, Version
	if err := enc.Encode(&h); err != nil {
		return nil, err
	}
	return &Writer{w: bw, enc: enc}, nil
}

// Write writes one event. It validates the event first.
func (w *Writer) Write(e *Event) error {
	if w.err != nil {
		return w.err
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("event %q: %w", e.ID, err)
	}
	w.err = w.enc.Encode(e)
	return w.err
}

// Flush writes any buffered data.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

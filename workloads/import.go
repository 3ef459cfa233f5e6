package workloads

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads/importers"
)

// ImportOptions control how a recorded session becomes a canonical trace.
type ImportOptions = importers.Options

// Import converts the recorded session at path (any format of
// spec/TRACES.md, detected unless opts.Format says) to a canonical trace on w.
// An OpenHands events.json picks up the state.json beside it for usage.
func Import(path string, opts ImportOptions, w io.Writer) (importers.Stats, error) {
	hdr, events, st, err := importEvents(path, opts)
	if err != nil {
		return st, err
	}
	tw, err := trace.NewWriter(w, hdr)
	if err != nil {
		return st, err
	}
	for i := range events {
		if err := tw.Write(&events[i]); err != nil {
			return st, fmt.Errorf("%s: %w", path, err)
		}
	}
	return st, tw.Flush()
}

// importEvents runs the importer and keeps the events: the header (model,
// start time, warnings) is only complete at the end of the input.
func importEvents(path string, opts ImportOptions) (trace.Header, []trace.Event, importers.Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return trace.Header{}, nil, importers.Stats{}, err
	}
	defer f.Close()
	if opts.State == nil && filepath.Base(path) == "events.json" {
		if st, err := os.ReadFile(filepath.Join(filepath.Dir(path), "state.json")); err == nil {
			opts.State = st
		}
	}
	var events []trace.Event
	hdr, st, err := importers.Import(f, path, opts, func(e *trace.Event) error {
		events = append(events, *e)
		return nil
	})
	return hdr, events, st, err
}

// TraceSource is a canonical trace read one event at a time, in the manner
// of trace.Reader (which satisfies it).
type TraceSource interface {
	Header() (trace.Header, error)
	Scan() bool
	Event() *trace.Event
	Err() error
}

// OpenTrace opens a canonical trace, or any recorded session format (detected
// from the file), as a TraceSource. Call Close when done.
func OpenTrace(path string, opts ImportOptions) (interface {
	TraceSource
	io.Closer
}, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	head, err := br.Peek(importers.HeadSize)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	format := opts.Format
	if format == importers.FormatUnknown {
		if format, err = importers.Detect(path, head); err != nil {
			f.Close()
			return nil, err
		}
	}
	if format == importers.FormatCanonical {
		return &fileReader{Reader: trace.NewReader(br, path), f: f}, nil
	}
	f.Close()
	opts.Format = format
	hdr, events, _, err := importEvents(path, opts)
	if err != nil {
		return nil, err
	}
	return &sliceSource{hdr: hdr, events: events, i: -1}, nil
}

type fileReader struct {
	*trace.Reader
	f *os.File
}

func (r *fileReader) Close() error { return r.f.Close() }

// sliceSource serves imported events from memory.
type sliceSource struct {
	hdr    trace.Header
	events []trace.Event
	i      int
}

func (s *sliceSource) Header() (trace.Header, error) { return s.hdr, nil }
func (s *sliceSource) Scan() bool {
	if s.i+1 >= len(s.events) {
		s.i = len(s.events)
		return false
	}
	s.i++
	return true
}
func (s *sliceSource) Event() *trace.Event { return &s.events[s.i] }
func (s *sliceSource) Err() error          { return nil }
func (s *sliceSource) Close() error        { return nil }

// TraceStats reads a trace (canonical or recorded) and counts its events.
func TraceStats(path string, opts ImportOptions) (importers.Counts, error) {
	src, err := OpenTrace(path, opts)
	if err != nil {
		return importers.Counts{}, err
	}
	defer src.Close()
	h, err := src.Header()
	if err != nil {
		return importers.Counts{}, err
	}
	var c importers.Counts
	for src.Scan() {
		c.Add(src.Event())
	}
	if err := src.Err(); err != nil {
		return importers.Counts{}, err
	}
	c.Finish(h)
	return c, nil
}

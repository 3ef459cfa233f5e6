package probes

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// Deriver remembers where each identifier first arrived and turns later
// assistant uses into probes. It is not safe for concurrent use.
type Deriver struct {
	seen   map[string]*origin
	errs   []*origin // error texts, oldest first, at most maxErrTexts
	nextID int
	buf    []string // scratch
	turn   map[*origin]bool
}

type origin struct {
	text    string
	class   Class
	factID  string // "" for the assistant's own identifiers
	source  string // event id
	refetch *trace.ToolCall
}

// NewDeriver returns an empty Deriver.
func NewDeriver() *Deriver {
	return &Deriver{seen: make(map[string]*origin), turn: make(map[*origin]bool)}
}

// Arrive records the identifiers of content that reached the agent from
// outside: a tool result (refetch is the call that produced it) or a user
// message (refetch nil). Error texts are taken from tool results only.
func (d *Deriver) Arrive(text, eventID string, refetch *trace.ToolCall) {
	Words(text, func(w string, c Class) {
		if _, ok := d.seen[w]; ok {
			return
		}
		d.nextID++
		w = strings.Clone(w)
		d.seen[w] = &origin{text: w, class: c, factID: "ref-" + strconv.Itoa(d.nextID), source: eventID, refetch: refetch}
	})
	if refetch == nil {
		return
	}
	ErrorTexts(text, func(t string) {
		if _, ok := d.seen[t]; ok {
			return
		}
		d.nextID++
		t = strings.Clone(t)
		o := &origin{text: t, class: ClassError, factID: "ref-" + strconv.Itoa(d.nextID), source: eventID, refetch: refetch}
		d.seen[t] = o
		if len(d.errs) == maxErrTexts {
			d.errs = append(d.errs[:0], d.errs[1:]...)
		}
		d.errs = append(d.errs, o)
	})
}

// Turn returns the probes of one assistant turn (its text and the arguments
// of its tool calls), in order of first use, and then records the turn's new
// identifiers as the assistant's own.
func (d *Deriver) Turn(text string, calls []trace.ToolCall) []trace.Probe {
	var out []trace.Probe
	clear(d.turn)
	use := func(w string, c Class) {
		o, ok := d.seen[w]
		if !ok {
			d.seen[strings.Clone(w)] = &origin{text: w, class: c} // the assistant's own
			return
		}
		if o.factID == "" || d.turn[o] {
			return
		}
		d.turn[o] = true
		out = append(out, trace.Probe{Fact: o.factID, Text: o.text, Source: o.source, Derived: true, Refetch: o.refetch})
	}
	texts := append(d.buf[:0], text)
	for _, c := range calls {
		texts = appendStrings(texts, c.Args)
	}
	d.buf = texts[:0]
	for _, t := range texts {
		Words(t, use)
		for _, o := range d.errs {
			if !d.turn[o] && strings.Contains(t, o.text) {
				d.turn[o] = true
				out = append(out, trace.Probe{Fact: o.factID, Text: o.text, Source: o.source, Derived: true, Refetch: o.refetch})
			}
		}
	}
	return out
}

// appendStrings appends the string values inside a JSON document (tool-call
// arguments), so that escapes such as \n do not glue words together.
func appendStrings(dst []string, raw json.RawMessage) []string {
	if len(raw) == 0 {
		return dst
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return append(dst, string(raw))
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			dst = append(dst, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return dst
}

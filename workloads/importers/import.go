package importers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads/importers/probes"
	"github.com/ctxsim/ctxsim/workloads/importers/redact"
)

// Header Meta keys of the system prompt estimate (formats that do not record
// the system prompt: Claude Code, Aider).
const (
	// MetaSystemEstimatedTokens is the estimated size of the unrecorded
	// system prompt and tool schemas in tokens; the trace's first event is
	// a system event of elided content, 4 bytes per token.
	MetaSystemEstimatedTokens = "system_estimated_tokens"
	// MetaSystemEstimateBasis says how the estimate was made.
	MetaSystemEstimateBasis = "system_estimate_basis"
)

// Options control an import.
type Options struct {
	// Format forces a format; FormatUnknown detects it.
	Format Format
	// Strict stops at the first bad line; the default skips it with a warning.
	Strict bool
	// Sidechains keeps subagent events (marked Sidechain) instead of dropping them.
	Sidechains bool
	// NoRedact keeps secrets as recorded.
	NoRedact bool
	// NoProbes skips deriving reference-recall probes.
	NoProbes bool
	// ToolMap extends (and overrides) the default tool-name table.
	ToolMap map[string]string
	// MainModel names the main agent's model in a claude-trace log; empty
	// means the model of the first request that carries tool schemas.
	MainModel string
	// State is the content of an OpenHands state.json, for usage.
	State []byte
	// Warn receives each lenient-mode warning (a *trace.ParseError naming the
	// file and line); nil drops them (Stats still counts them).
	Warn func(error)
}

// Stats describes one import.
type Stats struct {
	Counts
	// Skipped is how many bad lines or records lenient mode skipped.
	Skipped int `json:"skipped,omitempty"`
	// SideCalls counts requests to other models that were filtered out
	// (claude-trace quota probes and title calls).
	SideCalls int `json:"side_calls,omitempty"`
	// Unmapped lists raw tool names the tool map did not know, sorted.
	Unmapped []string `json:"unmapped_tools,omitempty"`
}

// Import reads a recorded session from r and calls emit with each canonical
// event in order, then returns the trace header (which may depend on the whole
// input) and statistics. name is used in errors and warnings. JSON Lines
// formats stream line by line; the others decode one document.
func Import(r io.Reader, name string, opt Options, emit func(*trace.Event) error) (trace.Header, Stats, error) {
	br := bufio.NewReaderSize(r, HeadSize)
	f := opt.Format
	if f == FormatUnknown {
		head, err := br.Peek(HeadSize)
		if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
			return trace.Header{}, Stats{}, fmt.Errorf("%s: %w", name, err)
		}
		if f, err = Detect(name, head); err != nil {
			return trace.Header{}, Stats{}, err
		}
	}
	b, err := newBuilder(name, f, &opt, emit)
	if err != nil {
		return trace.Header{}, Stats{}, err
	}
	var run func(*builder, *bufio.Reader) error
	switch f {
	case FormatCanonical:
		run = importCanonical
	case FormatClaudeCode:
		run = importClaudeCode
	case FormatCodex, FormatCodexLegacy:
		run = importCodex
	case FormatOpenHands:
		run = importOpenHands
	case FormatSWEAgent:
		run = importSWEAgent
	case FormatClaudeTrace:
		run = importClaudeTrace
	case FormatAider:
		run = importAider
	case FormatOpenAIChat:
		run = importOpenAIChat
	case FormatAnthropicMessages:
		run = importAnthropicMessages
	default:
		return trace.Header{}, Stats{}, fmt.Errorf("%s: format %v cannot be imported", name, f)
	}
	if err := run(b, br); err != nil {
		return trace.Header{}, Stats{}, err
	}
	return b.finish()
}

// builder turns the records an importer reads into canonical events: ids,
// times, redaction, tool names, derived probes, counts.
type builder struct {
	name   string
	format Format
	opt    *Options
	emit   func(*trace.Event) error
	tools  *ToolMap
	der    *probes.Deriver
	hdr    trace.Header
	hdrSet bool // canonical pass-through: header taken as is

	n        int
	lastID   string
	t0       time.Time
	haveT0   bool
	lastT    float64
	taskDone bool
	calls    map[string]*trace.ToolCall
	ids      map[string]string // a source record id -> event id
	unmapped map[string]bool
	skipped  int
	side     int
	counts   Counts

	// Formats that do not record the system prompt (Claude Code, Aider)
	// hold their first events until the first main-agent usage, then emit
	// an elided system event sized from it ahead of them (estimateSystem).
	holding bool
	held    []*trace.Event
	visible int // tokens (4 bytes each) of main-chain content held
}

// maxHeld bounds the events held while waiting for the first usage record:
// a file whose main agent reports none that early gets no estimate, rather
// than being held whole.
const maxHeld = 1 << 12

// bytesPerToken converts between the estimated system prompt's tokens and
// the bytes of its elided event: the density of English text under BPE
// tokenizers, and what the simulator's tokenizers charge for elided content.
const bytesPerToken = 4

func newBuilder(name string, f Format, opt *Options, emit func(*trace.Event) error) (*builder, error) {
	tm, err := NewToolMap(opt.ToolMap)
	if err != nil {
		return nil, err
	}
	b := &builder{
		name: name, format: f, opt: opt, emit: emit, tools: tm,
		calls: make(map[string]*trace.ToolCall), ids: make(map[string]string), unmapped: make(map[string]bool),
	}
	if !opt.NoProbes {
		b.der = probes.NewDeriver()
	}
	stem := filepath.Base(name)
	stem = strings.TrimSuffix(stem, filepath.Ext(stem))
	b.hdr = trace.Header{Source: f.String(), Workload: stem, Meta: map[string]string{"file": filepath.Base(name)}}
	b.counts.Format = f.String()
	return b, nil
}

// warn handles a bad record: an error in strict mode, a warning otherwise.
func (b *builder) warn(line int, format string, args ...any) error {
	err := &trace.ParseError{File: b.name, Line: line, Err: fmt.Errorf(format, args...)}
	if b.opt.Strict {
		return err
	}
	b.skipped++
	if b.opt.Warn != nil {
		b.opt.Warn(err)
	}
	return nil
}

// note reports something worth knowing that is not an error in the input
// (a request the provider refused): a warning in both modes.
func (b *builder) note(line int, format string, args ...any) {
	b.skipped++
	if b.opt.Warn != nil {
		b.opt.Warn(&trace.ParseError{File: b.name, Line: line, Err: fmt.Errorf(format, args...)})
	}
}

func (b *builder) finish() (trace.Header, Stats, error) {
	if err := b.release(); err != nil {
		return trace.Header{}, Stats{}, err
	}
	h := b.hdr
	if !b.hdrSet {
		if b.haveT0 {
			h.Start = b.t0.UTC().Format(time.RFC3339Nano)
		}
		if h.Window == 0 {
			h.Window = windowOf(h.Model)
		}
		if b.skipped > 0 {
			h.Meta["skipped"] = strconv.Itoa(b.skipped)
		}
		if b.side > 0 {
			h.Meta["side_calls"] = strconv.Itoa(b.side)
		}
		if len(b.unmapped) > 0 {
			h.Meta["unmapped_tools"] = strings.Join(slices.Sorted(maps.Keys(b.unmapped)), ",")
		}
		if !b.opt.NoRedact {
			h.Meta["redacted"] = "true"
		}
	}
	b.counts.Finish(h)
	st := Stats{Counts: b.counts, Skipped: b.skipped, SideCalls: b.side, Unmapped: slices.Sorted(maps.Keys(b.unmapped))}
	return h, st, nil
}

// setModel records the main model (the first one seen).
func (b *builder) setModel(m string) {
	if b.hdr.Model == "" && m != "" && m != "<synthetic>" {
		b.hdr.Model = m
	}
}

// clock converts an absolute time to seconds since the first one seen.
func (b *builder) clock(ts time.Time) float64 {
	if ts.IsZero() {
		return b.lastT
	}
	if !b.haveT0 {
		b.t0, b.haveT0 = ts, true
	}
	return ts.Sub(b.t0).Seconds()
}

// parseTime reads an ISO-8601 time with or without a zone (no zone = UTC).
func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

func unixTime(sec float64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	// Logs carry microseconds; rounding there drops float noise.
	return time.UnixMicro(int64(math.Round(sec * 1e6))).UTC()
}

func (b *builder) text(s string) string {
	if b.opt.NoRedact {
		return s
	}
	return redact.String(s)
}

func (b *builder) out(e *trace.Event) error {
	if e.ID == "" {
		b.n++
		e.ID = "e" + strconv.Itoa(b.n)
	}
	// Microseconds are the finest any recorded clock has; rounding keeps
	// float noise out of the output.
	e.T = math.Round(e.T*1e6) / 1e6
	e.Latency = math.Round(e.Latency*1e6) / 1e6
	if e.T < b.lastT {
		e.T = b.lastT // recorded clocks jitter (claude-trace logs overlap); keep order
	}
	b.lastT = e.T
	b.lastID = e.ID
	if b.holding {
		return b.hold(e)
	}
	b.counts.Add(e)
	return b.emit(e)
}

// estimateSystem makes the import emit an elided system event for the
// system prompt and tool schemas the format does not record (see hold).
func (b *builder) estimateSystem() { b.holding = true }

// hold keeps e back until the first main-agent usage record. That record's
// prompt tokens, less the tokens of the content held (what the request
// visibly carried), are the system prompt and tool schemas: they are
// emitted first as a system event of elided content, at 4 bytes per token.
func (b *builder) hold(e *trace.Event) error {
	if e.Kind == trace.KindUsage && !e.Sidechain && e.Usage != nil && !e.Usage.Side {
		if est := e.Usage.Prompt - b.visible; est > 0 {
			t := e.T
			if len(b.held) > 0 {
				t = b.held[0].T
			}
			b.hdr.Meta[MetaSystemEstimatedTokens] = strconv.Itoa(est)
			b.hdr.Meta[MetaSystemEstimateBasis] = fmt.Sprintf("first request: %d prompt tokens recorded - %d tokens of its recorded content (at %d bytes per token)", e.Usage.Prompt, b.visible, bytesPerToken)
			sys := &trace.Event{Kind: trace.KindSystem, ID: "e0", T: t, Size: est * bytesPerToken}
			b.counts.Add(sys)
			if err := b.emit(sys); err != nil {
				return err
			}
		}
		b.held = append(b.held, e)
		return b.release()
	}
	if !e.Sidechain {
		b.visible += contentTokens(e)
	}
	b.held = append(b.held, e)
	if len(b.held) > maxHeld {
		return b.release()
	}
	return nil
}

// release stops holding and emits what was held.
func (b *builder) release() error {
	b.holding = false
	held := b.held
	b.held = nil
	for _, e := range held {
		b.counts.Add(e)
		if err := b.emit(e); err != nil {
			return err
		}
	}
	return nil
}

// contentTokens is what an event adds to the context, at 4 bytes per token:
// its text (an assistant turn's calls rendered as the simulator renders
// them), or a compaction's summary.
func contentTokens(e *trace.Event) int {
	n := 0
	switch e.Kind {
	case trace.KindTask, trace.KindUser, trace.KindSystem, trace.KindToolResult:
		n = len(e.Text) + e.Size
	case trace.KindAssistant:
		n = len(e.Text) + e.Size
		for _, c := range e.ToolCalls {
			n += 1 + len(`<tool_use id="" name=""></tool_use>`) + len(c.ID) + len(c.Name) + len(c.Args) // "\n" + rendering
		}
	case trace.KindCompaction:
		if e.Compaction != nil {
			n = len(e.Compaction.Summary)
		}
	}
	return (n + bytesPerToken - 1) / bytesPerToken
}

// user emits a human turn; the first one that is not an injected notice is
// the task.
func (b *builder) user(text string, t float64, notice bool) error {
	text = b.text(text)
	e := &trace.Event{Kind: trace.KindUser, T: t, Text: text}
	if !b.taskDone && !notice && strings.TrimSpace(text) != "" {
		e.Kind = trace.KindTask
		b.taskDone = true
	}
	if err := b.out(e); err != nil {
		return err
	}
	if b.der != nil {
		b.der.Arrive(text, e.ID, nil)
	}
	return nil
}

func (b *builder) system(text string, t float64) error {
	return b.out(&trace.Event{Kind: trace.KindSystem, T: t, Text: b.text(text)})
}

// turn is one assistant response as an importer assembled it.
type turn struct {
	T         float64
	Text      string
	Calls     []trace.ToolCall // Name holds the agent's raw name until emitted
	Usage     *trace.Usage
	Output    int
	Sidechain bool
	SourceIDs []string // the record ids, for OpenHands forgot lists
}

func (b *builder) canonical(raw string, args []byte) string {
	name, ok := b.tools.Canonical(raw, args)
	if !ok && raw != "" {
		b.unmapped[raw] = true
	}
	return name
}

// assistant emits the probes of a turn, its usage, then the turn.
func (b *builder) assistant(tn *turn) error {
	text := b.text(tn.Text)
	calls := tn.Calls
	for i := range calls {
		c := &calls[i]
		if c.RawName == "" {
			c.RawName = c.Name
		}
		c.Name = b.canonical(c.RawName, c.Args)
		if c.Name == "" {
			c.Name = "unknown" // a call the log does not name
		}
		if !b.opt.NoRedact && len(c.Args) > 0 {
			c.Args = []byte(redact.String(string(c.Args)))
		}
	}
	if b.der != nil && !tn.Sidechain {
		for _, p := range b.der.Turn(text, calls) {
			if err := b.out(&trace.Event{Kind: trace.KindProbe, T: tn.T, Probe: &p, Sidechain: tn.Sidechain}); err != nil {
				return err
			}
		}
	}
	if tn.Usage != nil {
		u := *tn.Usage
		if err := b.out(&trace.Event{Kind: trace.KindUsage, T: tn.T, Usage: &u, Sidechain: tn.Sidechain}); err != nil {
			return err
		}
	}
	out := tn.Output
	if out == 0 && tn.Usage != nil {
		out = tn.Usage.Output
	}
	e := &trace.Event{Kind: trace.KindAssistant, T: tn.T, Text: text, ToolCalls: calls, OutputTokens: out, Sidechain: tn.Sidechain}
	if err := b.out(e); err != nil {
		return err
	}
	for _, s := range tn.SourceIDs {
		b.ids[s] = e.ID
	}
	for i := range calls {
		c := calls[i]
		b.calls[c.ID] = &c
	}
	return nil
}

// toolResult emits the output of a call. raw names the tool when the call
// was not seen (a result whose call fell outside the file).
func (b *builder) toolResult(callID, raw, text string, isErr bool, t, latency float64, sidechain bool) (string, error) {
	text = b.text(text)
	e := &trace.Event{Kind: trace.KindToolResult, T: t, CallID: callID, Text: text, IsError: isErr, Latency: latency, Sidechain: sidechain}
	c := b.calls[callID]
	switch {
	case c != nil && c.Name != "":
		e.Tool, e.RawTool = c.Name, c.RawName
	case raw != "":
		e.Tool, e.RawTool = b.canonical(raw, nil), raw
	default:
		e.Tool, e.RawTool = "unknown", ""
	}
	if callID == "" {
		e.CallID = "unknown"
	}
	if err := b.out(e); err != nil {
		return "", err
	}
	if b.der != nil && !sidechain {
		b.der.Arrive(text, e.ID, c)
	}
	return e.ID, nil
}

func (b *builder) compaction(c trace.Compaction, t float64) error {
	c.Summary = b.text(c.Summary)
	if err := b.out(&trace.Event{Kind: trace.KindCompaction, T: t, Compaction: &c}); err != nil {
		return err
	}
	if b.der != nil && c.Summary != "" {
		b.der.Arrive(c.Summary, b.lastID, nil)
	}
	return nil
}

// usageTotals fills Prompt from the disjoint parts.
func anthropicUsage(model string, input, cacheWrite, cacheRead, output int) *trace.Usage {
	input, cacheWrite, cacheRead, output = max(input, 0), max(cacheWrite, 0), max(cacheRead, 0), max(output, 0)
	return &trace.Usage{Model: model, Prompt: input + cacheWrite + cacheRead, Uncached: input, CacheRead: cacheRead, CacheWrite: cacheWrite, Output: output}
}

// openAIUsage converts the inclusive convention (cached tokens counted inside
// the prompt figure) to the disjoint one.
func openAIUsage(model string, prompt, cached, cacheWrite, output int) *trace.Usage {
	prompt, cached, cacheWrite, output = max(prompt, 0), max(cached, 0), max(cacheWrite, 0), max(output, 0)
	if cached+cacheWrite > prompt {
		prompt = cached + cacheWrite
	}
	return &trace.Usage{Model: model, Prompt: prompt, Uncached: prompt - cached - cacheWrite, CacheRead: cached, CacheWrite: cacheWrite, Output: output}
}

// windowOf gives the context window of well-known models, 0 when unknown.
func windowOf(model string) int {
	m := strings.ToLower(model)
	switch {
	case m == "":
		return 0
	case strings.Contains(m, "claude"):
		return 200_000
	case strings.HasPrefix(m, "gpt-4.1"):
		return 1_047_576
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4-turbo"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return 128_000
	case strings.HasPrefix(m, "gpt-4-32k"):
		return 32_768
	case strings.HasPrefix(m, "gpt-4"):
		return 8_192
	case strings.HasPrefix(m, "gpt-5"):
		return 272_000
	}
	return 0
}

// lines iterates over the lines of a JSON Lines stream with their numbers,
// skipping blank ones. Lines may be as long as the canonical reader allows.
type lines struct {
	sc   *bufio.Scanner
	line int
}

func newLines(r io.Reader) *lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	return &lines{sc: sc}
}

func (l *lines) next() ([]byte, bool) {
	for l.sc.Scan() {
		l.line++
		b := bytes.TrimSpace(l.sc.Bytes())
		if len(b) > 0 {
			return b, true
		}
	}
	return nil, false
}

func (l *lines) err(name string) error {
	if err := l.sc.Err(); err != nil {
		return &trace.ParseError{File: name, Line: l.line + 1, Err: err}
	}
	return nil
}

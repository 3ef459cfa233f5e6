package importers

import (
	"math"
	"time"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// Counts summarises a canonical trace; `ctxsim trace stats` prints it.
type Counts struct {
	Format       string `json:"format"`
	Events       int    `json:"events"`
	UserMessages int    `json:"user_messages"` // task and user events
	// SystemEvents counts the main agent's system prompt and tool schema
	// blocks, recorded or estimated (Claude Code, Aider: one elided block).
	SystemEvents   int `json:"system_events"`
	AssistantTurns int `json:"assistant_turns"`
	// ToolCalls counts the distinct calls of the main agent (sidechain events
	// of subagents excluded).
	ToolCalls    int    `json:"tool_calls"`
	ToolResults  int    `json:"tool_results"`
	Compactions  int    `json:"compactions"`
	UsageRecords int    `json:"usage_records"`
	Probes       int    `json:"probes"`
	FirstTime    string `json:"first_time,omitempty"` // RFC 3339, when the trace has a start time
	LastTime     string `json:"last_time,omitempty"`

	calls  map[string]bool
	firstT float64
	lastT  float64
}

// Add counts one event.
func (c *Counts) Add(e *trace.Event) {
	if c.Events == 0 {
		c.firstT = e.T
	}
	c.Events++
	c.lastT = e.T
	switch e.Kind {
	case trace.KindTask, trace.KindUser:
		if !e.Sidechain {
			c.UserMessages++
		}
	case trace.KindSystem:
		if !e.Sidechain {
			c.SystemEvents++
		}
	case trace.KindAssistant:
		if e.Sidechain {
			break
		}
		c.AssistantTurns++
		for _, tc := range e.ToolCalls {
			if c.calls == nil {
				c.calls = make(map[string]bool)
			}
			if !c.calls[tc.ID] {
				c.calls[tc.ID] = true
				c.ToolCalls++
			}
		}
	case trace.KindToolResult:
		if !e.Sidechain {
			c.ToolResults++
		}
	case trace.KindCompaction:
		c.Compactions++
	case trace.KindUsage:
		if !e.Sidechain && (e.Usage == nil || !e.Usage.Side) {
			c.UsageRecords++
		}
	case trace.KindProbe:
		c.Probes++
	}
}

// Finish fills the format and the wall-clock times from the header.
func (c *Counts) Finish(h trace.Header) {
	if c.Format == "" {
		c.Format = h.Source
	}
	if h.Start == "" || c.Events == 0 {
		return
	}
	t0, err := time.Parse(time.RFC3339Nano, h.Start)
	if err != nil {
		return
	}
	at := func(sec float64) string {
		// Recorded clocks have at most microsecond resolution; rounding hides
		// the float error of T.
		return t0.Add(time.Duration(math.Round(sec*1e6)) * time.Microsecond).UTC().Format(time.RFC3339Nano)
	}
	c.FirstTime, c.LastTime = at(c.firstT), at(c.lastT)
}

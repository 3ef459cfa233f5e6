package sim_test

import (
	"context"
	"fmt"

	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// A run of a tiny trace: a task, one tool call and a probe for a fact in its
// result, through the flat baseline on a model profile.
func Example() {
	h := trace.Header{Schema: trace.Schema, Version: trace.Version, Source: "example", Workload: "tiny"}
	evs := []trace.Event{
		{Kind: trace.KindTask, ID: "task", Text: "Find the port the server listens on."},
		{Kind: trace.KindAssistant, ID: "a1", T: 1, ToolCalls: []trace.ToolCall{{ID: "c1", Name: "read_file"}}},
		{Kind: trace.KindToolResult, ID: "r1", T: 2, Tool: "read_file", CallID: "c1", Text: "listen_port = 8443"},
		{Kind: trace.KindProbe, ID: "p1", T: 3, Probe: &trace.Probe{Fact: "port", Text: "listen_port = 8443", Source: "r1"}},
		{Kind: trace.KindAssistant, ID: "a2", T: 4, Text: "It listens on 8443."},
	}
	prof, err := sim.LookupProfile("claude-sonnet-5.5")
	if err != nil {
		panic(err)
	}
	res, err := sim.Run(context.Background(), sim.SliceSource(h, evs), sim.Config{Policy: "flat", Model: prof, Window: 8192})
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"requests", "task_retained_pct", "fact_recall_pct", "input_tokens"} {
		fmt.Printf("%s = %g\n", k, res.Metrics.Get(k))
	}
	// Output:
	// requests = 2
	// task_retained_pct = 100
	// fact_recall_pct = 100
	// input_tokens = 35
}

package sim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/blueprints"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// Every embedded blueprint runs the needle workload; the engine keeps the
// task pinned, so task retention is total where flat loses it.
func TestRegionsBlueprints(t *testing.T) {
	prof, _ := LookupProfile("claude-sonnet-5.5")
	for _, name := range blueprints.Names() {
		t.Run(name, func(t *testing.T) {
			src, _ := BuiltinWorkload("needle", 1)
			res, err := Run(context.Background(), src, Config{Policy: "regions:" + name, Model: prof, Window: 65536})
			if err != nil {
				t.Fatal(err)
			}
			m := &res.Metrics
			if m.Get("requests") < 80 {
				t.Errorf("requests = %v", m.Get("requests"))
			}
			if m.Get("peak_request_tokens") > 65536 {
				t.Errorf("peak request %v over the window", m.Get("peak_request_tokens"))
			}
			if got := m.Get("input_tokens"); got != m.Get("cache_read_tokens")+m.Get("cache_write_tokens")+m.Get("uncached_tokens") {
				t.Errorf("input %v != read + write + uncached", got)
			}
			if r := m.Get("fact_recall_pct"); r < 0 || r > 100 {
				t.Errorf("recall %v", r)
			}
		})
	}
}

// A small hand-made blueprint: a pinned task region, a conversation, and a
// notes region that read_file results are routed to.
const testBlueprint = `
[agent]
name = "t"
entry_stage = "work"

[stages.work]
system_prompt = "Work."

[stages.work.tool_routing]
default_region = "conversation"
[stages.work.tool_routing.overrides]
read_file = "notes"

[context.regions]
task = { kind = "pinned", budget = "10%", seed = "task_input" }
conversation = { kind = "sliding_window", budget = "40%" }
notes = { kind = "clearable", budget = "20%" }
`

func TestRegionsRouting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.leviath")
	if err := os.WriteFile(path, []byte(testBlueprint), 0o644); err != nil {
		t.Fatal(err)
	}
	fact := trace.Fact{ID: "f", Text: "port = 8443"}
	b := (&tb{}).task("t", 20).call("a1", "c1", 5).result("r1", "c1", 100, fact).probe("p", fact, "r1", true).asst("a2", 5, 5)
	rec := &recorder{}
	res, err := Run(context.Background(), SliceSource(trace.Header{Schema: trace.Schema, Version: 1}, b.evs),
		Config{Policy: "regions:" + path, Model: testProfile("none"), Window: 32768, Series: rec})
	if err != nil {
		t.Fatalf("%v", err)
	}
	checkMetrics(t, res.Metrics, map[string]float64{"requests": 2, "fact_recall_pct": 100, "task_retained_pct": 100})
	if len(rec.s) != 2 || len(rec.s[1].Regions) == 0 {
		t.Fatalf("samples %+v", rec.s)
	}
	names := []string{}
	for _, r := range rec.s[1].Regions {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "task") || !strings.Contains(got, "notes") {
		t.Errorf("regions %v, want the task region and the notes the read_file result was routed to", names)
	}
}

func TestRegionsBadBlueprint(t *testing.T) {
	_, err := ParsePolicy("regions:nope")
	if err != nil {
		t.Fatal(err)
	}
	src, _ := BuiltinWorkload("needle", 1)
	_, err = Run(context.Background(), src, Config{Policy: "regions:nope", Model: testProfile("none")})
	if err == nil || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "coder") {
		t.Errorf("error %v, want the bad name and the embedded ones", err)
	}
}

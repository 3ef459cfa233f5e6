package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// A growing conversation that never evicts: every figure can be counted.
//
//	r1 = sys task                  200 tokens
//	r2 = sys task a1 u1            400, common prefix 200 (50 %)
//	r3 = sys task a1 u1 a2 u2      600, common prefix 400 (66.7 %)
func TestMetricsGrowingConversation(t *testing.T) {
	b := (&tb{}).system("s", 100).task("t", 100).asst("a1", 100, 10).user("u1", 100).asst("a2", 100, 10).user("u2", 100).asst("a3", 100, 10)
	rec := &recorder{}
	res := run(t, b, Config{Policy: "unbounded", Model: testProfile("none"), Series: rec})
	checkMetrics(t, res.Metrics, map[string]float64{
		"requests":                 3,
		"input_tokens":             1200,
		"uncached_tokens":          1200,
		"cache_hit_pct":            0,
		"output_tokens":            30,
		"task_retained_pct":        100,
		"task_first_loss":          4, // never lost: requests+1
		"prefix_stability_pct":     100 * (0.5 + 400.0/600) / 2,
		"prefix_stability_p10_pct": 50,
		"input_growth":             3, // one-request quarters: 600 / 200
		"peak_request_tokens":      600,
		// Dead: a1,u1 in r2 and r3, a2,u2 in r3: 600 of 1200; no probe uses them.
		"waste_dead_pct": 50,
		// Re-prefill (no cache): sent-before tokens are sys+task in r2 and
		// sys+task+a1+u1 in r3 = 600; a1,u1's 200 are dead instead.
		"waste_reprefill_pct": 100 * 400.0 / 1200,
		"waste_refetch_pct":   0,
		"waste_pct":           100 * 1000.0 / 1200,
		"ttft_mean_s":         0.5 + 0.4, // 0.5 + (200+400+600)/3/1000
		"virtual_seconds":     (0.7 + 0.1) + (0.9 + 0.1) + (1.1 + 0.1),
		"cost_usd":            (1200*1 + 30*2) / 1e6,
		"evictions":           0,
		"compactions":         0,
		"lost_facts":          0,
	})
	if !math.IsNaN(res.Metrics.Get("fact_recall_pct")) {
		t.Error("fact recall without probes should be NaN")
	}
	if len(rec.s) != 3 || rec.s[2].RequestTokens != 600 || rec.s[2].StableTokens != 400 || rec.s[1].Index != 2 {
		t.Errorf("series = %+v", rec.s)
	}
}

// Under the anthropic model with breakpoints at the system prompt and the
// end, the growing conversation reads back what the previous request wrote.
func TestMetricsCacheHits(t *testing.T) {
	b := (&tb{}).system("s", 100).task("t", 100).asst("a1", 100, 10).user("u1", 100).asst("a2", 100, 10).user("u2", 100).asst("a3", 100, 10)
	res := run(t, b, Config{Policy: "unbounded", Model: testProfile("anthropic")})
	// r1 writes 200 (the system mark at 100 and the end at 200); r2 reads 200
	// and writes 200; r3 reads 400 and writes 200.
	checkMetrics(t, res.Metrics, map[string]float64{
		"cache_read_tokens":   600,
		"cache_write_tokens":  600,
		"uncached_tokens":     0,
		"cache_hit_pct":       50,
		"waste_reprefill_pct": 0,
		"cost_usd":            (600*0.1 + 600*1.25 + 30*2) / 1e6,
		"ttft_mean_s":         0.5 + 0.2,
	})
}

// The task falls off the flat list at a request we can count.
//
// Window 1000, reserve min(20K, max output 100, 250) = 100, budget 900.
// Request k+1 holds task (100) + a1..ak (1 each) + u1..uk (200 each) =
// 100 + 201k, over 900 from k = 4: request 5 is the first without the task.
func TestMetricsTaskFirstLoss(t *testing.T) {
	b := (&tb{}).task("t", 100)
	for i := 1; i <= 6; i++ {
		b.asst(name("a", i), 1, 1).user(name("u", i), 200)
	}
	b.asst("a7", 1, 1)
	prof := testProfile("none")
	res := run(t, b, Config{Policy: "flat", Model: prof, Window: 1000})
	checkMetrics(t, res.Metrics, map[string]float64{
		"requests":          7,
		"task_first_loss":   5,
		"task_retained_pct": 100 * 4.0 / 7,
	})
	res = run(t, b, Config{Policy: "flat-keep-system", Model: prof, Window: 1000})
	checkMetrics(t, res.Metrics, map[string]float64{"task_first_loss": 8, "task_retained_pct": 100})
}

func name(p string, i int) string { return p + string(rune('0'+i)) }

// A fact at a known depth: planted in a tool result, then 3 × 300 tokens of
// other results, then probed.
func TestMetricsProbeDepthAndRefetch(t *testing.T) {
	fact := trace.Fact{ID: "f1", Text: "port = 8443"}
	build := func() *tb {
		b := (&tb{}).task("t", 50).call("a1", "c1", 5).result("r1", "c1", 300, fact)
		for i := 2; i <= 4; i++ {
			b.call(name("a", i), name("c", i), 5).result(name("r", i), name("c", i), 300)
		}
		return b.probe("p1", fact, "r1", true).asst("a5", 5, 5)
	}
	prof := testProfile("none")
	t.Run("kept", func(t *testing.T) {
		res := run(t, build(), Config{Policy: "unbounded", Model: prof})
		checkMetrics(t, res.Metrics, map[string]float64{"fact_recall_pct": 100, "lost_facts": 0, "requests": 5})
		// Depth: tokens that entered after r1 (a2..a4 calls and r2..r4 results).
		if len(res.RecallByDepth) != 1 || res.RecallByDepth[0].Hits != 1 {
			t.Fatalf("depth buckets %+v", res.RecallByDepth)
		}
		d := res.RecallByDepth[0]
		if d.UpTo != 1024 {
			t.Errorf("depth bucket up to %d, want 1024 (depth 900 + 3 tool calls)", d.UpTo)
		}
	})
	t.Run("evicted then refetched", func(t *testing.T) {
		// Window 1000: budget 900 cannot hold r1..r4 (1200).
		res := run(t, build(), Config{Policy: "flat", Model: prof, Window: 1000})
		checkMetrics(t, res.Metrics, map[string]float64{"fact_recall_pct": 0, "lost_facts": 0, "requests": 6})
		if res.Metrics.Get("waste_refetch_pct") <= 0 {
			t.Error("no refetch waste after a refetch")
		}
	})
	t.Run("evicted, refetch off", func(t *testing.T) {
		res := run(t, build(), Config{Policy: "flat", Model: prof, Window: 1000, NoRefetch: true})
		checkMetrics(t, res.Metrics, map[string]float64{"fact_recall_pct": 0, "lost_facts": 1, "requests": 5, "waste_refetch_pct": 0})
	})
}

// A user's words cannot be fetched again: a miss is a lost fact.
func TestMetricsLostUserFact(t *testing.T) {
	fact := trace.Fact{ID: "f", Text: "my name is Ada"}
	b := (&tb{}).task("t", 10).user("u1", 20, fact)
	b.evs[len(b.evs)-1].Text = "note: my name is Ada " + strings.Repeat(".", 60)
	b.asst("a1", 300, 5).user("u2", 300).asst("a2", 300, 5).user("u3", 300).probe("p", fact, "u1", false).asst("a3", 5, 5)
	res := run(t, b, Config{Policy: "flat", Model: testProfile("none"), Window: 1000})
	checkMetrics(t, res.Metrics, map[string]float64{"fact_recall_pct": 0, "lost_facts": 1})
	res = run(t, b, Config{Policy: "unbounded", Model: testProfile("none")})
	checkMetrics(t, res.Metrics, map[string]float64{"fact_recall_pct": 100, "lost_facts": 0})
}

// Content a later probe uses is not dead; content none uses is.
func TestMetricsDeadWaste(t *testing.T) {
	f := trace.Fact{ID: "f", Text: "key"}
	b := (&tb{}).task("t", 100).call("a1", "c1", 0).result("r1", "c1", 100, f).call("a2", "c2", 0).result("r2", "c2", 100).
		probe("p", f, "r1", true).asst("a3", 1, 1)
	res := run(t, b, Config{Policy: "unbounded", Model: testProfile("none")})
	// Requests: [t]=100, [t a1 r1]=100+a1+100, [t a1 r1 a2 r2]=...; a1 and a2
	// are tool calls of 14 tokens ("<tool_use id=\"c1\" name=\"read_file\"></tool_use>" = 46 bytes -> 12).
	a := float64(len(`<tool_use id="c1" name="read_file"></tool_use>`)+3) / 4
	a = math.Floor(a)
	input := 100 + (200 + a) + (300 + 2*a)
	dead := a + 2*a + 100 // a1 twice, a2 once, r2 once; r1 is used by the probe
	checkMetrics(t, res.Metrics, map[string]float64{
		"input_tokens":   input,
		"waste_dead_pct": 100 * dead / input,
	})
}

func TestMetricDefs(t *testing.T) {
	want := strings.Fields(`task_retained_pct task_first_loss fact_recall_pct reference_recall_pct prefix_stability_pct
		prefix_stability_p10_pct cache_hit_pct input_tokens cache_read_tokens cache_write_tokens uncached_tokens
		output_tokens waste_pct waste_reprefill_pct waste_dead_pct waste_refetch_pct cost_usd virtual_seconds
		ttft_mean_s input_growth peak_request_tokens over_window_requests evictions compactions lost_facts requests`)
	defs := MetricDefs()
	if len(defs) != len(want) {
		t.Fatalf("%d metrics, want %d", len(defs), len(want))
	}
	for i, d := range defs {
		if d.Key != want[i] {
			t.Errorf("metric %d = %s, want %s", i, d.Key, want[i])
		}
		if d.Name == "" || d.Unit == "" || d.Help == "" {
			t.Errorf("%s: missing name, unit or help", d.Key)
		}
	}
}

func TestMetricsJSON(t *testing.T) {
	var m Metrics
	for i := range m.v {
		m.v[i] = float64(i) + 0.5
	}
	m.Set("fact_recall_pct", math.NaN())
	js := mustJSON(t, m)
	if !strings.HasPrefix(js, `{"task_retained_pct":0.5,"task_first_loss":1.5,"fact_recall_pct":null,`) {
		t.Fatalf("JSON %s", js)
	}
	var back Metrics
	if err := back.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, back) != js {
		t.Errorf("round trip changed %s", mustJSON(t, back))
	}
	if err := back.UnmarshalJSON([]byte(`{"nope":1}`)); err == nil {
		t.Error("unknown key accepted")
	}
	if m.Set("nope", 1) || !math.IsNaN(m.Get("nope")) {
		t.Error("unknown key settable")
	}
}

// A request with nothing in it (an assistant turn before any content, or a
// window too small for the only message) is measured, not a crash.
func TestMetricsEmptyRequest(t *testing.T) {
	for _, p := range []string{"flat", "unbounded", "clairvoyant", "as-recorded", "flat-compact", "flat-clear-tools"} {
		t.Run(p, func(t *testing.T) {
			b := (&tb{}).asst("a1", 1, 1).user("u1", 5000).asst("a2", 1, 1)
			res := run(t, b, Config{Policy: p, Model: testProfile("anthropic"), Window: 1000})
			if res.Metrics.Get("requests") != 2 {
				t.Errorf("requests %v", res.Metrics.Get("requests"))
			}
		})
	}
}

func TestCommonPrefix(t *testing.T) {
	long := strings.Repeat("abcdefgh", 200) // 1,600 bytes: several 256-byte steps
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{"empty", "", "abc", 0},
		{"equal", "abc", "abc", 3},
		{"one is a prefix", "ab", "abc", 2},
		{"differ at first byte", "xbc", "abc", 0},
		{"differ in the middle", "abXd", "abcd", 2},
		{"long, differ late", long + "x", long + "y", len(long)},
		{"long, differ inside a step", long[:700] + "!" + long[701:], long, 700},
		{"long, differ at a step boundary", long[:512] + "!" + long[513:], long, 512},
		{"long prefix of longer", long, long + "tail", len(long)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := commonPrefix(tt.a, tt.b); got != tt.want {
				t.Fatalf("commonPrefix = %d, want %d", got, tt.want)
			}
			if got := commonPrefix(tt.b, tt.a); got != tt.want {
				t.Fatalf("commonPrefix (swapped) = %d, want %d", got, tt.want)
			}
		})
	}
}

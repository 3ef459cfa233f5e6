package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

func newTestPolicy(t *testing.T, spec string, window int) (policy, *env) {
	t.Helper()
	ps, err := ParsePolicy(spec)
	if err != nil {
		t.Fatal(err)
	}
	e := testEnv(t, window)
	p, err := newPolicy(ps, e, &future{uses: map[string][]int{}})
	if err != nil {
		t.Fatal(err)
	}
	return p, e
}

func feed(p policy, b *tb) {
	for i := range b.evs {
		p.observe(&b.evs[i])
	}
}

// Each flat policy keeps exactly the messages its peer would. Window 1000:
// reserve min(20K, max output 100, 250) = 100, budget 900.
func TestFlatPoliciesKeep(t *testing.T) {
	// s(100) t(100) then u1..u5 of 150 tokens: 950 in all.
	b := (&tb{}).system("s", 100).task("t", 100)
	for i := 1; i <= 5; i++ {
		b.user(name("u", i), 150)
	}
	cases := []struct {
		spec, want string
	}{
		// A plain chat loop drops the oldest message, whatever it is.
		{"flat", "t u1 u2 u3 u4 u5"},
		// LangChain trimMessages(strategy="last", includeSystem): the system
		// message stays, then the longest suffix that fits (here the task too).
		{"flat-keep-system", "s t u2 u3 u4 u5"},
		{"unbounded", "s t u1 u2 u3 u4 u5"},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			p, _ := newTestPolicy(t, c.spec, 1000)
			feed(p, b)
			if got := ids(p.request()); got != c.want {
				t.Errorf("request = %s, want %s", got, c.want)
			}
		})
	}
}

// clear_tool_uses: past the trigger, every tool result but the last keep is
// replaced by the placeholder; the call stays.
func TestFlatClearTools(t *testing.T) {
	b := (&tb{}).task("t", 50)
	for i := 1; i <= 4; i++ {
		b.call(name("a", i), name("c", i), 1).result(name("r", i), name("c", i), 100)
	}
	p, e := newTestPolicy(t, "flat-clear-tools(trigger=300,keep=2)", 100000)
	feed(p, b)
	req := p.request()
	if got, want := ids(req), "t a1 r1#cleared a2 r2#cleared a3 r3 a4 r4"; got != want {
		t.Fatalf("request = %s, want %s", got, want)
	}
	if req.Blocks[2].Text != clearedPlaceholder || req.Blocks[2].Kind != BlockPlaceholder {
		t.Errorf("placeholder block = %+v", req.Blocks[2])
	}
	if e.evictions != 2 {
		t.Errorf("evictions = %d, want 2", e.evictions)
	}
	// Under the trigger nothing is cleared.
	p, _ = newTestPolicy(t, "flat-clear-tools(trigger=100000,keep=2)", 200000)
	feed(p, b)
	if got := ids(p.request()); strings.Contains(got, "cleared") {
		t.Errorf("cleared under the trigger: %s", got)
	}
}

// flat-compact: past the threshold, everything but the system prompt and the
// last keep messages becomes one summary that keeps the task and the facts.
func TestFlatCompact(t *testing.T) {
	fact := trace.Fact{ID: "f", Text: "the port is 8443"}
	b := (&tb{}).system("s", 50).task("t", 50)
	b.user("u1", 100, fact)
	b.evs[len(b.evs)-1].Text = "the port is 8443" + strings.Repeat(".", 384)
	for i := 2; i <= 6; i++ {
		b.user(name("u", i), 100)
	}
	p, e := newTestPolicy(t, "flat-compact(threshold=500,keep=2)", 100000)
	feed(p, b)
	req := p.request()
	if got, want := ids(req), "s summary#1 u5 u6"; got != want {
		t.Fatalf("request = %s, want %s", got, want)
	}
	sum := req.Blocks[1]
	if !strings.Contains(sum.Text, text("t", 50)) {
		t.Error("summary lost the task text")
	}
	if !sum.Has(&trace.Probe{Fact: "f", Text: fact.Text}) {
		t.Error("summary lost the fact")
	}
	if e.compactions != 1 || e.sumIn != 50+600-200 {
		t.Errorf("compactions %d, summariser input %d; want 1 and %d", e.compactions, e.sumIn, 50+600-200)
	}
	if sum.Tokens > summaryMaxTokens {
		t.Errorf("summary of %d tokens", sum.Tokens)
	}
}

// Bélády: over budget, evict content never probed again before content
// probed soon.
func TestClairvoyantEvictsFurthest(t *testing.T) {
	b := (&tb{}).task("t", 100).user("u1", 300).user("u2", 300).user("u3", 300)
	p, _ := newTestPolicy(t, "clairvoyant", 1000) // budget 900
	fp := p.(*flatPolicy)
	fp.oracle.uses["u1"] = []int{10}
	fp.oracle.uses["u3"] = []int{20}
	feed(p, b)
	if got, want := ids(p.request()), "t u1 u3"; got != want {
		t.Errorf("request = %s, want %s (u2 is never used again)", got, want)
	}
	// A later request: u4 is never used and goes first.
	feed(p, (&tb{}).user("u4", 300))
	if got, want := ids(p.request()), "t u1 u3"; got != want {
		t.Errorf("request = %s, want %s", got, want)
	}
	// Once the position passes u1's use, u1 is never used again.
	fp.oracle.pos = 11
	feed(p, (&tb{}).user("u5", 300))
	if got, want := ids(p.request()), "t u3 u5"; got != want {
		t.Errorf("request = %s, want %s", got, want)
	}
}

func TestParsePolicy(t *testing.T) {
	good := []struct {
		in   string
		name string
		arg  string
		n    int
	}{
		{"flat", "flat", "", 0},
		{"flat-compact(threshold=150000)", "flat-compact", "", 1},
		{"flat-clear-tools(trigger=1000, keep=5)", "flat-clear-tools", "", 2},
		{"regions:coder", "regions", "coder", 0},
		{"regions:../bp/agent.leviath", "regions", "../bp/agent.leviath", 0},
		{"clairvoyant()", "clairvoyant", "", 0},
	}
	for _, c := range good {
		t.Run(c.in, func(t *testing.T) {
			s, err := ParsePolicy(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != c.name || s.Arg != c.arg || len(s.Params) != c.n {
				t.Errorf("got %+v", s)
			}
		})
	}
	bad := []struct{ in, mention string }{
		{"lru", "unknown policy"},
		{"flat(window=3)", "window"},
		{"flat-compact(threshold=lots)", "threshold"},
		{"flat-compact(threshold=-1)", "threshold"},
		{"flat-compact(threshold=1,threshold=2)", "given twice"},
		{"flat-compact(threshold)", "key=value"},
		{"flat-compact(threshold=1", "missing ')'"},
		{"regions:", "blueprint"},
		{"regions", "blueprint"},
		{"unbounded(reserve=1)", "reserve"},
	}
	for _, c := range bad {
		t.Run(c.in, func(t *testing.T) {
			_, err := ParsePolicy(c.in)
			if err == nil || !strings.Contains(err.Error(), c.mention) {
				t.Errorf("error %v, want one naming %q", err, c.mention)
			}
		})
	}
}

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"flat", "flat-compact(threshold=1,keep=2)", "regions:coder", "x(", "(=)", "flat-clear-tools(trigger=9999999999999999999999)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParsePolicy(s)
		if err != nil {
			return
		}
		if !contains(Policies(), spec.Name) {
			t.Fatalf("accepted unknown policy %q", spec.Name)
		}
		for k := range spec.Params {
			if spec.Int(k, -1) < 0 {
				t.Fatalf("parameter %s accepted as %q", k, spec.Params[k])
			}
		}
	})
}

// A message that alone is over the window stays in the request (an agent
// sends at least what it just received) and the request is counted as over
// the window, rather than an empty request that would cost nothing.
func TestFlatKeepsNewestOverWindow(t *testing.T) {
	b := (&tb{}).task("t", 100).user("u1", 150).user("big", 5000)
	p, _ := newTestPolicy(t, "flat", 1000)
	feed(p, b)
	if got := ids(p.request()); got != "big" {
		t.Errorf("request = %s, want big", got)
	}

	b = (&tb{}).task("t", 100).call("a1", "c1", 10).result("r1", "c1", 5000).asst("a2", 10, 10)
	prof := testProfile("none")
	prof.Window = 1000
	res := run(t, b, Config{Policy: "flat", Model: prof})
	checkMetrics(t, res.Metrics, map[string]float64{"over_window_requests": 1, "requests": 2})
}

// A recorded system prompt that fills the window leaves the region engine no
// room: the requests still carry the system prompt, are counted over the
// window, and the run says why.
func TestRegionsSystemPromptFillsWindow(t *testing.T) {
	b := (&tb{}).system("s", 45000).task("t", 50).user("u1", 50).asst("a1", 10, 10).user("u2", 50).asst("a2", 10, 10)
	prof := testProfile("anthropic")
	prof.Window = 40000
	res := run(t, b, Config{Policy: "regions:coder", Model: prof})
	checkMetrics(t, res.Metrics, map[string]float64{"over_window_requests": 2, "requests": 2, "input_tokens": 90000, "task_retained_pct": 0,
		"cache_write_tokens": 45000, "cache_read_tokens": 45000})
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "system prompt (45000 tokens) fills the 40000-token window") {
		t.Errorf("warnings %q do not say the system prompt fills the window", res.Warnings)
	}
}

// TestEnvStat checks env.stat and lookup against a map: new ids (across
// slabs), ids again (undoing the entry's addition), and unknown ids; then
// that release leaves every stat zero.
func TestEnvStat(t *testing.T) {
	e := testEnv(t, 1000)
	want := map[string]*contentStat{}
	for i := range 3*slabLen + 5 {
		id := fmt.Sprint("r", i)
		st := e.stat(id)
		if st == nil || want[id] != nil {
			t.Fatalf("stat(%q) = %p, a stat made before", id, st)
		}
		for _, o := range want {
			if o == st {
				t.Fatalf("stat(%q) returned another id's stat", id)
			}
		}
		st.arrivedAt = int64(i + 1)
		want[id] = st
		if old := fmt.Sprint("r", i/2); e.stat(old) != want[old] || e.lookup(old) != want[old] {
			t.Fatalf("stat(%q) again = %p, want %p", old, e.stat(old), want[old])
		}
		if e.lookup(fmt.Sprint("x", i)) != nil {
			t.Fatalf("lookup of an unknown id found a stat")
		}
	}
	if len(e.content) != len(want) || e.nstat != len(want) {
		t.Fatalf("%d ids, %d stats, want %d", len(e.content), e.nstat, len(want))
	}
	for id, st := range want {
		if got := e.lookup(id); got != st || got.arrivedAt != st.arrivedAt || len(got.blocks) != 0 {
			t.Fatalf("lookup(%q) = %+v, want %+v", id, got, st)
		}
	}
	e.release()
	for id, st := range want {
		if st.arrivedAt != 0 {
			t.Fatalf("stat of %q not zeroed by release", id)
		}
	}
}

// TestMeterLose checks the lost facts' count against a map of (id, text):
// facts lost again, other facts with the same text or id, with and without
// the memo present made.
func TestMeterLose(t *testing.T) {
	var m meter
	m.init(testEnv(t, 1000), noCache{})
	want := map[lostFact]bool{}
	texts, ids := []string{"a=1", "b=2", "c=3"}, []string{"f1", "f2", "f3", "f4"}
	for i := range 40 {
		f := lostFact{ids[i*7%len(ids)], texts[i*5%len(texts)]}
		p := &pendingProbe{probe: &trace.Probe{Fact: f.id, Text: f.text}}
		if i%3 == 0 { // as present leaves it
			p.memo = m.memoOf(f.text) + 1
		}
		m.lose(p)
		want[f] = true
		if m.lost != len(want) {
			t.Fatalf("after losing %v: %d lost facts, want %d", f, m.lost, len(want))
		}
	}
}

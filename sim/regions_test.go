package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/blueprints"
	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads/synthetic"
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
	b := (&tb{}).system("s", 50).task("t", 20).call("a1", "c1", 5).result("r1", "c1", 100, fact).probe("p", fact, "r1", true).asst("a2", 5, 5)
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
	// The trace's system prompt goes ahead of the regions, in no region.
	if sys := rec.last; sys == nil || sys.Kind != BlockSystem || sys.ID != "s" || sys.Region != "" {
		t.Errorf("first block %+v, want the trace's system prompt", sys)
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

func TestStandInContent(t *testing.T) {
	ev := &trace.Event{Kind: trace.KindToolResult, ID: "r", Size: 1000, Facts: []trace.Fact{{ID: "f", Text: "port = 8443"}}}
	p := regionPolicy{env: &env{literalRuns: true}}
	c := p.content(ev)
	if len(c) != 1000 {
		t.Errorf("stand-in of %d bytes, want 1000", len(c))
	}
	i := strings.Index(c, "port = 8443")
	if i < 400 || i > 600 {
		t.Errorf("fact at byte %d, want it in the middle", i)
	}
	for _, name := range []string{"bytes/4", "o200k_base"} {
		tok, _ := NewTokenizer(name)
		n := countText(tok, c)
		if n < 240 || n > 260 {
			t.Errorf("%s: stand-in counts %d tokens, want about 250 (its bytes / 4)", name, n)
		}
		if enc := (&regionPolicy{env: &env{}}).content(ev); countText(tok, enc) != n {
			t.Errorf("%s: encoded stand-in counts %d tokens, want %d", name, countText(tok, enc), n)
		}
	}
	if got := p.content(&trace.Event{Text: "as is"}); got != "as is" {
		t.Errorf("text content changed: %q", got)
	}
}

// The provider's message breakpoints: anchored every 16 content blocks, the
// last ones within the 4-breakpoint budget; the end of the last message when
// there are fewer than 16 blocks.
func TestRegionsMessageBreakpoints(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.leviath")
	if err := os.WriteFile(path, []byte(testBlueprint), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, turns := range []int{3, 40} {
		b := (&tb{}).task("t", 20)
		for i := 0; i < turns; i++ {
			b.user(fmt.Sprintf("u%d", i), 30).asst(fmt.Sprintf("a%d", i), 30, 5)
		}
		ps, _ := ParsePolicy("regions:" + path)
		e := testEnv(t, 32768)
		pol, err := newPolicy(ps, e, nil)
		if err != nil {
			t.Fatal(err)
		}
		feed(pol, b)
		req := pol.request()
		var msgMarks []int
		firstMsg := -1
		for i, blk := range req.Blocks {
			if blk.Kind != BlockRegion && firstMsg < 0 {
				firstMsg = i
			}
		}
		for _, m := range req.Marks {
			if m.Index >= firstMsg {
				msgMarks = append(msgMarks, m.Index-firstMsg)
			}
		}
		if len(req.Marks) > 4 {
			t.Errorf("%d turns: %d breakpoints", turns, len(req.Marks))
		}
		nmsg := len(req.Blocks) - firstMsg
		switch {
		case nmsg < 16:
			if len(msgMarks) != 1 || msgMarks[0] != nmsg-1 {
				t.Errorf("%d turns: message marks %v, want the last block %d", turns, msgMarks, nmsg-1)
			}
		default:
			for _, m := range msgMarks {
				if (m+1)%16 != 0 {
					t.Errorf("%d turns: mark at message block %d, not on a 16-block anchor", turns, m)
				}
			}
			if len(msgMarks) == 0 || msgMarks[len(msgMarks)-1] != nmsg/16*16-1 {
				t.Errorf("%d turns: marks %v of %d blocks, want the last anchor kept", turns, msgMarks, nmsg)
			}
		}
	}
}

// The hand-built block ids and tool_use texts are what fmt would make.
func TestRegionBlockTexts(t *testing.T) {
	for _, c := range []struct {
		region string
		hash   uint64
	}{{"codebase", 0}, {"", 1}, {"conversation", 0xfedcba9876543210}, {"ünï", 0x0f}, {"x", 0x0123456789abcdef}, {"y", ^uint64(0)}} {
		if got, want := regionBlockID(c.region, c.hash), fmt.Sprintf("%s#%016x", c.region, c.hash); got != want {
			t.Errorf("regionBlockID = %q, want %q", got, want)
		}
	}
	for _, c := range []struct{ id, name, args string }{{"c1", "read_file", `{"path":"a.go"}`}, {`q"x`, "tab\there", ""}, {"é", "\x00", "[]"}, {`a\b`, "~\x7f", ""}} {
		if got, want := toolUseText(c.id, c.name, []byte(c.args)), fmt.Sprintf("<tool_use id=%q name=%q>%s</tool_use>", c.id, c.name, c.args); got != want {
			t.Errorf("toolUseText = %q, want %q", got, want)
		}
	}
}

// The region policy's stand-ins, cut from its arena, are standIn's.
func TestArenaStandIn(t *testing.T) {
	p := regionPolicy{env: &env{}}
	for _, size := range []int{0, 1, 5, 30, 1000, 9000, 20000} {
		for _, facts := range [][]trace.Fact{nil, {{ID: "f", Text: "port = 8443"}}, {{ID: "a", Text: "x"}, {ID: "b", Text: "a longer fact text"}}} {
			ev := &trace.Event{Kind: trace.KindToolResult, ID: "r", Size: size, Facts: facts}
			got, want := p.content(ev), standIn(size, facts, false)
			if size == 0 {
				want = "" // no elided content
			}
			if got != want {
				t.Errorf("size %d, %d facts: arena stand-in %.40q, want %.40q", size, len(facts), got, want)
			}
		}
	}
}

// digestSink keeps one digest per request: every block's content hash,
// tokens, kind and id, and the cache marks.
type digestSink struct{ sums []uint64 }

func (d *digestSink) Request(s RequestSample) {
	h := uint64(len(s.Request.Blocks))
	for _, b := range s.Request.Blocks {
		h = chain(h, b.Hash)
		h = chain(h, uint64(b.Tokens)<<8|uint64(b.Kind))
		h = chain(h, hashContent(BlockRegion, b.ID, "", 0))
	}
	for _, m := range s.Request.Marks {
		h = chain(h, uint64(m.Index))
	}
	d.sums = append(d.sums, h)
}

// regionCase is a workload run through a region policy.
type regionCase struct {
	name, policy string
	hdr          trace.Header
	evs          []trace.Event
}

// regionCases are every synthetic workload with its blueprint, and random
// workloads with three blueprints.
func regionCases(t *testing.T) []regionCase {
	t.Helper()
	var cases []regionCase
	for _, name := range synthetic.Names() {
		h, evs := syntheticLoad(t, name)
		bp := map[string]string{"log-analyzer": "log-analyzer", "researcher": "deep-researcher"}[name]
		if bp == "" {
			bp = "coder"
		}
		cases = append(cases, regionCase{name, "regions:" + bp, h, evs})
	}
	for _, bp := range []string{"coder", "reviewer", "data-analyst"} {
		h, evs := randomWorkload(5, 400)
		cases = append(cases, regionCase{"random", "regions:" + bp, h, evs})
	}
	return cases
}

// The region policy converts only what the engine reports changed since the
// last request (engine.Request.SameSystem and SameMessages). Converting every
// request in full must give the same requests, and the same results, on every
// synthetic workload with its blueprint and on random workloads, at small and
// large windows.
func TestRegionRequestsAsRebuilt(t *testing.T) {
	for _, c := range regionCases(t) {
		for _, w := range []int{8192, 32768, 200000} {
			var out [2]*Result
			var sinks [2]*digestSink
			for i, rebuild := range []bool{false, true} {
				sinks[i] = &digestSink{}
				cfg := Config{Policy: c.policy, Model: testProfile("anthropic"), Window: w, Series: sinks[i], rebuild: rebuild}
				res, err := Run(context.Background(), SliceSource(c.hdr, c.evs), cfg)
				if err != nil {
					t.Fatalf("%s %s %d: %v", c.name, c.policy, w, err)
				}
				out[i] = res
			}
			if len(sinks[0].sums) == 0 {
				t.Fatalf("%s %s %d: no requests", c.name, c.policy, w)
			}
			if !slices.Equal(sinks[0].sums, sinks[1].sums) {
				i := 0
				for i < min(len(sinks[0].sums), len(sinks[1].sums)) && sinks[0].sums[i] == sinks[1].sums[i] {
					i++
				}
				t.Errorf("%s %s %d: request %d differs from its full conversion", c.name, c.policy, w, i+1)
				continue
			}
			a, _ := json.Marshal(out[0])
			b, _ := json.Marshal(out[1])
			if !bytes.Equal(a, b) {
				t.Errorf("%s %s %d: results differ from full conversion:\n%s\n%s", c.name, c.policy, w, a, b)
			}
		}
	}
}

// promiseSink checks what the region policy tells the meter of each request
// against the request before: its first same blocks are that one's, each
// of that one's blocks outside gone is in it at an index no lower than its
// own or keptFrom, and those between gone's ranges are its from keptFrom on.
type promiseSink struct {
	t       *testing.T
	name    string
	prev    []*Block
	tracked int
}

func (s *promiseSink) Request(r RequestSample) {
	req := r.Request
	blocks := req.Blocks
	if req.same > min(len(blocks), len(s.prev)) || !slices.Equal(blocks[:req.same], s.prev[:req.same]) {
		s.t.Fatalf("%s request %d: its first %d blocks are not the last request's", s.name, r.Index, req.same)
	}
	if req.tracked {
		s.tracked++
		g := req.gone
		if g[0].lo > g[0].hi || g[0].hi > g[1].lo || g[1].lo > g[1].hi || g[1].hi > len(s.prev) {
			s.t.Fatalf("%s request %d: gone %v of %d blocks", s.name, r.Index, g, len(s.prev))
		}
		for i, b := range s.prev {
			if g[0].lo <= i && i < g[0].hi || g[1].lo <= i && i < g[1].hi {
				continue
			}
			if !slices.Contains(blocks[min(i, req.keptFrom, len(blocks)):], b) {
				s.t.Fatalf("%s request %d: block %d of the last request is not in this one from %d on", s.name, r.Index, i, min(i, req.keptFrom))
			}
		}
		if kept := s.prev[g[0].hi:g[1].lo]; req.keptFrom+len(kept) > len(blocks) || !slices.Equal(blocks[req.keptFrom:][:len(kept)], kept) {
			s.t.Fatalf("%s request %d: the last request's blocks %d to %d are not this one's from %d on", s.name, r.Index, g[0].hi, g[1].lo, req.keptFrom)
		}
	}
	s.prev = slices.Clone(blocks)
}

// The region policy's promises to the meter (Request.same, gone, keptFrom)
// hold on every synthetic workload with its blueprint and on random
// workloads, at small and large windows, built in steps or in full.
func TestRegionRequestPromises(t *testing.T) {
	for _, c := range regionCases(t) {
		for _, w := range []int{8192, 32768, 200000} {
			for _, rebuild := range []bool{false, true} {
				s := &promiseSink{t: t, name: fmt.Sprintf("%s %s %d %v", c.name, c.policy, w, rebuild)}
				cfg := Config{Policy: c.policy, Model: testProfile("anthropic"), Window: w, Series: s, rebuild: rebuild}
				if _, err := Run(context.Background(), SliceSource(c.hdr, c.evs), cfg); err != nil {
					t.Fatal(err)
				}
				if s.tracked == 0 {
					t.Errorf("%s: no request tracked what left", s.name)
				}
			}
		}
	}
}

// Each tool call's blocks get its own result's id and refetch mark, however
// many calls one request converts.
func TestRegionToolCallBlocks(t *testing.T) {
	e := testEnv(t, 32768)
	pol, err := newRegionPolicy(PolicySpec{Name: "regions", Arg: "coder"}, e, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := pol.(*regionPolicy)
	calls := func(ids ...string) []trace.ToolCall {
		var cs []trace.ToolCall
		for _, id := range ids {
			cs = append(cs, trace.ToolCall{ID: id, Name: "grep", Args: json.RawMessage(`{"q":"` + id + `"}`)})
		}
		return cs
	}
	p.observe(&trace.Event{Kind: trace.KindTask, ID: "t", Text: "the task"})
	p.observe(&trace.Event{Kind: trace.KindAssistant, ID: "a1", ToolCalls: calls("c1", "c2")})
	// The results of a turn's calls in another order than the calls.
	p.observe(&trace.Event{Kind: trace.KindToolResult, ID: "r2", Tool: "grep", CallID: "c2", Text: "two"})
	p.observe(&trace.Event{Kind: trace.KindToolResult, ID: "r1", Tool: "grep", CallID: "c1", Text: "one"})
	e.refetching = true
	p.observe(&trace.Event{Kind: trace.KindAssistant, ID: "a2", ToolCalls: calls("c3")})
	p.observe(&trace.Event{Kind: trace.KindToolResult, ID: "r3", Tool: "grep", CallID: "c3", Text: "three"})
	e.refetching = false
	var got []string
	for _, b := range p.request().Blocks {
		switch {
		case b.Kind == BlockToolResult:
			got = append(got, fmt.Sprintf("%s:%v", b.ID, b.Refetched))
		case strings.HasPrefix(b.Text, toolUseHead):
			got = append(got, fmt.Sprintf("%.17s:%v", b.Text, b.Refetched))
			// The engine got each call whole.
			if id := b.Text[len(toolUseHead)+1 : len(toolUseHead)+3]; b.Text != toolUseText(id, "grep", []byte(`{"q":"`+id+`"}`)) {
				t.Errorf("tool call block %q", b.Text)
			}
		}
	}
	want := `<tool_use id="c1":false <tool_use id="c2":false r2:false r1:false <tool_use id="c3":true r3:true`
	if s := strings.Join(got, " "); s != want {
		t.Errorf("tool call blocks %s, want %s", s, want)
	}
}

// TestCallTable checks the tool call table against a map: the newest call
// (found by comparison), older ones, ids added or entered again, and
// unknown ids.
func TestCallTable(t *testing.T) {
	var tab callTable
	want := map[string]string{}
	ids := []string{"", "c", "toolu_01", "toolu_01A", "toolu_01AAAAAAAA", "toolu_01AAAAAAAB"}
	for i := range 300 {
		ids = append(ids, fmt.Sprintf("toolu_%020d", i), fmt.Sprint(i))
	}
	for i, id := range ids {
		add := tab.add
		if i%2 == 1 {
			add = tab.enter // as a result's call, entered first
		}
		c := add(id)
		if c.id != id {
			t.Fatalf("add(%q) returned the info of %q", id, c.id)
		}
		if i%3 == 0 {
			c.event, c.hasEvent = fmt.Sprint("r", i), true
			want[id] = c.event
		}
		if old := ids[i/2]; tab.add(old).id != old { // an old id again adds nothing
			t.Fatalf("add(%q) again returned the info of %q", old, tab.add(old).id)
		}
		if old := ids[i/3]; tab.enter(old).id != old { // nor entering it
			t.Fatalf("enter(%q) again returned the info of %q", old, tab.enter(old).id)
		}
	}
	if len(tab.infos) != len(ids) {
		t.Errorf("%d infos for %d ids", len(tab.infos), len(ids))
	}
	for _, id := range ids {
		c := tab.find(id)
		if c == nil || c.id != id || c.event != want[id] || c.hasEvent != (want[id] != "") {
			t.Errorf("find(%q) = %+v, want event %q", id, c, want[id])
		}
	}
	for _, id := range []string{"d", "toolu_01AAAAAAAC", "toolu_0", "toolu_00000000000000000300"} {
		if c := tab.find(id); c != nil {
			t.Errorf("find(%q) = %+v, want nil", id, c)
		}
	}
}

// TestBlockTable checks the converted blocks' index against a map, with
// keys whose low bits collide, across the table's growth, and after it was
// emptied (of some keys added again, some not, some new; growing it then).
func TestBlockTable(t *testing.T) {
	var tab blockTable
	var old map[uint64]int
	for gen, n := range []int{500, 300, 1500} {
		want := map[uint64]int{}
		for i := range n {
			key := uint64(i%7)<<40 | uint64(i%3)<<8 // few distinct low bits
			if i%5 == 0 {
				key = uint64(i+gen*200) * 0x9E3779B97F4A7C15
			}
			if _, ok := want[key]; ok {
				continue
			}
			s := tab.slot(key)
			if s.i != 0 {
				t.Fatalf("gen %d: slot(%#x) holds index %d before it was added", gen, key, s.i-1)
			}
			tab.fill(s, key, i)
			want[key] = i
			if k := key ^ 1<<63; i%2 == 0 && want[k] == 0 {
				tab.add(k, i+1000) // added without a slot in hand
				want[k] = i + 1000
			}
		}
		if tab.n != len(want) {
			t.Errorf("gen %d: %d keys in the table, want %d", gen, tab.n, len(want))
		}
		for key, i := range want {
			if s := tab.slot(key); int(s.i) != i+1 || s.key != key {
				t.Errorf("gen %d: slot(%#x) = %+v, want index %d", gen, key, *s, i)
			}
		}
		for key := range old {
			if _, ok := want[key]; !ok {
				if s := tab.slot(key); s.i != 0 {
					t.Fatalf("gen %d: slot(%#x) of a key emptied = %+v, want an empty one", gen, key, *s)
				}
			}
		}
		if s := tab.slot(12345); s.i != 0 {
			t.Errorf("slot of a missing key = %+v, want an empty one", *s)
		}
		old = want
		tab.empty()
	}
}

// The meter walks only the blocks a request adds or drops when the policy
// tracks what stayed (see Request.gone and meter.add): walking every block
// past a change must give the same results, on every synthetic workload
// with its blueprint and on random workloads, at small and large windows.
func TestRegionMeterAsWalked(t *testing.T) {
	for _, c := range regionCases(t) {
		for _, w := range []int{8192, 32768, 200000} {
			var out [2][]byte
			for i, walkAll := range []bool{false, true} {
				cfg := Config{Policy: c.policy, Model: testProfile("anthropic"), Window: w, walkAll: walkAll}
				res, err := Run(context.Background(), SliceSource(c.hdr, c.evs), cfg)
				if err != nil {
					t.Fatalf("%s %s %d: %v", c.name, c.policy, w, err)
				}
				out[i], _ = json.Marshal(res)
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Errorf("%s %s %d: results differ from walking every block:\n%s\n%s", c.name, c.policy, w, out[0], out[1])
			}
		}
	}
}

// Content arrives once per region: a block converted again adds nothing, the
// same content in another region does. (Arrivals weigh the fact-depth
// buckets; no results file shows a miscount.)
func TestRegionsArrivalPerRegion(t *testing.T) {
	e := testEnv(t, 32768)
	p := &regionPolicy{env: e, regions: map[string]*regionState{}}
	eb := engine.Block{Region: "a", Text: "the same text", Hash: 42, Role: engine.RoleUser, Type: engine.BlockText}
	p.convert(&eb, blockKey(&eb))
	n := e.arrived
	if n == 0 {
		t.Fatal("nothing arrived")
	}
	p.convert(&eb, blockKey(&eb))
	if e.arrived != n {
		t.Errorf("converted again: arrived %d, want %d", e.arrived, n)
	}
	eb.Region = "b"
	p.convert(&eb, blockKey(&eb))
	if e.arrived != 2*n {
		t.Errorf("in another region: arrived %d, want %d", e.arrived, 2*n)
	}
	for h := uint64(0); h < 200; h++ { // past the seen-set's growth
		eb.Hash = h << 32
		p.convert(&eb, blockKey(&eb))
	}
	m := e.arrived
	for h := uint64(0); h < 200; h++ {
		eb.Hash = h << 32
		p.convert(&eb, blockKey(&eb))
	}
	if e.arrived != m {
		t.Errorf("200 blocks converted again: arrived %d, want %d", e.arrived, m)
	}
}

// chain combines a prefix hash with the next block's hash.
func chain(prefix, block uint64) uint64 {
	x := prefix ^ (block + 0x9e3779b97f4a7c15 + (prefix << 6) + (prefix >> 2))
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// forget keeps the converted blocks of the last forgetAfter+1 requests, no
// other, and indexes them: over workloads of several forgets, in which
// blocks of each of those requests left.
func TestRegionForget(t *testing.T) {
	var left [forgetAfter + 1]int // by request before a forget: the blocks it was the last to hold
	for seed := range uint64(4) {
		_, evs := randomWorkload(seed+3, 1600)
		e := testEnv(t, 32768)
		pol, err := newRegionPolicy(PolicySpec{Name: "regions", Arg: "coder"}, e, 0)
		if err != nil {
			t.Fatal(err)
		}
		p := pol.(*regionPolicy)
		var recent [forgetAfter + 1][]*Block // the blocks of the last requests, by p.nreq
		for i := range evs {
			ev := &evs[i]
			if ev.Kind == trace.KindAssistant {
				req := p.request()
				recent[p.nreq%len(recent)] = slices.Clone(req.Blocks[len(p.sys):])
				if p.nreq%forgetEvery == 0 {
					want := map[*Block]bool{}
					for k := range recent {
						for _, b := range recent[(p.nreq-k)%len(recent)] {
							if k > 0 && !want[b] {
								left[k]++ // counted once a block, in the last request that held it
							}
							want[b] = true
						}
					}
					got := map[*Block]bool{}
					for i, b := range p.cached {
						got[b] = true
						if s := p.index.slot(b.key); int(s.i) != i+1 {
							t.Errorf("request %d: block %d of cached indexed as %d", p.nreq, i, s.i-1)
						}
					}
					if p.index.n != len(p.cached) || len(got) != len(p.cached) || !maps.Equal(got, want) {
						t.Fatalf("seed %d, request %d: forget kept %d blocks (%d distinct, %d indexed), want the %d of the last %d requests",
							seed, p.nreq, len(p.cached), len(got), p.index.n, len(want), len(recent))
					}
				}
			}
			p.observe(ev)
		}
	}
	for k, n := range left[1:] {
		if n == 0 {
			t.Errorf("no block left after the request %d before a forget", k+1)
		}
	}
}

package synthetic

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/ctxsim/ctxsim/blueprints"
	"github.com/ctxsim/ctxsim/internal/golden"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// goldenEvents is how many events of each generator the golden files pin.
const goldenEvents = 12

// run generates a workload with its defaults (overlaid with extra TOML when
// not empty) and returns its header and events.
func run(t testing.TB, name string, seed uint64, extra string) (trace.Header, []*trace.Event) {
	t.Helper()
	var data []byte
	if extra != "" {
		data = []byte(extra)
	}
	p, err := Parse(name, data, "test.toml")
	if err != nil {
		t.Fatal(err)
	}
	var evs []*trace.Event
	if err := Generate(p, seed, func(e *trace.Event) error { evs = append(evs, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return Header(p, seed), evs
}

// encode writes a header and events as a canonical trace.
func encode(t testing.TB, h trace.Header, evs []*trace.Event) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := trace.NewWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// goldenRender renders events for a golden file: each event's JSON with its text
// cut to goldenText bytes, followed by the length and SHA-256 of the whole
// text, so that the file pins every byte while staying readable.
func goldenRender(t *testing.T, h trace.Header, evs []*trace.Event) []byte {
	const goldenText = 160
	var b bytes.Buffer
	b.Write(encode(t, h, nil))
	for _, e := range evs {
		c := *e
		full := c.Text
		if len(full) > goldenText {
			c.Text = full[:goldenText]
		}
		line, err := json.Marshal(struct {
			Event      *trace.Event `json:"event"`
			TextBytes  int          `json:"text_bytes"`
			TextSHA256 string       `json:"text_sha256"`
		}{&c, len(full), fmt.Sprintf("%x", sha256.Sum256([]byte(full)))})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			h, evs := run(t, name, 1, "")
			golden.Check(t, filepath.Join("testdata", name+".golden"), goldenRender(t, h, evs[:goldenEvents]), nil)
		})
	}
}

func TestDeterministic(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			trace := func(seed uint64) []byte {
				h, evs := run(t, name, seed, "")
				return encode(t, h, evs)
			}
			a, b := trace(7), trace(7)
			if !bytes.Equal(a, b) {
				t.Fatal("the same seed gave different traces")
			}
			if c := trace(8); bytes.Equal(a, c) {
				t.Fatal("seeds 7 and 8 gave the same trace")
			}
		})
	}
}

// TestTraceReadsBack checks that every generated trace passes the reader's
// validation: unique ids, times that never go back, required fields.
func TestTraceReadsBack(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			h, evs := run(t, name, 3, "")
			r := trace.NewReader(bytes.NewReader(encode(t, h, evs)), name)
			n := 0
			for r.Scan() {
				n++
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			if n != len(evs) {
				t.Fatalf("read %d events, wrote %d", n, len(evs))
			}
			if evs[0].Kind != trace.KindTask {
				t.Fatalf("first event is %s, want task", evs[0].Kind)
			}
		})
	}
}

// content returns the text an event carries, including a context op's.
func content(t *testing.T, e *trace.Event) string {
	if e.Op != nil {
		var a struct{ Content string }
		if err := json.Unmarshal(e.Op.Args, &a); err != nil {
			t.Fatalf("%s: op args: %v", e.ID, err)
		}
		return a.Content
	}
	return e.Text
}

func TestFactsVerbatim(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			_, evs := run(t, name, 1, "")
			texts := map[string]string{}
			n := 0
			for _, e := range evs {
				c := content(t, e)
				for _, f := range e.Facts {
					n++
					if !strings.Contains(c, f.Text) {
						t.Errorf("%s: fact %s %q is not in the content", e.ID, f.ID, f.Text)
					}
					if prev, ok := texts[f.ID]; ok && prev != f.Text {
						t.Errorf("%s: fact %s is %q here and %q earlier", e.ID, f.ID, f.Text, prev)
					}
					texts[f.ID] = f.Text
				}
			}
			if n < 5 {
				t.Fatalf("only %d facts planted", n)
			}
			// Distinct facts have distinct texts, or a probe could not tell them apart.
			seen := map[string]string{}
			for _, id := range slices.Sorted(func(yield func(string) bool) {
				for k := range texts {
					if !yield(k) {
						return
					}
				}
			}) {
				if other, dup := seen[texts[id]]; dup {
					t.Errorf("facts %s and %s share the text %q", other, id, texts[id])
				}
				seen[texts[id]] = id
			}
		})
	}
}

func TestProbes(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			_, evs := run(t, name, 1, "")
			first := map[string]*trace.Event{} // fact id → first carrier
			byID := map[string]*trace.Event{}
			probes, refetchable, taskProbe := 0, 0, false
			for i, e := range evs {
				byID[e.ID] = e
				if e.Kind == trace.KindProbe {
					probes++
					p := e.Probe
					src, ok := first[p.Fact]
					if !ok {
						t.Fatalf("%s: probe for fact %s that no earlier event carried", e.ID, p.Fact)
					}
					if src.ID != p.Source {
						t.Errorf("%s: source %s, but the fact first arrived in %s", e.ID, p.Source, src.ID)
					}
					if p.Text == "" || !strings.Contains(content(t, src), p.Text) {
						t.Errorf("%s: text %q is not in its source %s", e.ID, p.Text, src.ID)
					}
					taskProbe = taskProbe || p.Source == "task"
					if src.Kind == trace.KindContextOp {
						t.Errorf("%s: probes fact %s of context op %s, which only region policies see", e.ID, p.Fact, src.ID)
					}
					switch src.Kind {
					case trace.KindToolResult:
						refetchable++
						if p.Refetch == nil {
							t.Errorf("%s: fact from tool result %s has no refetch call", e.ID, src.ID)
						} else if p.Refetch.ID != src.CallID || p.Refetch.Name != src.Tool {
							t.Errorf("%s: refetch %s %s, want the call %s %s that fetched it", e.ID, p.Refetch.Name, p.Refetch.ID, src.Tool, src.CallID)
						}
					default:
						if p.Refetch != nil {
							t.Errorf("%s: fact from a %s event has a refetch call", e.ID, src.Kind)
						}
					}
					// A probe asks about the next inference: an assistant turn must follow.
					j := i + 1
					for j < len(evs) && evs[j].Kind == trace.KindProbe {
						j++
					}
					if j == len(evs) || evs[j].Kind != trace.KindAssistant {
						t.Errorf("%s: not followed by an assistant turn", e.ID)
					}
					continue
				}
				for _, f := range e.Facts {
					if _, ok := first[f.ID]; !ok {
						first[f.ID] = e
					}
				}
			}
			if probes < 5 {
				t.Errorf("%d probes, want at least 5", probes)
			}
			if !taskProbe {
				t.Error("no probe for the task")
			}
			if name != "chat" && refetchable == 0 {
				t.Error("no probe of a refetchable fact")
			}
		})
	}
}

// depths returns, for each probe, the tokens between its fact's arrival and
// the probe, and the total tokens of the trace.
func depths(evs []*trace.Event) (ds []int, total int) {
	at := map[string]int{}
	pos := 0
	for _, e := range evs {
		n := e.Bytes()
		for _, c := range e.ToolCalls {
			n += len(c.Name) + len(c.Args)
		}
		if e.Op != nil {
			n += len(e.Op.Args)
		}
		pos += (n + 3) / 4
		if e.Kind == trace.KindProbe && e.Probe.Source != "task" {
			ds = append(ds, pos-at[e.Probe.Fact])
		}
		for _, f := range e.Facts {
			if _, ok := at[f.ID]; !ok {
				at[f.ID] = pos
			}
		}
	}
	return ds, pos
}

func TestProbeDepthsSpread(t *testing.T) {
	for _, name := range []string{"coder", "researcher", "log-analyzer", "chat", "burst"} {
		t.Run(name, func(t *testing.T) {
			ds, total := depths(must(run(t, name, 1, "")))
			lo, hi := slices.Min(ds), slices.Max(ds)
			if lo > total/20 {
				t.Errorf("shallowest probe at %d tokens of %d: want some within the last 5%%", lo, total)
			}
			if hi < total/2 {
				t.Errorf("deepest probe at %d tokens of %d: want some older than half the run", hi, total)
			}
		})
	}
}

func must(_ trace.Header, evs []*trace.Event) []*trace.Event { return evs }

func TestNeedleDepths(t *testing.T) {
	extra := "workload = \"needle\"\ntotal_tokens = 40000\ndepths_tokens = [0, 500, 5000, 20000, 39000]\nuser_every = 0\n"
	evs := must(run(t, "needle", 1, extra))
	ds, _ := depths(evs)
	slices.Sort(ds)
	want := []int{0, 500, 5000, 20000, 39000}
	if len(ds) != len(want) {
		t.Fatalf("%d needle probes, want %d", len(ds), len(want))
	}
	// A needle lands inside the read that covers its depth, so it can be off
	// by about one chunk (median 6000 bytes, 1500 tokens), plus the probes.
	for i, d := range ds {
		if math.Abs(float64(d-want[i])) > 4000 {
			t.Errorf("needle %d at depth %d tokens, want about %d", i, d, want[i])
		}
	}
}

func TestNeedleUserCarriers(t *testing.T) {
	evs := must(run(t, "needle", 1, ""))
	users := 0
	for _, e := range evs {
		if e.Kind == trace.KindProbe && e.Probe.Source != "task" && e.Probe.Refetch == nil {
			users++
		}
	}
	if users != 2 { // 7 depths, every third said by the user
		t.Errorf("%d needles said by the user, want 2", users)
	}
}

func TestBurstGiantRead(t *testing.T) {
	evs := must(run(t, "burst", 1, ""))
	const window = 128000
	giant := -1
	var results []int
	for i, e := range evs {
		if e.Kind == trace.KindToolResult {
			results = append(results, i)
			if tokens(e.Bytes()) > window/2 {
				if giant >= 0 {
					t.Fatalf("two giant reads: %s and %s", evs[giant].ID, e.ID)
				}
				giant = i
				if got := float64(tokens(e.Bytes())) / window; got < 0.6 || got > 0.8 {
					t.Errorf("giant read is %.0f%% of the window, want 60..80%%", 100*got)
				}
			}
		}
	}
	if giant < 0 {
		t.Fatal("no giant read")
	}
	k := slices.Index(results, giant)
	if k < len(results)/4 || k > 3*len(results)/4 {
		t.Errorf("giant read is tool result %d of %d, want it in the middle", k, len(results))
	}
	var task, early bool
	for _, e := range evs[giant:] {
		if e.Kind != trace.KindProbe {
			continue
		}
		task = task || e.Probe.Source == "task"
		if src := slices.IndexFunc(evs, func(x *trace.Event) bool { return x.ID == e.Probe.Source }); src >= 0 && src < giant && e.Probe.Source != "task" {
			early = true
		}
	}
	if !task || !early {
		t.Errorf("after the giant read: task probe %v, early-fact probe %v; want both", task, early)
	}
}

// TestStagesMatchBlueprints checks that the stage events of the workloads
// that model a blueprint walk that blueprint's graph: every stage exists,
// every named transition is declared on the stage it leaves, and a stage
// entered without one is the entry stage or a fan-out's merge stage.
func TestStagesMatchBlueprints(t *testing.T) {
	for _, tc := range []struct{ workload, blueprint string }{
		{"coder", "coder"}, {"burst", "coder"}, {"researcher", "deep-researcher"}, {"log-analyzer", "log-analyzer"},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			src, err := blueprints.Source(tc.blueprint)
			if err != nil {
				t.Fatal(err)
			}
			var bp struct {
				Agent struct {
					EntryStage string `toml:"entry_stage"`
				}
				Stages map[string]struct {
					Mode        string
					MergeStage  string `toml:"merge_stage"`
					Transitions map[string]any
				}
			}
			if _, err := toml.Decode(string(src), &bp); err != nil {
				t.Fatal(err)
			}
			prev := ""
			for _, e := range must(run(t, tc.workload, 1, "")) {
				if e.Kind != trace.KindStage {
					continue
				}
				to, tr := e.Stage.To, e.Stage.Transition
				if _, ok := bp.Stages[to]; !ok {
					t.Fatalf("%s: stage %q is not in blueprint %s", e.ID, to, tc.blueprint)
				}
				switch {
				case prev == "" && to != bp.Agent.EntryStage:
					t.Errorf("%s: first stage %q, blueprint enters at %q", e.ID, to, bp.Agent.EntryStage)
				case prev != "" && tr == "" && bp.Stages[prev].MergeStage != to:
					t.Errorf("%s: %s → %s without a transition, but %s is not %s's merge stage", e.ID, prev, to, to, prev)
				case tr != "":
					if _, ok := bp.Stages[prev].Transitions[tr]; !ok {
						t.Errorf("%s: transition %q is not declared on stage %q", e.ID, tr, prev)
					}
				}
				prev = to
			}
			if prev == "" {
				t.Fatal("no stage events")
			}
		})
	}
}

// TestUserParamsFile checks the path a user takes: their own TOML, setting a
// few keys, naming the workload in the file.
func TestUserParamsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.toml")
	src := `# my own coder run
workload = "coder"
scale = 0.5

[repo]
file_bytes = { median = 1000, sigma = 0.2, min = 100, max = 5000 }

[[stages]]
name = "implement"
steps = 20
tools = { read_file = 1, bash = 1 }
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load("", file)
	if err != nil {
		t.Fatal(err)
	}
	cp, ok := p.(*CoderParams)
	if !ok {
		t.Fatalf("Load gave %T, want *CoderParams", p)
	}
	if cp.Repo.Files != 150 || cp.Repo.FailShare != 0.35 {
		t.Errorf("keys the file does not set lost their defaults: files %d, fail_share %v", cp.Repo.Files, cp.Repo.FailShare)
	}
	var stages []string
	calls := 0
	err = Generate(p, 1, func(e *trace.Event) error {
		switch e.Kind {
		case trace.KindStage:
			stages = append(stages, e.Stage.To)
		case trace.KindToolResult:
			calls++
			if e.Tool != "read_file" && e.Tool != "bash" {
				t.Errorf("%s: tool %s, the file allows only read_file and bash", e.ID, e.Tool)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stages, []string{"implement"}) || calls != 10 {
		t.Errorf("stages %v with %d calls, want [implement] with 20×0.5 = 10", stages, calls)
	}
}

// TestScale checks that scale multiplies the work: tool calls and user turns
// (token totals follow, but with log-normal sizes they are noisy at a
// quarter of the default run).
func TestScale(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			work := func(scale string) int {
				n := 0
				for _, e := range must(run(t, name, 1, "scale = "+scale)) {
					if e.Kind == trace.KindToolResult || e.Kind == trace.KindUser || e.Kind == trace.KindContextOp {
						n++
					}
				}
				return n
			}
			small, big := work("0.5"), work("2")
			if r := float64(big) / float64(small); r < 3.2 || r > 4.8 {
				t.Errorf("scale 2 gives %d calls and turns, scale 0.5 gives %d: ratio %.2f, want about 4", big, small, r)
			}
		})
	}
}

func TestSystemPrompt(t *testing.T) {
	for _, tc := range []struct {
		workload string
		tools    []string
	}{
		{"coder", []string{"bash", "edit_file", "grep", "list_dir", "read_file", "write_file"}},
		{"researcher", []string{"read_file", "web_fetch", "web_search", "write_file"}},
		{"chat", nil},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			for _, e := range must(run(t, tc.workload, 1, "")) {
				if e.Kind == trace.KindSystem {
					t.Fatalf("%s: a system event with system_bytes = 0", e.ID)
				}
			}
			evs := must(run(t, tc.workload, 1, "system_bytes = 6000"))
			sys := evs[1]
			if evs[0].Kind != trace.KindTask || sys.Kind != trace.KindSystem {
				t.Fatalf("events start %s, %s; want task, system", evs[0].Kind, sys.Kind)
			}
			if n := len(sys.Text); n < 6000 || n > 6200 {
				t.Errorf("system prompt is %d bytes, want about 6000", n)
			}
			for _, name := range []string{"read_file", "list_dir", "grep", "edit_file", "write_file", "bash", "web_search", "web_fetch"} {
				has := strings.Contains(sys.Text, `"name":"`+name+`"`)
				if want := slices.Contains(tc.tools, name); has != want {
					t.Errorf("schema of %s in the prompt: %v, want %v", name, has, want)
				}
			}
		})
	}
}

func TestFailedCalls(t *testing.T) {
	t.Run("all fail", func(t *testing.T) {
		for _, e := range must(run(t, "coder", 1, "error_share = 1\nscale = 0.2")) {
			if e.Kind == trace.KindToolResult && (!e.IsError || len(e.Facts) > 0 || len(e.Text) > 200) {
				t.Errorf("%s: is_error %v, %d facts, %d bytes: want a short error and no facts", e.ID, e.IsError, len(e.Facts), len(e.Text))
			}
		}
	})
	t.Run("default", func(t *testing.T) {
		n := 0
		for _, e := range must(run(t, "coder", 1, "")) {
			if e.IsError {
				n++
			}
		}
		if n == 0 {
			t.Error("no failed calls at error_share 0.03 over 100+ calls")
		}
	})
}

// TestParallelCalls checks batched turns: every call of an assistant turn
// gets its result, in order, before the next turn, never earlier than the
// turn itself.
func TestParallelCalls(t *testing.T) {
	evs := must(run(t, "researcher", 1, ""))
	batches := 0
	for i, e := range evs {
		if e.Kind != trace.KindAssistant || len(e.ToolCalls) == 0 {
			continue
		}
		if len(e.ToolCalls) > 1 {
			batches++
		}
		for j, c := range e.ToolCalls {
			r := evs[i+1+j]
			if r.Kind != trace.KindToolResult || r.CallID != c.ID || r.Tool != c.Name || r.T < e.T {
				t.Fatalf("%s: call %d (%s) answered by %s %s %q at %v", e.ID, j, c.ID, r.Kind, r.ID, r.CallID, r.T)
			}
		}
	}
	if batches == 0 {
		t.Error("no turn with parallel calls")
	}
}

func TestElide(t *testing.T) {
	evs := must(run(t, "log-analyzer", 1, "elide_over_bytes = 20000"))
	elided := 0
	for _, e := range evs {
		if e.Size > 0 {
			elided++
			if e.Text != "" || e.Size <= 20000 || e.Kind != trace.KindToolResult {
				t.Errorf("%s: elided %s with text %d bytes, size %d", e.ID, e.Kind, len(e.Text), e.Size)
			}
		}
		if e.Kind == trace.KindToolResult && len(e.Text) > 20000 {
			t.Errorf("%s: %d bytes of text, over elide_over_bytes", e.ID, len(e.Text))
		}
	}
	if elided == 0 {
		t.Fatal("nothing elided")
	}
}

func TestBadParams(t *testing.T) {
	for _, tc := range []struct {
		name, workload, src string
		line                int
		want                string
	}{
		{"unknown key", "coder", "scale = 1\n\n[repo]\nfiles = 3\nfilez = 4\n", 5, "repo.filez: unknown key"},
		{"unknown key in inline table", "coder", "[repo]\nfile_bytes = { median = 5, sigmaa = 1 }\n", 2, "repo.file_bytes.sigmaa: unknown key"},
		{"unknown top-level table", "chat", "turns = 3\n[probez]\nevery = 1\n", 2, "probez"},
		{"wrong type", "chat", "turns = \"many\"\n", 1, "turns"},
		{"syntax", "needle", "total_tokens = 5\nuser_every = = 3\n", 2, "user_every"},
		{"negative scale", "researcher", "# comment\nscale = -1\n", 2, "scale: -1: want a number in (0, 1000]"},
		{"bad median", "coder", "[latency_seconds]\nbash = { median = 0, sigma = 1, min = 0, max = 5 }\n", 2, "latency_seconds.bash.median"},
		{"unclamped size", "coder", "[repo]\nfile_bytes = { median = 5, sigma = 1, min = 1, max = 0 }\n", 2, "repo.file_bytes.max"},
		{"tool the workload does not model", "coder", "[[stages]]\nname = \"x\"\nsteps = 2\ntools = { web_fetch = 1 }\n", 4, "stages[0].tools.web_fetch: this workload does not model tool \"web_fetch\""},
		{"second stage", "coder", "[[stages]]\nname = \"x\"\nsteps = 2\ntools = { bash = 1 }\n\n[[stages]]\nname = \"y\"\nsteps = 2\ntools = { bash = -1 }\n", 9, "stages[1].tools.bash: weight -1"},
		{"bad op", "log-analyzer", "[[stages]]\nname = \"x\"\nsteps = 1\ntools = { bash = 1 }\nops = [{ tool = \"context_read\", region = \"r\" }]\n", 5, "stages[0].ops[0].tool"},
		{"workload mismatch", "chat", "workload = \"coder\"\n", 1, "workload: \"coder\", but the file is read as workload \"chat\""},
		{"depth beyond total", "needle", "total_tokens = 100\ndepths_tokens = [5, 500]\n", 2, "depths_tokens[1] = 500"},
		{"giant share", "burst", "[giant]\nshare = 0\n", 2, "giant.share"},
		{"errors in chat", "chat", "error_share = 0.1\n", 1, "chat makes no tool calls"},
		{"parallel share", "coder", "[[stages]]\nname = \"x\"\nsteps = 2\ntools = { bash = 1 }\nparallel_share = 2\n", 5, "stages[0].parallel_share: 2: want a share in [0, 1]"},
		{"no workload", "", "scale = 2\n", 1, "workload: missing"},
		{"workload not a string", "", "scale = 2\nworkload = 5\n", 2, "workload: 5: want a workload name as a string"},
		{"unknown key suggests", "chat", "turns = 3\nturn = 4\n", 2, `turn: unknown key (did you mean "turns"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.workload, []byte(tc.src), "mine.toml")
			if err == nil {
				t.Fatal("no error")
			}
			var pe *ParamsError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %q, want *ParamsError", err, err)
			}
			if pe.File != "mine.toml" || pe.Line != tc.line {
				t.Errorf("at %s:%d, want mine.toml:%d (%v)", pe.File, pe.Line, tc.line, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
	t.Run("unknown workload", func(t *testing.T) {
		_, err := Parse("coderr", nil, "")
		if err == nil || !strings.Contains(err.Error(), `unknown workload "coderr" (want one of burst, chat, coder`) {
			t.Errorf("error %v", err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		if _, err := Load("coder", filepath.Join(t.TempDir(), "nope.toml")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("error %v, want one that is os.ErrNotExist", err)
		}
	})
}

// TestDefaultsDocumented checks that every default file decodes strictly on
// its own and sets every key, so it is a complete template for a user.
func TestDefaultsDocumented(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			data, err := Defaults(name)
			if err != nil {
				t.Fatal(err)
			}
			p := workloads[name]()
			md, err := toml.Decode(string(data), p)
			if err != nil {
				t.Fatal(err)
			}
			if u := md.Undecoded(); len(u) > 0 {
				t.Errorf("undecoded keys %v", u)
			}
			var enc bytes.Buffer
			if err := toml.NewEncoder(&enc).Encode(p); err != nil {
				t.Fatal(err)
			}
			var all map[string]any
			if _, err := toml.Decode(enc.String(), &all); err != nil {
				t.Fatal(err)
			}
			for _, k := range slices.Sorted(maps.Keys(all)) {
				if !md.IsDefined(k) {
					t.Errorf("default file does not set %q", k)
				}
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range Names() {
		data, err := Defaults(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(name, string(data))
	}
	f.Add("coder", "[repo]\nfiles = 0\n")
	f.Add("needle", "depths_tokens = []\n")
	f.Add("", "workload = \"chat\"\nturns = 2\n")
	f.Add("burst", "[[stages]]\nname = \"a\"\nfan_out = { region = \"r\", workers = 1, result_bytes = { median = 1, max = 2 } }\n")
	f.Add("chat", "scale = nan\n")
	for _, name := range Names() { // small enough to generate in full
		f.Add(name, "scale = 0.01\n")
	}
	f.Fuzz(func(t *testing.T, name, src string) {
		p, err := Parse(name, []byte(src), "fuzz.toml")
		if err != nil {
			var pe *ParamsError
			if !errors.As(err, &pe) && !strings.HasPrefix(err.Error(), "unknown workload") {
				t.Fatalf("error %T %v is neither a *ParamsError nor an unknown workload", err, err)
			}
			return
		}
		if err := p.validate(); err != nil {
			t.Fatalf("parsed params fail validation: %v", err)
		}
		// Generate small runs fully: they must never fail or panic.
		if p.base().Scale <= 0.05 {
			if err := Generate(p, 1, func(*trace.Event) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func BenchmarkGenerate(b *testing.B) {
	for _, name := range Names() {
		b.Run("workload="+name, func(b *testing.B) {
			p, err := Parse(name, nil, "")
			if err != nil {
				b.Fatal(err)
			}
			var events, size int
			count := func(e *trace.Event) error {
				events++
				size += e.Bytes()
				for _, c := range e.ToolCalls {
					size += len(c.Args)
				}
				return nil
			}
			if err := Generate(p, 1, count); err != nil {
				b.Fatal(err)
			}
			perRun := events
			b.SetBytes(int64(size))
			b.ResetTimer()
			for b.Loop() {
				if err := Generate(p, 1, func(*trace.Event) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(perRun)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func ExampleParse() {
	// A user's file sets only what it changes; a typo is an error with its
	// position rather than a silently ignored key.
	_, err := Parse("", []byte("workload = \"coder\"\nscale = 2\n\n[repo]\nfils = 40\n"), "mine.toml")
	fmt.Println(err)
	// Output: mine.toml:5: repo.fils: unknown key (did you mean "files"? want one of files, file_bytes, facts_per_file, reread_share, grep_matches, test_lines, fail_share, write_bytes)
}

func ExampleGenerate() {
	p, err := Parse("burst", []byte("scale = 0.5\n"), "")
	if err != nil {
		fmt.Println(err)
		return
	}
	kinds := map[trace.Kind]int{}
	err = Generate(p, 1, func(e *trace.Event) error {
		kinds[e.Kind]++
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(Header(p, 1).Source, "task:", kinds[trace.KindTask], "stages:", kinds[trace.KindStage], "has probes:", kinds[trace.KindProbe] > 0)
	// Output: synthetic:burst task: 1 stages: 5 has probes: true
}

// TestPlantEnds checks that a fact template with a single text still gives
// distinct facts: plant must end, or a long run would hang.
func TestPlantEnds(t *testing.T) {
	g := &gen{used: map[string]bool{}, known: map[string]bool{}}
	seen := map[string]bool{}
	for range 5 {
		f := g.plant(func(int) string { return "the deploy key rotates on Thursdays" })
		if seen[f.Text] || !strings.HasPrefix(f.Text, "the deploy key rotates on Thursdays") {
			t.Fatalf("fact %q: repeated or not from the template", f.Text)
		}
		seen[f.Text] = true
	}
}

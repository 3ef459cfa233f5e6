package main

import (
	"encoding/json"
	"github.com/ctxsim/ctxsim/workloads"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runJSON(t *testing.T, args ...string) runOutput {
	t.Helper()
	out, errs, code := runCmd(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("ctxsim %v: exit %d: %s", args, code, errs)
	}
	var o runOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return o
}

func TestRunNeedle(t *testing.T) {
	flat := runJSON(t, "run", "--workload", "needle", "--policy", "flat", "--window", "8192")
	unb := runJSON(t, "run", "--workload", "needle", "--policy", "unbounded", "--window", "8192")
	fr, ur := flat.Metrics.Get("fact_recall_pct"), unb.Metrics.Get("fact_recall_pct")
	if ur != 100 {
		t.Errorf("unbounded fact recall %v, want 100", ur)
	}
	if fr == ur {
		t.Errorf("flat and unbounded recall the same (%v) at 8K", fr)
	}
	if flat.Workload != "needle" || flat.Policy != "flat" || flat.Window != 8192 || flat.Model == "" || flat.Seed != 1 {
		t.Errorf("header fields %+v", flat)
	}
}

func TestRunDeterministicJSON(t *testing.T) {
	a, _, _ := runCmd(t, "run", "--workload", "needle", "--policy", "flat-compact", "--window", "32768", "--seed", "9", "--format", "json")
	b, _, _ := runCmd(t, "run", "--workload", "needle", "--policy", "flat-compact", "--window", "32768", "--seed", "9", "--format", "json")
	if a != b || a == "" {
		t.Errorf("same seed, different output:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, `"metrics": {`) || !strings.Contains(a, `"task_retained_pct"`) {
		t.Errorf("JSON shape:\n%s", a)
	}
}

func TestRunText(t *testing.T) {
	out, _, code := runCmd(t, "run", "--workload", "needle", "--policy", "clairvoyant", "--window", "16384")
	if code != 0 || !strings.Contains(out, "fact_recall_pct") || !strings.Contains(out, "policy clairvoyant") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

func TestRunTraceFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	data := `{"schema":"ctxsim-trace","version":1,"source":"test","workload":"tiny"}
{"kind":"task","id":"t","t":0,"text":"Fix it."}
{"kind":"assistant","id":"a","t":1,"text":"Done."}
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	o := runJSON(t, "run", "--trace", path, "--policy", "flat", "--model", "gpt-5.5")
	if o.Workload != "tiny" || o.Metrics.Get("requests") != 1 || o.Window != 272000 {
		t.Errorf("got %+v", o)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(data+`{"kind":"nope","id":"x","t":2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCmd(t, "run", "--trace", bad, "--policy", "flat")
	if code != 1 || !strings.Contains(errs, "bad.jsonl:4") {
		t.Errorf("exit %d, stderr %q: want 1 and the file:line", code, errs)
	}
}

func TestRunUsage(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		code    int
		mention string
	}{
		{"no source", []string{"run", "--policy", "flat"}, 2, "--trace FILE or --workload"},
		{"both sources", []string{"run", "--trace", "x", "--workload", "needle", "--policy", "flat"}, 2, "exactly one"},
		{"no policy", []string{"run", "--workload", "needle"}, 2, "--policy"},
		{"bad policy", []string{"run", "--workload", "needle", "--policy", "lru"}, 2, "--policy"},
		{"bad parameter", []string{"run", "--workload", "needle", "--policy", "flat-compact(thresh=1)"}, 2, "thresh"},
		{"bad model", []string{"run", "--workload", "needle", "--policy", "flat", "--model", "gpt-2"}, 2, "--model"},
		{"bad workload", []string{"run", "--workload", "haystack", "--policy", "flat"}, 2, "--workload"},
		{"params without workload", []string{"run", "--trace", "x", "--params", "p.toml", "--policy", "flat"}, 2, "--params needs --workload"},
		{"missing params file", []string{"run", "--workload", "coder", "--params", "/nonexistent.toml", "--policy", "flat"}, 1, "nonexistent.toml"},
		{"bad format", []string{"run", "--workload", "needle", "--policy", "flat", "--format", "xml"}, 2, "--format"},
		{"bad window", []string{"run", "--workload", "needle", "--policy", "flat", "--window", "-5"}, 2, "--window"},
		{"unknown flag", []string{"run", "--colour"}, 2, "colour"},
		{"missing trace", []string{"run", "--trace", "/nonexistent.jsonl", "--policy", "flat"}, 1, "--trace"},
		{"missing models file", []string{"run", "--workload", "needle", "--policy", "flat", "--models", "/nonexistent.toml"}, 1, "--models"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCmd(t, c.args...)
			if code != c.code || !strings.Contains(errs, c.mention) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, c.code, c.mention)
			}
		})
	}
}

func TestModels(t *testing.T) {
	out, _, code := runCmd(t, "models")
	if code != 0 || !strings.Contains(out, "claude-opus-5") || !strings.Contains(out, "gemini-1.5-pro") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	out, _, code = runCmd(t, "models", "--format", "json")
	var ps []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &ps) != nil || len(ps) < 10 {
		t.Errorf("json: exit %d:\n%s", code, out)
	}
	dir := t.TempDir()
	extra := filepath.Join(dir, "m.toml")
	os.WriteFile(extra, []byte("[[model]]\nname=\"mine\"\nwindow=4096\ntokenizer=\"bytes/4\"\ncache=\"none\"\nprefill_tps=1\ndecode_tps=1\n"), 0o644)
	out, _, code = runCmd(t, "models", "--models", extra)
	if code != 0 || !strings.Contains(out, "mine") {
		t.Errorf("extra: exit %d:\n%s", code, out)
	}
	o := runJSON(t, "run", "--workload", "needle", "--policy", "unbounded", "--model", "mine", "--models", extra)
	if o.Model != "mine" || o.Window != 4096 {
		t.Errorf("run with a user profile: %+v", o)
	}
	if _, errs, code := runCmd(t, "models", "extra"); code != 2 || !strings.Contains(errs, "unexpected") {
		t.Errorf("exit %d %q", code, errs)
	}
}

func TestRunSeries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "series.csv")
	o := runJSON(t, "run", "--workload", "needle", "--policy", "regions:coder", "--window", "32768", "--series", path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if lines[0] != "request,time_s,request_tokens,stable_tokens,cache_read_tokens,regions" {
		t.Errorf("header %q", lines[0])
	}
	if got := len(lines) - 1; float64(got) != o.Metrics.Get("requests") {
		t.Errorf("%d rows, want one per request (%v)", got, o.Metrics.Get("requests"))
	}
	if !strings.Contains(lines[len(lines)-1], "conversation=") {
		t.Errorf("last row %q has no region occupancy", lines[len(lines)-1])
	}
	if _, errs, code := runCmd(t, "run", "--workload", "needle", "--policy", "flat", "--series", "/nonexistent/dir/s.csv"); code != 1 || !strings.Contains(errs, "--series") {
		t.Errorf("exit %d, %q", code, errs)
	}
}

// Every synthetic generator of the workloads package runs through the command,
// and a user's parameter file changes the run.
func TestRunEveryWorkload(t *testing.T) {
	for _, w := range workloads.Names() {
		t.Run(w, func(t *testing.T) {
			o := runJSON(t, "run", "--workload", w, "--policy", "flat", "--window", "16384")
			if o.Workload == "" || o.Metrics.Get("requests") <= 0 {
				t.Errorf("workload %s: %+v, want a named run with requests", w, o)
			}
		})
	}
	params := filepath.Join(t.TempDir(), "chat.toml")
	if err := os.WriteFile(params, []byte("scale = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	def := runJSON(t, "run", "--workload", "chat", "--policy", "unbounded")
	big := runJSON(t, "run", "--workload", "chat", "--params", params, "--policy", "unbounded")
	if big.Metrics.Get("requests") <= def.Metrics.Get("requests") {
		t.Errorf("scale = 2 gave %v requests, default %v: want more", big.Metrics.Get("requests"), def.Metrics.Get("requests"))
	}
}

// A region layout's run says where its dead tokens were; the parts add up to
// waste_dead_pct of the input. A flat run has no such split.
func TestRunDeadByRegion(t *testing.T) {
	o := runJSON(t, "run", "--workload", "coder", "--policy", "regions:coder", "--window", "32768")
	sum := 0
	for _, d := range o.DeadByRegion {
		sum += d.Tokens
	}
	dead := o.Metrics.Get("waste_dead_pct") * o.Metrics.Get("input_tokens") / 100
	if len(o.DeadByRegion) < 2 || float64(sum) < dead-0.5 || float64(sum) > dead+0.5 {
		t.Errorf("dead_by_region %v sums to %d, dead tokens %.1f", o.DeadByRegion, sum, dead)
	}
	if f := runJSON(t, "run", "--workload", "coder", "--policy", "flat", "--window", "32768"); f.DeadByRegion != nil {
		t.Errorf("flat: dead_by_region %v", f.DeadByRegion)
	}
	out, _, _ := runCmd(t, "run", "--workload", "coder", "--policy", "regions:coder", "--window", "32768")
	if !strings.Contains(out, "dead tokens by region:") || !strings.Contains(out, "conversation") {
		t.Errorf("text output lacks the split:\n%s", out)
	}
}

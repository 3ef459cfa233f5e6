package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSeeds(t *testing.T) {
	work := filepath.Join(t.TempDir(), "work")
	for name, body := range map[string]string{
		"README.md":        "# Project\nread me",
		"src/a.rs":         "fn a() {}",
		"src/deep/b.rs":    "fn b() {}",
		"src/c.go":         "package c",
		"notes/huge.txt":   strings.Repeat("h", 4000),
		"seeds/plan.rhai":  "\"the plan\"",
		"../outside.txt":   "secret",
		"src/deep/skip.md": "no",
	} {
		p := filepath.Join(work, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := func(regions string, opt Options) (*Context, error) {
		bp := mustParse(t, "[agent]\n[context.regions]\n"+regions)
		opt.Window = 100_000
		opt.WorkDir = work
		return New(bp, opt)
	}
	cases := []struct {
		name, region string
		opt          Options
		want         string
	}{
		{"task_input", `task = { kind = "pinned" }`, Options{Task: "do it"}, "do it"},
		{"input names the caller key after the region", `standards = { kind = "pinned", seed = "input" }`, Options{Inputs: map[string]string{"standards": "be kind"}}, "be kind"},
		{"a bare string names a caller key", `brief = { kind = "pinned", seed = "diff" }`, Options{Inputs: map[string]string{"diff": "+x"}}, "+x"},
		{"caller table", `brief = { kind = "pinned", seed = { caller = "brief" } }`, Options{Inputs: map[string]string{"brief": "from the parent"}}, "from the parent"},
		{"files with headers", `readme = { kind = "pinned", seed = { files = ["README.md", "missing.md"] } }`, Options{}, "--- README.md ---\n# Project\nread me"},
		{"glob with **", `layout = { seed = { glob = "src/**/*.rs" } }`, Options{}, "--- src/a.rs ---\nfn a() {}\n\n--- src/deep/b.rs ---\nfn b() {}"},
		{"literal", `rules = { kind = "pinned", seed = { literal = "Never edit generated files." } }`, Options{}, "Never edit generated files."},
		{"command refused unless allowed", `env = { kind = "pinned", seed = { command = "echo hi" } }`, Options{}, ""},
		{"command allowed", `env = { kind = "pinned", seed = { command = "echo hi" } }`, Options{AllowCommandSeeds: true}, "hi\n"},
		{"trimmed to the budget with the marker", `big = { max_tokens = 100, seed = { files = ["notes/huge.txt"] } }`, Options{}, strings.Repeat("h", 396-len(seedTruncMarker)-len("--- notes/huge.txt ---\n")) + seedTruncMarker},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, err := build(c.region+"\n", c.opt)
			if err != nil {
				t.Fatal(err)
			}
			name := ctx.bp.RegionDefs[0].Name
			got, _ := ctx.RegionText(name)
			if !strings.HasSuffix(got, c.want) || (c.want == "" && got != "") {
				t.Fatalf("region %s = %q\nwant %q", name, got, c.want)
			}
			if c.name == "trimmed to the budget with the marker" && len(got) != 396 {
				t.Fatalf("trimmed to %d bytes, want (100-1)*4 = 396", len(got))
			}
		})
	}
	for _, bad := range []string{
		`x = { seed = { files = ["../outside.txt"] } }`,
		`x = { seed = { files = ["/etc/passwd"] } }`,
		`x = { seed = { glob = "../*.txt" } }`,
		`x = { seed = { rhai = "../plan.rhai" } }`,
	} {
		t.Run("paths stay in the working directory: "+bad, func(t *testing.T) {
			if _, err := build(bad+"\n", Options{}); err == nil || !strings.Contains(err.Error(), "leaves the working directory") {
				t.Fatalf("err %v", err)
			}
		})
	}
	t.Run("rhai seeds run through the script engine", func(t *testing.T) {
		ctx, err := build("plan = { seed = { rhai = \"seeds/plan.rhai\" } }\n", Options{Scripts: seedScripts{}})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := ctx.RegionText("plan"); got != "evaluated seeds/plan.rhai: \"the plan\"" {
			t.Fatalf("%q", got)
		}
	})
	t.Run("the seed trim keeps the marker only when it fits", func(t *testing.T) {
		if got := trimSeed(strings.Repeat("x", 100), 5); got != "" {
			t.Fatalf("%q", got)
		}
		if got := trimSeed("short", 5); got != "short" {
			t.Fatalf("%q", got)
		}
	})
}

type seedScripts struct{}

func (seedScripts) Compile(string, []byte) (RegionScript, error) { return nil, nil }
func (seedScripts) EvalSeed(path string, src []byte) (string, error) {
	return "evaluated " + path + ": " + string(src), nil
}

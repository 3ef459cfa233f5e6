package engine

import (
	"path/filepath"
	"strings"
	"testing"
)

const realBlueprints = "../../shared/blueprints/leviath"

func realBlueprintPaths(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(realBlueprints, "*.leviath"))
	if err != nil || len(paths) != 5 {
		t.Fatalf("want the 5 real blueprints in %s, got %v (%v)", realBlueprints, paths, err)
	}
	return paths
}

func TestRealBlueprintsLoadAndValidate(t *testing.T) {
	for _, path := range realBlueprintPaths(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			bp, err := LoadBlueprint(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(bp.Stages()) == 0 || len(bp.RegionDefs) == 0 {
				t.Fatalf("no stages or regions: %v", bp.Stages())
			}
			for _, w := range []int{32768, 128000, 200000, 1048576} {
				if rep := bp.Validate(w); !rep.OK() {
					t.Errorf("window %d: %v", w, rep.Errors)
				}
			}
		})
	}
}

func mustParse(t testing.TB, src string) *Blueprint {
	t.Helper()
	bp, err := ParseBlueprint("test.leviath", []byte(src), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bp
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"unknown kind is refused", "[agent]\n[context.regions]\ntest = { kind = \"cusotm\" }\n", `region 'test': unknown kind "cusotm" (valid kinds:`},
		{"per-item strategy is refused", "[agent]\n[context.regions]\nc = { kind = \"sliding_window\", strategy = \"per-item\" }\n", `strategy "per-item" is not valid (valid: per_item, bulk, compact)`},
		{"budget without percent", "[agent]\n[context.regions]\na = { budget = \"lots\" }\n", `budget 'lots' must end with '%' (e.g. "35%")`},
		{"budget not a number", "[agent]\n[context.regions]\na = { budget = \"abc%\" }\n", `budget 'abc%' is not a valid number`},
		{"budget out of range", "[agent]\n[context.regions]\na = { budget = \"150%\" }\n", `must be greater than 0% and at most 100%`},
		{"compact_at malformed", "[agent]\n[context.regions]\na = { kind = \"compacting\", compact_at = \"80\" }\n", `budget '80' must end with '%'`},
		{"custom without script", "[agent]\n[context.regions]\nb = { kind = \"custom\" }\n", `region 'b': kind = "custom" requires script = "<path>.rhai"`},
		{"custom script outside folder", "[agent]\n[context.regions]\nb = { kind = \"custom\", script = \"../x.rhai\" }\n", `must stay inside the blueprint folder`},
		{"custom script missing", "[agent]\n[context.regions]\nb = { kind = \"custom\", script = \"hooks/b.rhai\" }\n", `cannot read custom region script 'hooks/b.rhai'`},
		{"bad admission", "[agent]\n[context.regions]\ns = { admission = \"maybe\" }\n", `region 's' has admission = "maybe"; expected "evict" or "reject"`},
		{"bad volatility", "[agent]\n[context.regions]\ns = { volatility = \"fast\" }\n", `expected "stable", "grows" or "rewritten"`},
		{"wrong type", "[agent]\n[context.regions]\ns = { max_items = \"ten\" }\n", `max_items must be an integer, not a string`},
		{"routing unknown key", "[agent]\n[stages.x.tool_routing]\nfoo = 1\n", `stage 'x': tool_routing has unknown key 'foo' (valid: default_region, max_result_tokens, max_result_tokens_per_tool, overrides, persist)`},
		{"override wrong type", "[agent]\n[stages.x.tool_routing.overrides]\nread_file = 3\n", `stage 'x': tool_routing.overrides.read_file must be a region name or a table of { region, max_result_tokens }, not an integer`},
		{"override empty", "[agent]\n[stages.x.tool_routing.overrides]\nread_file = {}\n", `is empty (set region, max_result_tokens, or both)`},
		{"override negative cap", "[agent]\n[stages.x.tool_routing.overrides]\nread_file = { max_result_tokens = -1 }\n", `max_result_tokens must not be negative (got -1)`},
		{"per-tool cap not int", "[agent]\n[stages.x.tool_routing.max_result_tokens_per_tool]\nread_file = \"x\"\n", `stage 'x': tool_routing.max_result_tokens_per_tool.read_file must be a number`},
		{"unknown transform", "[agent]\n[stages.x.transitions.y]\ntransform = \"squash\"\n", `transition to 'y' has unknown transform 'squash' (valid: direct, clear, compact, summarize, custom)`},
		{"stage context unknown key", "[agent]\n[stages.x.context]\nregionz = {}\n", `stage 'x': context has unknown key 'regionz' (valid: regions)`},
		{"missing agent", "[context.regions]\n", `missing [agent] section`},
		{"invalid toml names line", "[agent]\nname = \n", `test.leviath:2: invalid TOML`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBlueprint("test.leviath", []byte(c.src), t.TempDir())
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "test.leviath") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateCustomRegionScripts: a custom region's script that does not
// compile, or has no fn render(ctx), fails validate with the spawn error's
// text (ENGINE.md §9.2); a good one passes.
func TestValidateCustomRegionScripts(t *testing.T) {
	cases := []struct {
		name, script, want string
	}{
		{name: "good", script: "fn render(ctx) { \"\" }"},
		{name: "syntax error", script: "fn render(ctx) {\n  let = 1;\n}", want: "ERROR region 'brain': custom region script failed to compile: hooks/brain.rhai: expected a name after 'let', found '=' (line 2, column 7)"},
		{name: "no render", script: "fn on_write(ctx) { true }", want: "ERROR region 'brain': custom region script failed to compile: hooks/brain.rhai: script must define fn render(ctx)"},
		{name: "render arity", script: "fn render() { \"\" }", want: "fn render must take exactly one parameter (ctx), found 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "hooks"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "hooks", "brain.rhai"), []byte(tc.script), 0o644); err != nil {
				t.Fatal(err)
			}
			bp := filepath.Join(dir, "agent.leviath")
			decl := "[agent]\nname = \"x\"\n[context.regions]\nbrain = { kind = \"custom\", script = \"hooks/brain.rhai\", max_tokens = 1000 }\n"
			if err := os.WriteFile(bp, []byte(decl), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			err := run(context.Background(), []string{"validate", "--window", "200000", bp}, &out, &errOut)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%v\n%s", err, out.String())
				}
				return
			}
			if !errors.Is(err, errSilent) || !strings.Contains(out.String(), tc.want) {
				t.Fatalf("err = %v, output:\n%s\nwant %q", err, out.String(), tc.want)
			}
		})
	}
}

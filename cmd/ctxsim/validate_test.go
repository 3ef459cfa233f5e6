package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func realBlueprintFiles(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../../../shared/blueprints/leviath/*.leviath")
	if err != nil || len(paths) != 5 {
		t.Fatalf("want 5 blueprints, got %v (%v)", paths, err)
	}
	return paths
}

func TestValidateRealBlueprints(t *testing.T) {
	args := append([]string{"validate", "--window", "32768,128000,200000,1048576", "--format", "json"}, realBlueprintFiles(t)...)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	dec := json.NewDecoder(&out)
	files := 0
	for dec.More() {
		var f validateFile
		if err := dec.Decode(&f); err != nil {
			t.Fatal(err)
		}
		files++
		if len(f.Windows) != 4 {
			t.Fatalf("%s: %d windows", f.File, len(f.Windows))
		}
		for _, w := range f.Windows {
			if len(w.Errors) != 0 {
				t.Errorf("%s @ %d: %v", f.File, w.Window, w.Errors)
			}
			for _, r := range w.Regions {
				if (r.Kind == "compacting") != (r.ThresholdTokens != nil) {
					t.Errorf("%s: region %s (%s) threshold %v", f.File, r.Name, r.Kind, r.ThresholdTokens)
				}
			}
		}
	}
	if files != 5 {
		t.Fatalf("%d files in the output", files)
	}
}

func TestValidateExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.leviath", "[agent]\n[context.regions]\ntask = { kind = \"pinned\", budget = \"2%\" }\n")
	tight := write("tight.leviath", "[agent]\n[context.regions]\ntask = { kind = \"pinned\", budget = \"95%\" }\n")
	broken := write("broken.leviath", "[agent]\n[context.regions]\nc = { kind = \"sliding_window\", strategy = \"per-item\" }\n")
	syntax := write("syntax.leviath", "[agent]\nname = \n")
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"clean blueprint exits 0", []string{"validate", "--window", "200000", good}, 0, "ok"},
		{"layout error exits 1", []string{"validate", "--window", "100000", tight}, 1, "error[working-room]"},
		{"parse error names the file and region", []string{"validate", broken}, 1, `broken.leviath:3: context.regions.c.strategy: region 'c': strategy "per-item" is not valid`},
		{"syntax error names the line", []string{"validate", syntax}, 1, "syntax.leviath:2: invalid TOML"},
		{"no files is bad usage", []string{"validate"}, 2, ""},
		{"bad window is bad usage", []string{"validate", "--window", "big", good}, 2, ""},
		{"bad format is bad usage", []string{"validate", "--format", "xml", good}, 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), c.args, &out, &errOut)
			code := exitCode(err, &errOut)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d (%v)\n%s%s", code, c.wantCode, err, out.String(), errOut.String())
			}
			if c.wantCode == 1 && !errors.Is(err, errSilent) {
				t.Errorf("error not reported as already printed: %v", err)
			}
			if !strings.Contains(out.String(), c.wantOut) {
				t.Fatalf("output lacks %q:\n%s", c.wantOut, out.String())
			}
		})
	}
}

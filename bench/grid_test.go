package bench

import (
	"errors"
	"strings"
	"testing"
)

func TestParseGridErrors(t *testing.T) {
	base := "models = [\"m\"]\nwindows = [\"8K\"]\nseeds = [1]\npolicies = [\"flat\"]\n"
	tests := []struct {
		name string
		toml string
		line int
		want string
	}{
		{"unknown top-level key", base + "sedes = [1]\n[[workload]]\nname = \"coder\"\n", 5, `sedes: unknown key (did you mean "seeds"?`},
		{"top-level key misplaced in a workload", base + "[[workload]]\nname = \"coder\"\nwindows = [\"8K\"]\n", 7, "workload.windows: unknown key (want one of name, policies)"},
		{"unknown workload key", base + "[[workload]]\nname = \"coder\"\npolices = [\"x\"]\n", 7, "workload.polices: unknown key"},
		{"unknown trace key", base + "[[trace]]\nname = \"t\"\ncut = \"t.jsonl\"\npath = \"x\"\n", 8, "trace.path: unknown key"},
		{"unknown figures key", base + "[figures]\nwindw = \"8K\"\n[[workload]]\nname = \"c\"\n", 6, "figures.windw: unknown key"},
		{"bad window", "models = [\"m\"]\nwindows = [\"8Q\"]\nseeds = [1]\n[[workload]]\nname = \"c\"\npolicies=[\"flat\"]\n", 2, `window "8Q"`},
		{"negative window", "models = [\"m\"]\nwindows = [-5]\nseeds = [1]\n[[workload]]\nname = \"c\"\npolicies=[\"flat\"]\n", 2, "window -5"},
		{"negative seed", "models = [\"m\"]\nwindows = [8000]\nseeds = [-1]\n[[workload]]\nname = \"c\"\npolicies=[\"flat\"]\n", 3, "seeds"},
		{"syntax error", base + "[[workload]\n", 6, "expected end of table array name"},
		{"no models", "windows = [\"8K\"]\nseeds = [1]\n[[workload]]\nname = \"c\"\npolicies=[\"flat\"]\n", 0, "models: want at least one"},
		{"no workloads", base, 0, "want at least one [[workload]]"},
		{"duplicate window", "models = [\"m\"]\nwindows = [\"8K\", 8000]\nseeds = [1]\n[[workload]]\nname = \"c\"\npolicies=[\"flat\"]\n", 2, "windows lists 8K twice"},
		{"duplicate workload", base + "[[workload]]\nname = \"c\"\n[[workload]]\nname = \"c\"\n", 8, `workload[1].name: workload "c" given twice`},
		{"trace without file or cut", base + "[[trace]]\nname = \"t\"\n", 5, "want file, cut or both"},
		{"trace file without format", base + "[[trace]]\nname = \"t\"\nfile = \"t.jsonl\"\n", 5, "want the importer format"},
		{"workload without policies", "models = [\"m\"]\nwindows = [\"8K\"]\nseeds = [1]\n[[workload]]\nname = \"c\"\n", 4, `workload "c": no policies`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseGrid([]byte(tt.toml), "g.toml")
			if err == nil {
				t.Fatal("no error")
			}
			var ge *GridError
			if !errors.As(err, &ge) {
				t.Fatalf("error %v is a %T, want *GridError", err, err)
			}
			if ge.File != "g.toml" {
				t.Errorf("file %q, want g.toml", ge.File)
			}
			if tt.line != 0 && ge.Line != tt.line {
				t.Errorf("line %d, want %d (error: %v)", ge.Line, tt.line, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestDefaultGrid(t *testing.T) {
	g := DefaultGrid()
	wantWindows := []string{"8K", "16K", "32K", "64K", "128K", "200K", "272K", "1M", "2M"}
	var got []string
	for _, w := range g.Windows {
		got = append(got, FormatWindow(int(w)))
	}
	if strings.Join(got, ",") != strings.Join(wantWindows, ",") {
		t.Errorf("windows %v, want %v", got, wantWindows)
	}
	if len(g.Seeds) != 3 {
		t.Errorf("%d seeds, want 3", len(g.Seeds))
	}
	synth := map[string]bool{}
	for _, w := range g.Workload {
		synth[w.Name] = true
	}
	for _, n := range []string{"coder", "researcher", "log-analyzer", "chat", "needle", "burst"} {
		if !synth[n] {
			t.Errorf("default grid lacks synthetic workload %s", n)
		}
	}
	if len(g.Trace) == 0 {
		t.Error("default grid has no recorded traces")
	}
	cells, err := g.Cells(ExpandOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pols := map[string]bool{}
	for _, c := range cells {
		pols[c.Policy] = true
		if c.Trace == "cut" && c.Seed != 0 {
			t.Errorf("recorded cell %s has seed %d, want 0", c, c.Seed)
		}
	}
	for _, p := range []string{"flat", "flat-keep-system", "flat-compact", "flat-clear-tools", "unbounded", "clairvoyant", "as-recorded", "regions:coder", "regions:deep-researcher", "regions:log-analyzer"} {
		if !pols[p] {
			t.Errorf("default grid never runs policy %s", p)
		}
	}
	full, err := g.Cells(ExpandOptions{TracesDir: "/traces"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range full {
		if c.Trace == "cut" {
			t.Fatalf("with a traces directory, cell %s still reads a cut", c)
		}
	}
}

func TestCellsOrderAndIDs(t *testing.T) {
	cells := smallCells()
	// 2 workloads; coder: 4 policies, chat: 5; × 3 windows × 2 seeds
	if want := (4 + 5) * 3 * 2; len(cells) != want {
		t.Fatalf("%d cells, want %d", len(cells), want)
	}
	ids := map[string]bool{}
	for _, c := range cells {
		id := c.ID()
		if ids[id] {
			t.Errorf("duplicate id %s", id)
		}
		ids[id] = true
		for _, r := range id {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r)) {
				t.Errorf("id %q has unsafe character %q", id, r)
			}
		}
	}
	if got, want := cells[0].ID(), smallCells()[0].ID(); got != want {
		t.Errorf("ids not stable: %s then %s", got, want)
	}
	// Only the figure window's first seed records series.
	for _, c := range cells {
		if want := c.WindowTokens == 64000 && c.Seed == 1; c.Series != want {
			t.Errorf("%s: series %v, want %v", c, c.Series, want)
		}
	}
	// Path is not identity: a full trace read from another directory keeps its id.
	a := Cell{Workload: "t", Trace: "full", Path: "/a/t.jsonl", Policy: "flat", Model: "m", WindowTokens: 8000}
	b := a
	b.Path = "/b/t.jsonl"
	if a.ID() != b.ID() {
		t.Error("a cell's id depends on its trace path")
	}
	c := a
	c.Policy = "flat:x"
	d := a
	d.Policy = "flat-x"
	if c.ID() == d.ID() {
		t.Error("policies differing only in an unsafe character share an id")
	}
}

func TestWindowRoundTrip(t *testing.T) {
	for _, s := range []string{"8K", "16K", "272K", "1M", "2M", "8192", "1500"} {
		n, err := ParseWindow(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got := FormatWindow(n); got != s {
			t.Errorf("FormatWindow(ParseWindow(%q)) = %q", s, got)
		}
	}
	for _, s := range []string{"", "K", "0", "-8K", "8KB", "1.5M", "99999999999999M"} {
		if _, err := ParseWindow(s); err == nil {
			t.Errorf("ParseWindow(%q): no error", s)
		}
	}
}

func FuzzParseGrid(f *testing.F) {
	f.Add([]byte(smallGrid))
	f.Add(DefaultGridSource())
	f.Add([]byte("models = [\"m\"]\nwindows = [\"8K\"]\nseeds = [1]\n[[trace]]\nname=\"t\"\ncut=\"x\"\npolicies=[\"flat\"]\n"))
	f.Add([]byte("windows = [1, \"2K\"]\n[figures]\nwindow = 5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGrid(data, "fuzz.toml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		cells, err := g.Cells(ExpandOptions{TracesDir: "/t"})
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, c := range cells {
			if seen[c.ID()] {
				t.Fatalf("duplicate cell %s", c)
			}
			seen[c.ID()] = true
		}
	})
}

func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"8K", "1M", "128000", "0", "-1", "1e3", "K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseWindow(s)
		if err != nil {
			return
		}
		if n <= 0 {
			t.Fatalf("ParseWindow(%q) = %d", s, n)
		}
		m, err := ParseWindow(FormatWindow(n))
		if err != nil || m != n {
			t.Fatalf("round trip of %d: %d, %v", n, m, err)
		}
	})
}

func TestTracePaths(t *testing.T) {
	src := "models = [\"m\"]\nwindows = [\"8K\"]\nseeds = [1, 2]\npolicies = [\"flat\"]\n" +
		"[[trace]]\nname = \"rel\"\nformat = \"claude-code\"\nfile = \"rel.jsonl\"\n" +
		"[[trace]]\nname = \"abs\"\nformat = \"aider\"\nfile = \"/data/abs.md\"\n" +
		"[[trace]]\nname = \"both\"\nformat = \"claude-code\"\nfile = \"both.jsonl\"\ncut = \"both.cut.jsonl\"\n"
	g, err := LoadGrid([]byte(src), "/grids/g.toml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opt  ExpandOptions
		want map[string]string // workload -> trace kind and path
	}{
		{"grid directory", ExpandOptions{}, map[string]string{"rel": "full /grids/rel.jsonl", "abs": "full /data/abs.md", "both": "cut both.cut.jsonl"}},
		{"traces directory", ExpandOptions{TracesDir: "/t"}, map[string]string{"rel": "full /t/rel.jsonl", "abs": "full /data/abs.md", "both": "full /t/both.jsonl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells, err := g.Cells(tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(cells) != 3 {
				t.Fatalf("%d cells, want 3 (recorded traces run once, not per seed)", len(cells))
			}
			for _, c := range cells {
				if got := c.Trace + " " + c.Path; got != tt.want[c.Workload] {
					t.Errorf("%s: %q, want %q", c.Workload, got, tt.want[c.Workload])
				}
			}
		})
	}
}

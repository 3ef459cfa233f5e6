package tomlfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return fmt.Errorf("%q: want low or high", b)
	}
	return nil
}

type dist struct {
	Median float64 `toml:"median"`
	Sigma  float64 `toml:"sigma"`
}

type stage struct {
	Name  string         `toml:"name"`
	Steps int            `toml:"steps"`
	Tools map[string]int `toml:"tools"`
	Size  dist           `toml:"size"`
}

type common struct {
	Scale float64 `toml:"scale"`
}

type config struct {
	common
	Name    string              `toml:"name"`
	Windows []int               `toml:"windows"`
	Level   level               `toml:"level"`
	Repo    struct{ Files int } `toml:"repo"`
	Stages  []stage             `toml:"stages"`
	Extra   map[string]string   `toml:"extra"`
	Skipped int                 `toml:"-"`
	hidden  int
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		key       string
		want      string // the whole error text
		unknown   bool   // errors.Is(err, ErrUnknownKey)
	}{
		{name: "valid", src: "name = \"x\"\nscale = 2\n[repo]\nFiles = 3\n[[stages]]\nname = \"a\"\ntools = { bash = 1 }\n[extra]\nanything = \"goes\"\n"},
		{name: "typo at top", src: "name = \"x\"\nwindow = [1]\n", line: 2, key: "window", unknown: true,
			want: `c.toml:2: window: unknown key (did you mean "windows"? want one of scale, name, windows, level, [repo], [[stages]], [extra])`},
		{name: "far from every key", src: "\n\nzzzzzzzz = 1\n", line: 3, key: "zzzzzzzz", unknown: true,
			want: "c.toml:3: zzzzzzzz: unknown key (want one of scale, name, windows, level, [repo], [[stages]], [extra])"},
		{name: "unknown key in a table", src: "[repo]\nFiles = 1\nfilez = 2\n", line: 3, key: "repo.filez", unknown: true,
			want: `c.toml:3: repo.filez: unknown key (did you mean "Files"? want one of Files)`},
		{name: "unknown key in the second array table", src: "[[stages]]\nname = \"a\"\n[[stages]]\nname = \"b\"\nstep = 2\n", line: 5, key: "stages.step", unknown: true,
			want: `c.toml:5: stages.step: unknown key (did you mean "steps"? want one of name, steps, tools, size)`},
		{name: "unknown key in an inline table", src: "[[stages]]\nsize = { median = 1, sigmaa = 2 }\n", line: 2, key: "stages.size.sigmaa", unknown: true,
			want: `c.toml:2: stages.size.sigmaa: unknown key (did you mean "sigma"? want one of median, sigma)`},
		{name: "skipped field is unknown", src: "Skipped = 1\n", line: 1, key: "Skipped", unknown: true},
		{name: "unexported field is unknown", src: "hidden = 1\n", line: 1, key: "hidden", unknown: true},
		{name: "wrong type", src: "name = \"x\"\nscale = \"big\"\n", line: 2, key: "scale",
			want: "c.toml:2: scale: incompatible types: TOML value has type string; destination has type float"},
		{name: "value the type rejects", src: "level = \"medium\"\n", line: 1, key: "level",
			want: `c.toml:1: level: "medium": want low or high`},
		{name: "integer out of range", src: "[[stages]]\nsteps = 99999999999999999999\n", line: 2},
		{name: "syntax error on the key's line", src: "name = \"x\"\nscale = = 3\n", line: 2, key: "scale"},
		{name: "syntax error after a key", src: "name = \"x\"\n[[stages]\n", line: 3, key: "",
			want: `c.toml:3: expected end of table array name delimiter ']', but got '\n' instead`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c config
			_, err := Decode([]byte(tc.src), "c.toml", &c)
			if tc.line == 0 && tc.want == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if c.hidden != 0 || c.Skipped != 0 || c.Repo.Files != 3 || c.Scale != 2 || len(c.Stages) != 1 || c.Stages[0].Tools["bash"] != 1 {
					t.Errorf("decoded %+v", c)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, want a *Error", err, err)
			}
			if e.File != "c.toml" || e.Line != tc.line {
				t.Errorf("at %s:%d, want c.toml:%d (%v)", e.File, e.Line, tc.line, err)
			}
			if tc.key != "" && e.Key != tc.key {
				t.Errorf("key %q, want %q (%v)", e.Key, tc.key, err)
			}
			if tc.want != "" && err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
			if errors.Is(err, ErrUnknownKey) != tc.unknown {
				t.Errorf("errors.Is(%v, ErrUnknownKey) = %v, want %v", err, !tc.unknown, tc.unknown)
			}
		})
	}
}

func TestDecodeMapHasNoList(t *testing.T) {
	var m struct {
		Tools map[string]string `toml:"tools"`
	}
	_, err := Decode([]byte("[tool]\nx = \"y\"\n"), "t.toml", &m)
	if want := `t.toml:1: tool: unknown key (did you mean "tools"? want one of [tools])`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	var top map[string]any
	if _, err := Decode([]byte("a = 1\n[b]\nc = 2\n[[d]]\ne = { f = 1 }\n"), "t.toml", &top); err != nil {
		t.Errorf("decoding into a map of any: %v", err)
	}
	var loose struct {
		A int `toml:"a"`
		B any `toml:"b"`
	}
	if _, err := Decode([]byte("a = 1\n[b]\nc = 2\n"), "t.toml", &loose); err != nil {
		t.Errorf("decoding into a field of type any: %v", err)
	}
}

func TestLongListIsLeftOut(t *testing.T) {
	var many struct {
		A01, A02, A03, A04, A05, A06, A07, A08, A09, A10, A11, A12, A13, A14, A15, A16, A17 int
	}
	_, err := Decode([]byte("A1 = 1\n"), "m.toml", &many)
	if want := `m.toml:1: A1: unknown key (did you mean "A01"?)`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	_, err = Decode([]byte("qqqqq = 1\n"), "m.toml", &many)
	if want := `m.toml:1: qqqqq: unknown key`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestError(t *testing.T) {
	inner := errors.New("want > 0")
	for _, tc := range []struct {
		name string
		err  *Error
		want string
	}{
		{"all", &Error{File: "f.toml", Line: 3, Key: "a.b", Err: inner}, "f.toml:3: a.b: want > 0"},
		{"no line", &Error{File: "f.toml", Key: "a", Err: inner}, "f.toml: a: want > 0"},
		{"no key", &Error{File: "f.toml", Line: 2, Err: inner}, "f.toml:2: want > 0"},
		{"nothing but the file", &Error{File: "f.toml", Err: inner}, "f.toml: want > 0"},
		{"no cause", &Error{File: "f.toml", Line: 1}, "f.toml:1: invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
			if tc.err.Err != nil && !errors.Is(tc.err, inner) {
				t.Error("does not unwrap to its cause")
			}
		})
	}
}

func TestAt(t *testing.T) {
	data := []byte("[[model]]\nname = \"a\"\n[[model]]\nname = \"b\"\nwindow = 0\n")
	err := At(data, "p.toml", "model[1].window", errors.New("0: want > 0"))
	if got, want := err.Error(), "p.toml:5: model[1].window: 0: want > 0"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestKeyLine(t *testing.T) {
	data := `# a comment: name = "no"
name = "x"   # trailing = comment
windows = [1, 2]
"quoted" = 1
a.b = 2

[repo]
files = 3
file_bytes = { median = 5, sigma = 1 }

[[stages]]
name = "s0"
tools = { bash = 1 }

[[stages]]
name = "s1"
[stages.latency]
grep = 2
`
	for _, tc := range []struct {
		key  string
		line int
	}{
		{"name", 2},
		{"windows", 3},
		{"quoted", 4},
		{"a.b", 5},
		{"repo", 7},
		{"repo.files", 8},
		{"repo.file_bytes.sigma", 9},
		{"repo.missing", 7}, // the table that should hold it
		{"stages", 11},
		{"stages[0].tools.bash", 13},
		{"stages[1].name", 16},
		{"stages.name", 12}, // no index: the first
		{"stages.latency.grep", 18},
		{"nowhere", 0},
		{"files", 0}, // only inside [repo]
	} {
		t.Run(tc.key, func(t *testing.T) {
			if got := KeyLine([]byte(data), tc.key); got != tc.line {
				t.Errorf("KeyLine(%q) = %d, want %d", tc.key, got, tc.line)
			}
		})
	}
	if got := KeyLine(nil, "a"); got != 0 {
		t.Errorf("KeyLine on no data = %d", got)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"seeds", "sedes", 2}, {"window", "windows", 1}, {"kitten", "sitting", 3}} {
		if got := distance(tc.a, tc.b); got != tc.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func TestNearest(t *testing.T) {
	keys := []string{"kind", "max_items", "max_tokens", "priority"}
	for _, tc := range []struct {
		name, s    string
		candidates []string
		want       string
	}{
		{"one letter off", "max_iterms", keys, "max_items"},
		{"exact match", "kind", keys, "kind"},
		{"no cut-off: nine edits away still answers", "max_tokens_per_turn", keys, "max_tokens"},
		{"tie goes to the earlier candidate", "ab", []string{"xb", "ax"}, "xb"},
		{"case counts", "KIND", []string{"KINE", "kind"}, "KINE"},
		{"no candidates", "kind", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Nearest(tc.s, tc.candidates); got != tc.want {
				t.Errorf("Nearest(%q, %q) = %q, want %q", tc.s, tc.candidates, got, tc.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("name = \"x\"\nwindow = [1]\n", "stages.name")
	f.Add("[[stages]]\nsize = { median = 1, sigmaa = 2 }\n", "stages[0].size.sigmaa")
	f.Add("level = \"medium\"\n", "level")
	f.Add("name = \"x\"\n[[stages]\n", "")
	f.Add("a = # 'x\n[\"q.r\"]\n", "\"q.r\"")
	f.Fuzz(func(t *testing.T, src, key string) {
		var c config
		_, err := Decode([]byte(src), "fuzz.toml", &c)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not a *Error", err, err)
			}
			if e.File != "fuzz.toml" || !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error %v does not name the file", err)
			}
			if n := strings.Count(src, "\n") + 1; e.Line < 0 || e.Line > n {
				t.Fatalf("line %d outside the file's %d lines", e.Line, n)
			}
		}
		if n, lines := KeyLine([]byte(src), key), strings.Count(src, "\n")+1; n < 0 || n > lines {
			t.Fatalf("KeyLine = %d outside the file's %d lines", n, lines)
		}
	})
}

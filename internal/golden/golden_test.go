package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFirstLine(t *testing.T) {
	long := strings.Repeat("x", 400)
	for _, tc := range []struct {
		name, got, want, say string
	}{
		{"same", "a\nb\n", "a\nb\n", "no difference"},
		{"second line", "a\nB\nc\n", "a\nb\nc\n", "line 2:\n got  B\n want b"},
		{"longer", "a\nb\nc", "a\nb", "lengths differ: 3 lines, want 2"},
		{"long lines are clipped", long + "y", long + "z", "line 1:\n got  " + long[:300] + "…\n want " + long[:300] + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FirstLine([]byte(tc.got), []byte(tc.want)); got != tc.say {
				t.Errorf("FirstLine = %q, want %q", got, tc.say)
			}
		})
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = append(r.failed, format)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = append(r.failed, format)
	panic(r) // stop Check, as t.Fatalf would
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "x.golden")
	var diff func(got, want []byte) string
	check := func(got string) (failed []string) {
		r := &recorder{TB: t}
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
			failed = r.failed
		}()
		Check(r, path, []byte(got), diff)
		return nil
	}
	if f := check("a\n"); len(f) != 1 {
		t.Errorf("a missing golden file: %d failures, want 1", len(f))
	}
	*update = true
	f := check("a\n")
	*update = false
	if len(f) != 0 {
		t.Fatalf("-update failed: %v", f)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}
	if f := check("a\n"); len(f) != 0 {
		t.Errorf("the same output fails: %v", f)
	}
	if f := check("b\n"); len(f) != 1 {
		t.Errorf("a different output: %d failures, want 1", len(f))
	}
	diff = func(got, want []byte) string { // case does not matter
		if strings.EqualFold(string(got), string(want)) {
			return ""
		}
		return "differs"
	}
	if f := check("A\n"); len(f) != 0 {
		t.Errorf("an output diff accepts fails: %v", f)
	}
	if f := check("b\n"); len(f) != 1 {
		t.Errorf("an output diff rejects: %d failures, want 1", len(f))
	}
}

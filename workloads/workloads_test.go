package workloads_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads"
)

func TestNames(t *testing.T) {
	want := []string{"burst", "chat", "coder", "log-analyzer", "needle", "researcher"}
	if got := workloads.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
}

// TestDefaultParamsRoundTrip checks that a user who copies a default file
// and changes nothing gets the default run, byte for byte.
func TestDefaultParamsRoundTrip(t *testing.T) {
	for _, name := range workloads.Names() {
		t.Run(name, func(t *testing.T) {
			data, err := workloads.DefaultParams(name)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), name+".toml")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			var a, b bytes.Buffer
			if err := workloads.Generate(name, 5, "", &a); err != nil {
				t.Fatal(err)
			}
			if err := workloads.Generate("", 5, file, &b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Error("the copied default file gives a different trace")
			}
		})
	}
	if _, err := workloads.DefaultParams("nope"); err == nil {
		t.Error("no error for an unknown workload")
	}
}

func TestGenerateAndSource(t *testing.T) {
	for _, name := range workloads.Names() {
		t.Run(name, func(t *testing.T) {
			var a, b bytes.Buffer
			if err := workloads.Generate(name, 1, "", &a); err != nil {
				t.Fatal(err)
			}
			if err := workloads.Generate(name, 1, "", &b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatal("the same seed wrote different bytes")
			}
			src, err := workloads.Source(name, 1, "")
			if err != nil {
				t.Fatal(err)
			}
			h, err := src.Header()
			if err != nil {
				t.Fatal(err)
			}
			if h.Source != "synthetic:"+name || h.Seed != 1 {
				t.Errorf("header source %q seed %d", h.Source, h.Seed)
			}
			var out bytes.Buffer
			w, err := trace.NewWriter(&out, h)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for src.Scan() {
				n++
				if err := w.Write(src.Event()); err != nil {
					t.Fatal(err)
				}
			}
			if err := src.Err(); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if n == 0 || !bytes.Equal(out.Bytes(), a.Bytes()) {
				t.Errorf("Source gave %d events that do not round-trip to Generate's bytes", n)
			}
		})
	}
}

func TestParamsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "short-chat.toml")
	if err := os.WriteFile(file, []byte("workload = \"chat\"\nturns = 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := workloads.Source("", 2, file)
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for src.Scan() {
		if src.Event().Kind == trace.KindUser {
			users++
		}
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if users != 5 { // four turns and the closing question
		t.Errorf("%d user turns, want 5", users)
	}
}

func TestErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("turns = 4\nturnz = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, workload, file, want string
	}{
		{"unknown workload", "nope", "", `unknown workload "nope"`},
		{"bad key", "chat", bad, "bad.toml:2: turnz: unknown key"},
		{"missing file", "chat", filepath.Join(t.TempDir(), "missing.toml"), "missing.toml"},
		{"nothing named", "", "", "no workload named"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := workloads.Generate(tc.workload, 1, tc.file, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Generate error %v, want one containing %q", err, tc.want)
			}
			if _, err := workloads.Source(tc.workload, 1, tc.file); err == nil {
				t.Error("Source gave no error")
			}
		})
	}
}

func ExampleSource() {
	src, err := workloads.Source("needle", 1, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	probes := 0
	for src.Scan() {
		if src.Event().Kind == trace.KindProbe {
			probes++
		}
	}
	if err := src.Err(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("probes:", probes)
	// Output: probes: 10
}

package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the current output")

// Update reports whether the tests run with -update.
func Update() bool { return *update }

// Check compares got with the golden file at path (relative to the package
// directory, where go test runs). Under -update it writes got there instead,
// making the directory. A missing or different file fails the test, saying
// how the two differ and how to refresh the file. With a nil diff the bytes
// must be equal (FirstLine says where they are not); otherwise diff decides,
// returning "" for a match (a tolerant comparison) or how they differ.
func Check(t testing.TB, path string, got []byte, diff func(got, want []byte) string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run '%s' -update to create it)", err, t.Name())
	}
	var msg string
	if diff == nil {
		if bytes.Equal(got, want) {
			return
		}
		msg = FirstLine(got, want)
	} else if msg = diff(got, want); msg == "" {
		return
	}
	t.Errorf("%s differs from the output: %s\n(if the change is intended, run go test -run '%s' -update and review the diff)", path, msg, t.Name())
}

// maxShown bounds a line FirstLine quotes.
const maxShown = 300

// FirstLine says on which line got first differs from want, quoting both.
func FirstLine(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + clip(g[i]) + "\n want " + clip(w[i])
		}
	}
	if len(g) == len(w) { // equal lines, so the bytes are equal
		return "no difference"
	}
	return "lengths differ: " + strconv.Itoa(len(g)) + " lines, want " + strconv.Itoa(len(w))
}

func clip(s string) string {
	if len(s) > maxShown {
		return s[:maxShown] + "…"
	}
	return s
}

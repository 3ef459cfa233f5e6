package blueprints

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The embedded copies must stay byte-identical to the shared originals.
func TestEmbeddedMatchShared(t *testing.T) {
	names := Names()
	if len(names) != 5 {
		t.Fatalf("Names() = %v, want the 5 bundled blueprints", names)
	}
	for _, n := range names {
		got, err := Source(n)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "shared", "blueprints", "leviath", n+".leviath"))
		if err != nil {
			t.Skipf("shared inputs not available: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: embedded copy differs from ../shared", n)
		}
	}
	if _, err := Source("nope"); err == nil {
		t.Error("Source(nope) succeeded")
	}
}

package importers

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

func BenchmarkImportFixtures(b *testing.B) {
	for _, fx := range fixtures {
		data, err := os.ReadFile(filepath.Join("testdata", fx.file))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(fx.file), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, _, err := Import(bytes.NewReader(data), fx.file, Options{Format: fx.format}, func(*trace.Event) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package plots

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// floatsFrom turns fuzz bytes into float64s, eight bytes each, so that the fuzzer reaches
// NaN, infinities, denormals, huge and negative values.
func floatsFrom(b []byte) []float64 {
	out := make([]float64, 0, len(b)/8)
	for len(b) >= 8 {
		out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b)))
		b = b[8:]
	}
	return out
}

func floatBytes(vs ...float64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// FuzzFigures: whatever numbers arrive, a figure either reports a data error or draws; it
// never panics (a recovered panic would surface as a "drawing" error, which fails here).
func FuzzFigures(f *testing.F) {
	f.Add(floatBytes(8192, 16384, 10, 20), 65536.0)
	f.Add(floatBytes(1, 2, math.NaN(), 4, 5, 6), 0.0)
	f.Add(floatBytes(1e-320, 2e-320, 1e308, -1e308), 1e308)
	f.Add(floatBytes(5e-324, 5e-324, 3, 3), 5e-324)
	f.Add(floatBytes(1e300, 1e301, 1e302, 1e303), 1.0)
	f.Add(floatBytes(0, -1, math.Inf(1), 7), -1.0)
	f.Fuzz(func(t *testing.T, data []byte, window float64) {
		vs := floatsFrom(data)
		if len(vs) > 64 {
			vs = vs[:64]
		}
		half := len(vs) / 2
		x, y := vs[:half], vs[half:2*half]
		xi := make([]float64, len(x)) // an increasing x for occupancy
		for i := range xi {
			xi[i] = float64(i + 1)
		}
		figs := []*Figure{
			WindowPanels("w", []Panel{{Title: "p", Unit: "%", Series: []Series{{Name: "flat", X: x, Y: y}}}, {Title: "q", Unit: "tokens", Series: []Series{{Name: "x", X: x, Y: y}}}}),
			RecallDepth("d", []Series{{Name: "flat", X: x, Y: y}}),
			RequestSeries("r", window, []RunSeries{{Name: "flat", Request: x, PrefixStable: y}}),
			Occupancy("o", []string{"a", "b"}, xi, [][]float64{x, y}, window),
			Occupancy("o2", []string{"a"}, x, [][]float64{y}, 0),
		}
		for _, fig := range figs {
			err := fig.WriteSVG(&bytes.Buffer{})
			if err != fig.Err() {
				t.Fatalf("%s: WriteSVG = %v with valid data (Err() = %v)", fig.Title(), err, fig.Err())
			}
		}
	})
}

package sim

import (
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// Fact recall by depth: a DepthBucket holds the probes whose depth is at most
// UpTo and more than the previous bucket's UpTo, so a depth that is exactly a
// power-of-two boundary belongs to the bucket that ends there.
func TestDepthBucketBoundaries(t *testing.T) {
	tests := []struct {
		name  string
		depth int64
		upTo  int
	}{
		{"zero", 0, 1024},
		{"just under 1K", 1023, 1024},
		{"exactly 1K", 1024, 1024},
		{"just over 1K", 1025, 2048},
		{"exactly 2K", 2048, 2048},
		{"just over 2K", 2049, 4096},
		{"3K", 3072, 4096},
		{"exactly 4K", 4096, 4096},
		{"just over 4K", 4097, 8192},
		{"exactly 1M", 1 << 20, 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m meter
			m.init(&env{}, noCache{})
			m.probe(&pendingProbe{probe: &trace.Probe{Fact: "f", Text: "x"}, depth: tt.depth}, true)
			got := m.depthBuckets()
			if len(got) != 1 || got[0].UpTo != tt.upTo || got[0].Probes != 1 || got[0].Hits != 1 {
				t.Fatalf("depth %d: buckets %+v, want one bucket up to %d", tt.depth, got, tt.upTo)
			}
		})
	}
}

package sim

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// benchWorkload is BenchmarkRun's workload, made once a process rather than
// at each -count, which left the last one as 15 MB of garbage whose return
// to the OS could fall inside a timed cell.
var benchWorkload = sync.OnceValues(func() (trace.Header, []trace.Event) {
	h, evs := randomWorkload(1, 5200)
	return h, evs[:10000]
})

// BenchmarkRun is the simulator's speed: one 10,000-event run per iteration,
// for each policy at windows of 32K, 200K and 1M, reported as events/s, in
// steady state.
func BenchmarkRun(b *testing.B) {
	h, evs := benchWorkload()
	prof, err := LookupProfile("claude-sonnet-5.5")
	if err != nil {
		b.Fatal(err)
	}
	policies := []string{"flat", "flat-keep-system", "flat-compact", "flat-clear-tools", "unbounded", "clairvoyant", "as-recorded"}
	if regionsAvailable {
		policies = append(policies, "regions:coder")
	}
	for _, p := range policies {
		for _, w := range []int{32768, 200000, 1000000} {
			b.Run(fmt.Sprintf("policy=%s/window=%d", p, w), func(b *testing.B) {
				cfg := Config{Policy: p, Model: prof, Window: w}
				// One run before the clock starts: a process's first run pays
				// once what a sweep pays once for thousands of cells (the
				// blueprint's parse, the heap's growth, the scratch's tables).
				if _, err := Run(context.Background(), SliceSource(h, evs), cfg); err != nil {
					b.Fatal(err)
				}
				cpu0 := cpuSeconds()
				for b.Loop() {
					if _, err := Run(context.Background(), SliceSource(h, evs), cfg); err != nil {
						b.Fatal(err)
					}
				}
				events := float64(len(evs)) * float64(b.N)
				b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
				// Per CPU-second (GC included): stable on a shared machine.
				if cpu := cpuSeconds() - cpu0; cpu > 0 {
					b.ReportMetric(events/cpu, "events/cpu-s")
				}
			})
		}
	}
}

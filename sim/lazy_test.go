package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads/synthetic"
)

// A flat policy's blocks past the read point are re-prefilled by counting
// (see meter.settle): walking each of them must give the same results, for
// every flat policy on every synthetic workload and on random workloads, at
// small and large windows.
func TestFlatMeterAsWalked(t *testing.T) {
	type workload struct {
		name string
		hdr  trace.Header
		evs  []trace.Event
	}
	var loads []workload
	for _, name := range synthetic.Names() {
		h, evs := syntheticLoad(t, name)
		loads = append(loads, workload{name, h, evs})
	}
	h, evs := randomWorkload(5, 400)
	loads = append(loads, workload{"random", h, evs})
	for _, l := range loads {
		for _, policy := range []string{"flat", "flat-keep-system", "flat-compact", "flat-clear-tools", "clairvoyant", "unbounded"} {
			for _, w := range []int{8192, 32768, 200000} {
				var out [2][]byte
				for i, walkAll := range []bool{false, true} {
					cfg := Config{Policy: policy, Model: testProfile("anthropic"), Window: w, walkAll: walkAll}
					res, err := Run(context.Background(), SliceSource(l.hdr, l.evs), cfg)
					if err != nil {
						t.Fatalf("%s %s %d: %v", l.name, policy, w, err)
					}
					out[i], _ = json.Marshal(res)
				}
				if !bytes.Equal(out[0], out[1]) {
					t.Errorf("%s %s %d: results differ from walking every block:\n%s\n%s", l.name, policy, w, out[0], out[1])
				}
			}
		}
	}
}

// keyCounts counts the requests from a key up to k as a list of them would,
// as it grows.
func TestKeyCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var c keyCounts
	var from []int
	for keys := 1; keys < 5000; keys += rng.IntN(40) {
		if keys >= len(c.tree) {
			c.grow(keys)
		}
		for range rng.IntN(3) {
			k := 1 + rng.IntN(keys)
			c.add(k)
			from = append(from, k)
		}
		k := 1 + rng.IntN(keys)
		want := 0
		for _, f := range from {
			if f <= k {
				want++
			}
		}
		if got := c.upTo(k); got != want {
			t.Fatalf("%d keys: upTo(%d) = %d, want %d", keys, k, got, want)
		}
	}
}

// The filters of the blocks a flat policy drops are taken out of present's
// when it reads them, as if each request had moved them.
func TestDropSigs(t *testing.T) {
	sigs := func(ids ...uint64) []gramSig {
		var s []gramSig
		for _, id := range ids {
			s = append(s, gramSig{id})
		}
		return s
	}
	var m meter
	m.sigs, m.valid = sigs(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), 6
	m.dropSigs(2, 1) // 0 1 3 4 5 6 7 8 9
	m.cutSigs(8)     // 0 1 3 4 5 6 7 8
	m.dropSigs(2, 2) // 0 1 5 6 7 8
	m.cutSigs(6)
	m.takeDropped()
	if want := sigs(0, 1, 5, 6, 7, 8); !slices.Equal(m.sigs, want) || m.valid != 3 {
		t.Errorf("sigs %v valid %d, want %v valid 3", m.sigs, m.valid, want)
	}
	m.dropSigs(1, 2) // 0 7 8
	m.cutSigs(1)     // 0
	m.takeDropped()
	if want := sigs(0); !slices.Equal(m.sigs, want) || min(m.valid, len(m.sigs)) != 1 {
		t.Errorf("sigs %v valid %d, want %v valid 1", m.sigs, m.valid, want)
	}
	m.sigs, m.valid = sigs(0, 1, 2, 3, 4, 5), 3
	m.dropSigs(1, 3) // 0 4 5, of which 0 written
	m.takeDropped()
	if want := sigs(0, 4, 5); !slices.Equal(m.sigs, want) || m.valid != 1 {
		t.Errorf("sigs %v valid %d, want %v valid 1", m.sigs, m.valid, want)
	}
}

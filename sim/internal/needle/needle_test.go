package needle

import (
	"reflect"
	"sort"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
)

func TestGenerate(t *testing.T) {
	p := Default(3)
	h, evs, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	if h.Workload != "needle" || h.Seed != 3 {
		t.Errorf("header %+v", h)
	}
	// Every depth gets a fact and a probe; probes come after all content.
	var facts, probes int
	arrived := map[string]int{} // source id -> bytes seen before it, inclusive
	bytes, lastContent, firstProbe := 0, 0, len(evs)
	for i, ev := range evs {
		bytes += ev.Bytes()
		switch ev.Kind {
		case trace.KindProbe:
			probes++
			firstProbe = min(firstProbe, i)
			depth := (bytes - arrived[ev.Probe.Source]) / 4
			if depth < 0 {
				t.Errorf("probe %s before its source", ev.ID)
			}
		case trace.KindToolResult, trace.KindUser:
			lastContent = i
			if len(ev.Facts) > 0 {
				facts++
				arrived[ev.ID] = bytes
			}
		}
	}
	if facts != len(p.Depths) || probes != len(p.Depths) {
		t.Errorf("%d facts, %d probes; want %d of each", facts, probes, len(p.Depths))
	}
	if lastContent > firstProbe {
		t.Errorf("content after the first probe")
	}
	// Each fact sits at about its depth: the content after it, within one
	// turn's size of the wanted depth.
	var got []int
	for i, ev := range evs {
		if len(ev.Facts) == 0 {
			continue
		}
		after := 0
		for _, later := range evs[i+1:] {
			if later.Kind == trace.KindProbe {
				break
			}
			after += later.Bytes()
		}
		got = append(got, after/4)
	}
	want := append([]int(nil), p.Depths...)
	sort.Sort(sort.Reverse(sort.IntSlice(want)))
	for i := range want {
		if i < len(got) && (got[i] < want[i]-p.TurnTokens || got[i] > want[i]+p.TurnTokens) {
			t.Errorf("fact %d at depth %d, want %d ± %d", i+1, got[i], want[i], p.TurnTokens)
		}
	}
	// Same seed, same trace; another seed, another.
	_, again, _ := Generate(p)
	if !reflect.DeepEqual(evs, again) {
		t.Error("same seed gave a different trace")
	}
	_, other, _ := Generate(Default(4))
	if reflect.DeepEqual(evs, other) {
		t.Error("different seeds gave the same trace")
	}
}

func TestGenerateBadParams(t *testing.T) {
	for _, p := range []Params{{}, {Depths: []int{-1}, TurnTokens: 10}, {Depths: []int{10}}} {
		if _, _, err := Generate(p); err == nil {
			t.Errorf("Generate(%+v) succeeded", p)
		}
	}
}

package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// A run must see nothing of the earlier runs whose scratch it reuses: cells
// run one after another through one scratch (A, B, A, ...) give what each
// gives through a scratch of its own. The workloads share event ids, so a
// table left with an earlier run's entries changes the metrics.
func TestRunReuse(t *testing.T) {
	prof, err := LookupProfile("claude-sonnet-5.5")
	if err != nil {
		t.Fatal(err)
	}
	type workload struct {
		h   trace.Header
		evs []trace.Event
	}
	var ws []workload
	for seed := range uint64(2) {
		h, evs := randomWorkload(seed+1, 500)
		ws = append(ws, workload{h, evs})
	}
	type cell struct {
		cfg Config
		w   int
	}
	var cells []cell
	for _, p := range []string{"regions:coder", "flat-compact", "flat"} {
		for _, win := range []int{32768, 200000} {
			for w := range ws {
				cells = append(cells, cell{Config{Policy: p, Model: prof, Window: win}, w})
			}
		}
	}
	result := func(c cell, s *runScratch) []byte {
		res, err := runWith(context.Background(), SliceSource(ws[c.w].h, ws[c.w].evs), c.cfg, s)
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := make([][]byte, len(cells))
	for i, c := range cells {
		want[i] = result(c, new(runScratch))
	}
	var s runScratch
	// Nothing of a run stays but capacity and the zeroed slabs. (The cache
	// model, which holds no pointer, is reset when a run takes it.)
	reclaimed := func(c cell) {
		t.Helper()
		rest := s
		rest.blocks, rest.stats, rest.ant = nil, nil, anthropicCache{}
		p := leftover(reflect.ValueOf(rest), "scratch")
		for j := 0; p == "" && j < len(s.blocks); j++ {
			p = leftover(reflect.ValueOf(*s.blocks[j]), fmt.Sprintf("scratch.blocks[%d]", j))
		}
		for j := 0; p == "" && j < len(s.stats); j++ {
			p = leftover(reflect.ValueOf(*s.stats[j]), fmt.Sprintf("scratch.stats[%d]", j))
		}
		if p != "" {
			t.Fatalf("%s at %d: %s holds a value of the run", c.cfg.Policy, c.cfg.Window, p)
		}
	}
	for round := range 2 {
		for i, c := range cells {
			if round == 1 && i%2 == 0 {
				// A run cancelled half way gives its scratch back too.
				ctx, cancel := context.WithCancel(context.Background())
				src := &cancelAt{Source: SliceSource(ws[c.w].h, ws[c.w].evs), at: len(ws[c.w].evs) / 2, cancel: cancel}
				if _, err := runWith(ctx, src, c.cfg, &s); err == nil {
					t.Fatalf("%s at %d: a cancelled run returned no error", c.cfg.Policy, c.cfg.Window)
				}
				reclaimed(c)
			}
			if got := result(c, &s); !bytes.Equal(got, want[i]) {
				t.Errorf("round %d, %s at %d on workload %d, after %v:\n got %s\nwant %s", round, c.cfg.Policy, c.cfg.Window, c.w,
					cells[(i+len(cells)-1)%len(cells)], got, want[i])
			}
			reclaimed(c)
		}
	}
}

// cancelAt is a source that cancels the run's context at its at-th event.
type cancelAt struct {
	Source
	n, at  int
	cancel context.CancelFunc
}

func (s *cancelAt) Scan() bool {
	if s.n++; s.n == s.at {
		s.cancel()
	}
	return s.Source.Scan()
}

// leftover is the path of a value in v that is not zero (slices are read to
// their capacity; maps must be empty), or "".
func leftover(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Map:
		if v.Len() > 0 {
			return path
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice {
			v = v.Slice3(0, v.Cap(), v.Cap())
		}
		for i := range v.Len() {
			if p := leftover(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if p := leftover(v.Field(i), path+"."+v.Type().Field(i).Name); p != "" {
				return p
			}
		}
	default:
		if !v.IsZero() {
			return path
		}
	}
	return ""
}

// A run takes the scratch a run on another goroutine gave back: each
// benchmark count and each sweep worker is a goroutine of its own, and a
// sync.Pool, which hands out what was put on the same P, grew a new one.
func TestScratchListAcrossGoroutines(t *testing.T) {
	var l scratchList
	s := l.get()
	done := make(chan struct{})
	go func() {
		l.put(s)
		close(done)
	}()
	<-done
	if got := l.get(); got != s {
		t.Fatal("get after a put on another goroutine grew a new scratch")
	}
	if got := l.get(); got == s {
		t.Fatal("a scratch was handed out twice")
	}
}

// A scratch left unused through two collections is let go, one used since
// is kept; the list stops arming when it is empty.
func TestScratchListAge(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	a, b := new(runScratch), new(runScratch)
	l := scratchList{free: []idleScratch{{s: a, gcs: 1}, {s: b}}, armed: true}
	l.age()
	if len(l.free) != 1 || l.free[0].s != b || l.free[0].gcs != 1 || !l.armed {
		t.Fatalf("after one collection: %+v armed %v; want b kept, a dropped", l.free, l.armed)
	}
	l.age()
	if len(l.free) != 0 || l.armed {
		t.Fatalf("after two collections: %+v armed %v; want none, disarmed", l.free, l.armed)
	}
}

// The collections themselves age the list: an idle scratch goes.
func TestScratchListDropsIdle(t *testing.T) {
	var l scratchList
	l.put(new(runScratch))
	for range 500 {
		runtime.GC()
		time.Sleep(time.Millisecond) // cleanups run on their own goroutine
		l.mu.Lock()
		n := len(l.free)
		l.mu.Unlock()
		if n == 0 {
			return
		}
	}
	t.Fatal("a scratch unused through 500 collections is still held")
}

package bench

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads/importers"
)

var updateCuts = flag.Bool("update-cuts", false, "rewrite testdata/traces/*.cut.jsonl from the recordings in ../../shared/traces")

// sharedTraces is the recordings' directory, relative to this package.
const sharedTraces = "../../shared/traces"

// cutBytes bounds a cut: small enough to embed, big enough for the window
// sweep to bite at its smaller windows.
const cutBytes = 512 << 10

// TestCuts checks the embedded cuts of the default grid's recorded sessions
// and, with -update-cuts, makes them again from the recordings: the
// canonical import of each, cut before the inference that would take it past
// cutBytes, its header noting the cut.
func TestCuts(t *testing.T) {
	for _, ts := range DefaultGrid().Trace {
		t.Run(ts.Name, func(t *testing.T) {
			path := filepath.Join("testdata", "traces", ts.Cut)
			if *updateCuts {
				b, err := makeCut(ts)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := cuts.ReadFile("testdata/traces/" + ts.Cut)
			if err != nil {
				t.Fatalf("no embedded cut: %v (make it with go test ./bench -run TestCuts -update-cuts)", err)
			}
			if len(data) > cutBytes+(64<<10) {
				t.Errorf("cut is %d bytes; keep it near %d", len(data), cutBytes)
			}
			tr := &loadedTrace{}
			if err := readCanonical(tr, data, ts.Cut); err != nil {
				t.Fatal(err)
			}
			if tr.hdr.Meta["cut_of"] != ts.File {
				t.Errorf("header meta cut_of = %q, want %q", tr.hdr.Meta["cut_of"], ts.File)
			}
			inferences := 0
			for _, ev := range tr.events {
				if ev.Kind == trace.KindAssistant && !ev.Sidechain {
					inferences++
				}
			}
			if inferences < 5 {
				t.Errorf("cut holds %d inferences; too few to measure anything", inferences)
			}
		})
	}
}

func makeCut(ts TraceSpec) ([]byte, error) {
	f, err := importers.ParseFormat(ts.Format)
	if err != nil {
		return nil, err
	}
	src := filepath.Join(sharedTraces, ts.File)
	in, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	var evs []trace.Event
	hdr, _, err := importers.Import(in, ts.File, importers.Options{Format: f}, func(ev *trace.Event) error {
		evs = append(evs, *ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	total := 0
	for _, ev := range evs {
		if ev.Kind == trace.KindAssistant {
			total++
		}
	}
	// Keep whole events up to the inference that would pass the budget, and
	// no usage event whose assistant turn was cut off.
	size, end, kept := 0, 0, 0
	for i, ev := range evs {
		b, err := jsonLen(&ev)
		if err != nil {
			return nil, err
		}
		if ev.Kind == trace.KindAssistant {
			if size+b > cutBytes && kept > 0 {
				break
			}
			kept++
			end = i + 1
		}
		size += b
	}
	cut := evs[:end]
	if hdr.Meta == nil {
		hdr.Meta = map[string]string{}
	}
	hdr.Meta["cut_of"] = ts.File
	hdr.Meta["cut_inferences"] = strconv.Itoa(kept) + " of " + strconv.Itoa(total)
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, hdr)
	if err != nil {
		return nil, err
	}
	for i := range cut {
		if err := w.Write(&cut[i]); err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func jsonLen(ev *trace.Event) (int, error) {
	b, err := json.Marshal(ev)
	return len(b) + 1, err
}

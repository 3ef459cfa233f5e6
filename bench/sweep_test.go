package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// dirFiles returns every file under dir (relative path → content).
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameDirs(t *testing.T, a, b string) {
	t.Helper()
	fa, fb := dirFiles(t, a), dirFiles(t, b)
	var names []string
	for n := range fa {
		names = append(names, n)
	}
	for n := range fb {
		if _, ok := fa[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if !bytes.Equal(fa[n], fb[n]) {
			t.Errorf("%s differs (%d bytes in %s, %d in %s)", n, len(fa[n]), a, len(fb[n]), b)
		}
	}
}

func TestSweepFailedCellDoesNotStop(t *testing.T) {
	dir := t.TempDir()
	cells := append(smallCells(), Cell{Workload: "chat", Policy: "panics", Model: "m1", WindowTokens: 8000, Seed: 1})
	var done atomic.Int64
	s := &Sweep{Dir: dir, RunCell: fakeRun, OnDone: func(*Record) { done.Add(1) }}
	sum, err := s.Run(context.Background(), cells)
	if err != nil {
		t.Fatal(err)
	}
	wantFailed := 3*2 + 1 // flat-broken at 3 windows × 2 seeds, and the panic
	if sum.Ran != len(cells) || sum.Failed != wantFailed || int(done.Load()) != len(cells) {
		t.Fatalf("summary %+v, %d OnDone calls; want %d ran, %d failed", sum, done.Load(), len(cells), wantFailed)
	}
	recs, err := ReadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(cells) {
		t.Fatalf("%d records, want %d", len(recs), len(cells))
	}
	var panicked *Record
	for _, r := range recs {
		if r.Cell.Policy == "panics" {
			panicked = r
		}
		if r.Cell.Policy == "flat-broken" && !strings.Contains(r.Error, "no such policy") {
			t.Errorf("failed cell %s: error %q", r.ID, r.Error)
		}
	}
	if panicked == nil || !strings.HasPrefix(panicked.Error, "panic: fake policy panics\n\tat bench.fakeRun (bench/fake_test.go:") {
		t.Fatalf("panicking cell not recorded as failed: %+v", panicked)
	}
	// A rerun retries failed cells only.
	sum, err = s.Run(context.Background(), cells)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped != len(cells)-wantFailed || sum.Ran != wantFailed {
		t.Errorf("rerun summary %+v, want %d skipped and %d ran", sum, len(cells)-wantFailed, wantFailed)
	}
}

func TestSweepResumeEqualsUninterrupted(t *testing.T) {
	cells := smallCells()
	whole := t.TempDir()
	if _, err := (&Sweep{Dir: whole, RunCell: fakeRun}).Run(context.Background(), cells); err != nil {
		t.Fatal(err)
	}

	parted := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	stopping := func(ctx context.Context, c Cell) (Result, error) {
		if n.Add(1) > 10 {
			cancel()
			<-ctx.Done()
			return Result{}, ctx.Err()
		}
		return fakeRun(ctx, c)
	}
	sum, err := (&Sweep{Dir: parted, RunCell: stopping, Workers: 2}).Run(ctx, cells)
	if err == nil {
		t.Fatal("interrupted sweep returned no error")
	}
	if sum.Ran == 0 || sum.Ran >= len(cells) {
		t.Fatalf("interrupted sweep ran %d of %d cells", sum.Ran, len(cells))
	}
	// A write cut short by SIGKILL leaves a temporary file: it must be ignored.
	junk := filepath.Join(parted, CellsDir, "."+cells[len(cells)-1].ID()+".json.tmp123")
	if err := os.WriteFile(junk, []byte(`{"id": "trunc`), 0o644); err != nil {
		t.Fatal(err)
	}
	var reran atomic.Int64
	sum2, err := (&Sweep{Dir: parted, RunCell: fakeRun, OnDone: func(*Record) { reran.Add(1) }}).Run(context.Background(), cells)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Skipped != sum.Ran-sum.Failed || sum2.Ran != len(cells)-sum2.Skipped {
		t.Errorf("resume summary %+v after %+v", sum2, sum)
	}
	os.Remove(junk)
	sameDirs(t, whole, parted)
}

// TestSweepSIGKILL kills a real sweep process with SIGKILL mid-run and
// resumes it: nothing that finished is lost, and the result equals an
// uninterrupted sweep.
func TestSweepSIGKILL(t *testing.T) {
	if os.Getenv("CTXSIM_SWEEP_CHILD") != "" {
		// After a dozen cells the child waits to be killed: however slowly
		// the parent is scheduled, the kill comes before the sweep ends.
		var started atomic.Int64
		slow := func(ctx context.Context, c Cell) (Result, error) {
			if started.Add(1) > 12 {
				time.Sleep(time.Hour)
			}
			time.Sleep(20 * time.Millisecond)
			return fakeRun(ctx, c)
		}
		(&Sweep{Dir: os.Getenv("CTXSIM_SWEEP_CHILD"), RunCell: slow, Workers: 2}).Run(context.Background(), smallCells())
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSweepSIGKILL$")
	cmd.Env = append(os.Environ(), "CTXSIM_SWEEP_CHILD="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		recs, _ := os.ReadDir(filepath.Join(dir, CellsDir))
		if len(recs) >= 8 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("child sweep wrote no cells")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	before, err := ReadRecords(dir)
	if err != nil {
		t.Fatalf("records after SIGKILL: %v", err)
	}
	if len(before) == 0 || len(before) >= len(smallCells()) {
		t.Fatalf("%d records after SIGKILL; want some but not all", len(before))
	}
	sum, err := (&Sweep{Dir: dir, RunCell: fakeRun}).Run(context.Background(), smallCells())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped < len(before)-6 { // failed cells (flat-broken) are retried
		t.Errorf("resume skipped %d cells, %d were stored", sum.Skipped, len(before))
	}
	// Clear temporary files of the killed write before comparing.
	ents, _ := os.ReadDir(filepath.Join(dir, CellsDir))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			os.Remove(filepath.Join(dir, CellsDir, e.Name()))
		}
	}
	whole := t.TempDir()
	if _, err := (&Sweep{Dir: whole, RunCell: fakeRun}).Run(context.Background(), smallCells()); err != nil {
		t.Fatal(err)
	}
	sameDirs(t, whole, dir)
}

func TestShardsMergedEqualWhole(t *testing.T) {
	cells := smallCells()
	whole := t.TempDir()
	if _, err := (&Sweep{Dir: whole, RunCell: fakeRun}).Run(context.Background(), cells); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 7} {
		t.Run(fmt.Sprintf("shards=%d", n), func(t *testing.T) {
			var dirs []string
			total := 0
			for k := range n {
				d := t.TempDir()
				part := Shard{k, n}.Select(cells)
				total += len(part)
				if _, err := (&Sweep{Dir: d, RunCell: fakeRun}).Run(context.Background(), part); err != nil {
					t.Fatal(err)
				}
				dirs = append(dirs, d)
			}
			if total != len(cells) {
				t.Fatalf("shards hold %d cells, grid %d", total, len(cells))
			}
			out := t.TempDir()
			got, err := Merge(out, dirs...)
			if err != nil {
				t.Fatal(err)
			}
			if got != len(cells) {
				t.Errorf("merged %d cells, want %d", got, len(cells))
			}
			sameDirs(t, whole, out)
		})
	}
}

func TestMergeConflict(t *testing.T) {
	cells := smallCells()[:2]
	a, b := t.TempDir(), t.TempDir()
	if _, err := (&Sweep{Dir: a, RunCell: fakeRun}).Run(context.Background(), cells); err != nil {
		t.Fatal(err)
	}
	other := func(ctx context.Context, c Cell) (Result, error) {
		r, err := fakeRun(ctx, c)
		r.Metrics["requests"]++
		return r, err
	}
	if _, err := (&Sweep{Dir: b, RunCell: other}).Run(context.Background(), cells); err != nil {
		t.Fatal(err)
	}
	_, err := Merge(t.TempDir(), a, b)
	if err == nil || !strings.Contains(err.Error(), "differs between") {
		t.Fatalf("merge of conflicting cells: %v", err)
	}
	// The same full trace read from different directories on two machines
	// is the same cell.
	full := []Cell{{Workload: "t", Trace: "full", Format: "claude-code", Path: "/m1/t.jsonl", Policy: "flat", Model: "m", WindowTokens: 8000}}
	m1, m2 := t.TempDir(), t.TempDir()
	if _, err := (&Sweep{Dir: m1, RunCell: fakeRun}).Run(context.Background(), full); err != nil {
		t.Fatal(err)
	}
	full[0].Path = "/m2/t.jsonl"
	if _, err := (&Sweep{Dir: m2, RunCell: fakeRun}).Run(context.Background(), full); err != nil {
		t.Fatal(err)
	}
	if n, err := Merge(t.TempDir(), m1, m2); err != nil || n != 1 {
		t.Errorf("merge of one cell read from two directories: %d cells, %v", n, err)
	}
	if _, err := Merge(t.TempDir(), a, filepath.Join(a, "nope")); err == nil || !strings.Contains(err.Error(), "not a sweep output") {
		t.Errorf("merge of a missing directory: %v", err)
	}
}

func TestReadRecordsRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	cdir := filepath.Join(dir, CellsDir)
	os.MkdirAll(cdir, 0o755)
	c := smallCells()[0]
	tests := []struct{ name, file, body, want string }{
		{"not json", c.ID() + ".json", "{", "unexpected EOF"},
		{"unknown field", c.ID() + ".json", `{"id":"x","cell":{},"bogus":1}`, `unknown field "bogus"`},
		{"id mismatch", "x.json", `{"id":"x","cell":{"workload":"w","policy":"p","model":"m","window_tokens":1,"seed":0}}`, "does not match its cell"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.RemoveAll(cdir)
			os.MkdirAll(cdir, 0o755)
			os.WriteFile(filepath.Join(cdir, tt.file), []byte(tt.body), 0o644)
			_, err := ReadRecords(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("error %v, want it to name %s and say %q", err, tt.file, tt.want)
			}
		})
	}
}

func TestParseShard(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"0/1", Shard{0, 1}, true}, {"3/4", Shard{3, 4}, true}, {"4/4", Shard{}, false},
		{"-1/4", Shard{}, false}, {"1", Shard{}, false}, {"a/b", Shard{}, false}, {"0/0", Shard{}, false},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseShard(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("ParseShard(%q) = %v, %v", tt.in, got, err)
			}
		})
	}
}

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/4", "4/4", "-1/2", "a/b", "1", "0/0", " 1 / 3 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("ParseShard(%q) = %+v", s, sh)
		}
		back, err := ParseShard(sh.String())
		if err != nil || back != sh {
			t.Fatalf("round trip of %+v: %+v, %v", sh, back, err)
		}
	})
}

// Cells stored by a ctxsim of another ResultsVersion run again: a sweep
// neither resumes on them nor lets a merge mix them with current ones.
func TestSweepRerunsOtherVersions(t *testing.T) {
	cells := smallCells()[:4]
	dir := t.TempDir()
	s := &Sweep{Dir: dir, RunCell: fakeRun}
	if _, err := s.Run(context.Background(), cells); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadRecords(dir)
	if err != nil || len(recs) != len(cells) {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	old := recs[1]
	old.Version = ResultsVersion - 1
	if err := writeRecord(filepath.Join(dir, CellsDir), old); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(t.TempDir(), dir); err == nil || !strings.Contains(err.Error(), "1 of 4 cells were run by another ctxsim (cell "+old.ID) {
		t.Errorf("merge with a cell of another version: %v", err)
	}
	sum, err := s.Run(context.Background(), cells)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ran != 1 || sum.Skipped != len(cells)-1 {
		t.Errorf("rerun summary %+v, want the old cell run again and the rest skipped", sum)
	}
	recs, err = ReadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckVersions(recs); err != nil {
		t.Errorf("after the rerun: %v", err)
	}
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// CellsDir is the directory, under a sweep's output directory, that holds one
// JSON file per finished cell.
const CellsDir = "cells"

// Shard selects a deterministic part of a grid: cell i (in grid order) belongs
// to shard i mod N. Index counts from 0, so a Kubernetes indexed Job's
// JOB_COMPLETION_INDEX or a Slurm array's SLURM_ARRAY_TASK_ID (with --array=0-N-1)
// can be passed as it is.
type Shard struct {
	Index, Count int
}

// ParseShard parses "k/n" with 0 ≤ k < n.
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || ni < 1 || ki < 0 || ki >= ni {
		return Shard{}, fmt.Errorf("shard %q: want k/n with 0 <= k < n, for example 0/4", s)
	}
	return Shard{ki, ni}, nil
}

// String returns "k/n".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Select returns the cells of this shard; the zero Shard selects all.
func (s Shard) Select(cells []Cell) []Cell {
	if s.Count <= 1 {
		return cells
	}
	var out []Cell
	for i, c := range cells {
		if i%s.Count == s.Index {
			out = append(out, c)
		}
	}
	return out
}

// Sweep runs cells and stores each finished one at once.
type Sweep struct {
	// Dir is the output directory; cells go to Dir/cells/<id>.json.
	Dir string
	// RunCell runs one cell.
	RunCell RunFunc
	// Workers is the number of cells run at the same time; 0 means
	// runtime.GOMAXPROCS(0). Each run is single-threaded.
	Workers int
	// OnStart, when set, is called once with the number of cells to run (after
	// finished cells were skipped) and the number skipped.
	OnStart func(toRun, skipped int)
	// OnDone, when set, is called after each cell is stored, from one
	// goroutine at a time.
	OnDone func(r *Record)
}

// Summary counts what a sweep did.
type Summary struct {
	Cells   int // cells asked for
	Skipped int // already finished before the sweep started
	Ran     int // run and stored by this sweep
	Failed  int // of Ran, those stored with an error
}

// Run runs every cell not already finished in s.Dir. A cell whose run fails
// (or panics) is stored as a record with its error and does not stop the
// sweep; a cell stopped because ctx was cancelled is not stored, so a rerun
// picks it up. Run returns ctx's error when it was cancelled, or an error if
// a record could not be written.
func (s *Sweep) Run(ctx context.Context, cells []Cell) (Summary, error) {
	if s.RunCell == nil {
		return Summary{}, errors.New("sweep: no run function")
	}
	dir := filepath.Join(s.Dir, CellsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("sweep: %w", err)
	}
	done, err := finishedIDs(dir)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Cells: len(cells)}
	var todo []Cell
	seen := map[string]bool{}
	for _, c := range cells {
		id := c.ID()
		if seen[id] {
			return Summary{}, fmt.Errorf("sweep: cell %s listed twice", c)
		}
		seen[id] = true
		if done[id] {
			sum.Skipped++
			continue
		}
		todo = append(todo, c)
	}
	if s.OnStart != nil {
		s.OnStart(len(todo), sum.Skipped)
	}
	workers := s.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, max(len(todo), 1))

	jobs := make(chan Cell)
	var (
		mu       sync.Mutex
		writeErr error
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				rec, stored := s.runOne(ctx, c)
				if !stored {
					continue
				}
				err := writeRecord(dir, rec)
				mu.Lock()
				if err != nil && writeErr == nil {
					writeErr = err
				}
				if err == nil {
					sum.Ran++
					if !rec.OK() {
						sum.Failed++
					}
					if s.OnDone != nil {
						s.OnDone(rec)
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, c := range todo {
		mu.Lock()
		stop := writeErr != nil
		mu.Unlock()
		if stop {
			break
		}
		select {
		case jobs <- c:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if writeErr != nil {
		return sum, writeErr
	}
	if err := ctx.Err(); err != nil {
		return sum, fmt.Errorf("sweep interrupted after %d of %d cells: %w", sum.Ran, len(todo), err)
	}
	return sum, nil
}

// runOne runs c, turning a panic into a failed record. It reports false when
// the run was stopped by ctx, whose result must not be stored.
func (s *Sweep) runOne(ctx context.Context, c Cell) (rec *Record, stored bool) {
	rec = &Record{ID: c.ID(), Cell: c, Version: ResultsVersion}
	defer func() {
		if p := recover(); p != nil {
			rec.Result = Result{}
			rec.Error = fmt.Sprintf("panic: %v%s", p, panicFrames())
			stored = true
		}
	}()
	res, err := s.RunCell(ctx, c)
	if ctx.Err() != nil {
		return nil, false
	}
	if err != nil {
		rec.Error = err.Error()
		return rec, true
	}
	res.clean()
	rec.Result = res
	return rec, true
}

// panicFrames locates a panic, called from the deferred recover: the
// functions between the panic and the run, with file and line, and nothing
// that changes from one process to the next (goroutine ids, addresses,
// directories), so that a failed cell's record is reproducible too.
func panicFrames() string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var b strings.Builder
	kept := 0
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, ".(*Sweep).runOne") || kept == 8 {
			break
		}
		if !strings.HasPrefix(f.Function, "runtime.") && !strings.Contains(f.Function, ".(*Sweep).runOne.") && f.Function != "" {
			fn := f.Function[strings.LastIndex(f.Function, "/")+1:]
			fmt.Fprintf(&b, "\n\tat %s (%s/%s:%d)", fn, filepath.Base(filepath.Dir(f.File)), filepath.Base(f.File), f.Line)
			kept++
		}
		if !more {
			break
		}
	}
	return b.String()
}

// finishedIDs lists the ids of cells stored without error in dir. Failed
// cells are not finished: a rerun tries them again.
func finishedIDs(dir string) (map[string]bool, error) {
	recs, err := ReadRecords(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	done := make(map[string]bool, len(recs))
	for _, r := range recs {
		if r.OK() && r.Version == ResultsVersion { // another version's cells run again
			done[r.ID] = true
		}
	}
	return done, nil
}

// encodeRecord is the one encoding of a record on disk: compact JSON (a
// sweep writes thousands) with a final newline, so equal records are equal
// bytes.
func encodeRecord(r *Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeRecord writes r to dir/<id>.json through a temporary file and a
// rename, so that a reader (or a killed sweep) never sees half a record.
func writeRecord(dir string, r *Record) error {
	b, err := encodeRecord(r)
	if err != nil {
		return fmt.Errorf("cell %s: encode: %w", r.ID, err)
	}
	return writeFileAtomic(filepath.Join(dir, r.ID+".json"), b)
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed over path.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// ReadRecords reads every cell record under dir/cells, sorted by id.
// Temporary files of an interrupted write are ignored; a record that does not
// parse is an error naming its file.
func ReadRecords(dir string) ([]*Record, error) {
	cdir := filepath.Join(dir, CellsDir)
	ents, err := os.ReadDir(cdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []*Record
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		path := filepath.Join(cdir, name)
		r, err := readRecord(path)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].ID < recs[j].ID })
	return recs, nil
}

func readRecord(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if want := r.Cell.ID(); r.ID != want {
		return nil, fmt.Errorf("%s: record id %q does not match its cell (want %q)", path, r.ID, want)
	}
	if base := strings.TrimSuffix(filepath.Base(path), ".json"); base != r.ID {
		return nil, fmt.Errorf("%s: file name does not match record id %q", path, r.ID)
	}
	return &r, nil
}

// sameResult reports whether two records of one cell agree on everything but
// where the trace was read from (shards on different machines may keep the
// recordings in different directories).
func sameResult(a, b *Record) bool {
	x, y := *a, *b
	x.Cell.Path, y.Cell.Path = "", ""
	ea, err1 := encodeRecord(&x)
	eb, err2 := encodeRecord(&y)
	return err1 == nil && err2 == nil && bytes.Equal(ea, eb)
}

// Merge joins the cells of several sweep output directories (for example the
// shards of one grid) into out. A cell present in several inputs must be
// identical in each, unless one of them failed, in which case the success is
// kept. Merge returns the number of cells in out.
func Merge(out string, inputs ...string) (int, error) {
	merged := map[string]*Record{}
	from := map[string]string{}
	for _, in := range inputs {
		recs, err := ReadRecords(in)
		if err != nil {
			return 0, fmt.Errorf("merge: %w", err)
		}
		if err := CheckVersions(recs); err != nil {
			return 0, fmt.Errorf("merge: %s: %w", in, err)
		}
		if recs == nil {
			if _, err := os.Stat(filepath.Join(in, CellsDir)); err != nil {
				return 0, fmt.Errorf("merge: %s: no %s directory: not a sweep output", in, CellsDir)
			}
		}
		for _, r := range recs {
			have, ok := merged[r.ID]
			if !ok || (!have.OK() && r.OK()) {
				merged[r.ID], from[r.ID] = r, in
				continue
			}
			if !r.OK() {
				continue
			}
			if !sameResult(have, r) {
				return 0, fmt.Errorf("merge: cell %s differs between %s and %s", r.ID, from[r.ID], in)
			}
		}
	}
	dir := filepath.Join(out, CellsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("merge: %w", err)
	}
	for _, id := range slices.Sorted(maps.Keys(merged)) {
		if err := writeRecord(dir, merged[id]); err != nil {
			return 0, fmt.Errorf("merge: %w", err)
		}
	}
	return len(merged), nil
}

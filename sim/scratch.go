package sim

import (
	"runtime"
	"sync"
)

// runScratch is what a run grows that a later run can reuse: its tables and
// numeric arrays, cleared, and its slabs of blocks and content stats,
// zeroed. Growing them anew was half of a run's allocation, and so a share
// of the collections a sweep's runs pay for. It holds no text: a string
// made in a run may outlive it.
type runScratch struct {
	blocks  []*[slabLen]Block
	stats   []*[slabLen]contentStat
	content map[string]int32
	factIdx map[string][]*Block

	// The meter's.
	chains   []uint64
	cum      []int
	sigs     []gramSig
	fresh    []int32
	deadBy   []int64
	prev     []*Block // its own, not a policy's
	ratios   []float64
	sizes    []int32
	lostMore map[lostFact]bool
	memo     map[string]int32
	memos    []factMemo
	ant      anthropicCache

	// The region policy's.
	calls  callTable
	seen   seenSet
	index  blockTable
	cached []*Block
	marks  []int32
	arrays [2][]*Block
}

// scratches holds the scratch of finished runs; each run takes its own.
var scratches scratchList

// scratchList is a free list of scratches that lets go of one left unused
// through two collections, as a sync.Pool does. It is not a sync.Pool because
// a pool hands a goroutine what was put on the same P: a run that starts on
// the other P (each benchmark count and each sweep worker is a goroutine
// of its own) found nothing and grew a new scratch of ~5 MB, one run in ten
// in BenchmarkRun.
type scratchList struct {
	mu    sync.Mutex
	free  []idleScratch // last put on top
	armed bool          // a collection will age free
}

type idleScratch struct {
	s   *runScratch
	gcs int // collections since it was put
}

func (l *scratchList) get() *runScratch {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.free)
	if n == 0 {
		return new(runScratch)
	}
	s := l.free[n-1].s
	l.free[n-1] = idleScratch{}
	l.free = l.free[:n-1]
	return s
}

func (l *scratchList) put(s *runScratch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.free = append(l.free, idleScratch{s: s})
	if !l.armed {
		l.armed = true
		l.arm()
	}
}

// arm has age called after the next collection: the cleanup of an object
// that nothing holds runs once a collection has found it unreachable.
func (l *scratchList) arm() {
	// 16 bytes, so not a tiny allocation, whose cleanup might never run.
	runtime.AddCleanup(new([16]byte), func(l *scratchList) { l.age() }, l)
}

// age drops the scratches unused through two collections, and arms again
// while any is left.
func (l *scratchList) age() {
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.free[:0]
	for _, f := range l.free {
		if f.gcs++; f.gcs < 2 {
			kept = append(kept, f)
		}
	}
	clear(l.free[len(kept):])
	l.free = kept
	l.armed = len(kept) > 0
	if l.armed {
		l.arm()
	}
}

// reclaim takes back, reset, what the run of e and r (nil if the run
// failed before it started) took from s and grew: no block, event or
// string of the run stays reachable from s.
func (s *runScratch) reclaim(e *env, r *runner) {
	e.release()
	s.blocks, s.stats = e.slabs, e.stats
	clear(e.content)
	clear(e.factIdx)
	s.content, s.factIdx = e.content, e.factIdx
	if r == nil {
		return
	}
	m := &r.m
	clear(m.lostMore)
	clear(m.memo)
	memos := m.memos[:cap(m.memos)]
	for i := range memos {
		clear(memos[i].hits)
		memos[i] = factMemo{hits: memos[i].hits[:0]}
	}
	clear(m.ratios)
	clear(m.sizes)
	s.ratios, s.sizes, s.lostMore, s.memo, s.memos = m.ratios[:0], m.sizes[:0], m.lostMore, m.memo, memos[:0]
	v := &m.view
	clear(v.chains[:cap(v.chains)])
	clear(v.cum[:cap(v.cum)])
	clear(m.sigs[:cap(m.sigs)])
	clear(m.fresh[:cap(m.fresh)])
	clear(m.deadBy)
	s.chains, s.cum, s.sigs, s.fresh, s.deadBy = v.chains[:0], v.cum[:0], m.sigs[:0], m.fresh[:0], m.deadBy[:0]
	// A region policy's requests are the meter's prev: the meter's own,
	// if any, is the scratch's still.
	clear(s.prev[:cap(s.prev)])
	p, ok := r.pol.(*regionPolicy)
	if !ok {
		clear(m.prev[:cap(m.prev)])
		s.prev = m.prev[:0]
	}
	if ok {
		clear(p.calls.infos)
		clear(p.calls.index)
		clear(p.seen.slots)
		clear(p.index.slots)
		clear(p.cached)
		clear(p.marks[:cap(p.marks)])
		for i := range p.arrays {
			clear(p.arrays[i])
		}
		s.calls = callTable{infos: p.calls.infos[:0], index: p.calls.index}
		s.seen = seenSet{slots: p.seen.slots}
		s.index = blockTable{slots: p.index.slots}
		s.cached, s.marks, s.arrays = p.cached[:0], p.marks[:0], p.arrays
	}
}

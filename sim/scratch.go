package sim

import "sync"

// runScratch is what a run grows that a later run can reuse: its tables and
// numeric arrays, cleared, and its slabs of blocks and content stats,
// zeroed. Growing them anew was half of a run's allocation, and so a share
// of the collections a sweep's runs pay for. It holds no text: a string
// made in a run may outlive it.
type runScratch struct {
	blocks  []*[slabLen]Block
	stats   []*[slabLen]contentStat
	content map[string]*contentStat
	factIdx map[string][]*Block

	// The meter's.
	chains []uint64
	cum    []int
	sigs   []gramSig
	fresh  []int32
	deadBy []int64
	prev   []*Block // its own, not a policy's
	ratios []float64
	sizes  []int32
	lost   map[lostFact]bool
	memo   map[string]int32
	memos  []factMemo
	ant    anthropicCache

	// The region policy's.
	calls  callTable
	seen   seenSet
	index  blockTable
	cached []*Block
	arrays [2][]*Block
}

// scratches holds the scratch of finished runs; each run takes its own.
var scratches = sync.Pool{New: func() any { return new(runScratch) }}

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
	clear(m.lost)
	clear(m.memo)
	memos := m.memos[:cap(m.memos)]
	for i := range memos {
		clear(memos[i].hits)
		memos[i] = factMemo{hits: memos[i].hits[:0]}
	}
	clear(m.ratios)
	clear(m.sizes)
	s.ratios, s.sizes, s.lost, s.memo, s.memos = m.ratios[:0], m.sizes[:0], m.lost, m.memo, memos[:0]
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
		for i := range p.arrays {
			clear(p.arrays[i])
		}
		s.calls = callTable{infos: p.calls.infos[:0], index: p.calls.index}
		s.seen = seenSet{slots: p.seen.slots}
		s.index = blockTable{slots: p.index.slots}
		s.cached, s.arrays = p.cached[:0], p.arrays
	}
}

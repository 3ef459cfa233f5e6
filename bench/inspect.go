package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim"
)

// Inspection is one request of a run, block by block: what ctxsim inspect
// prints, like the reference runtime's `lev test`.
type Inspection struct {
	Step     int    `json:"step"`     // 1-based request number
	Requests int    `json:"requests"` // requests the run had reached (the step's own included)
	Policy   string `json:"policy"`
	Model    string `json:"model"`
	Window   int    `json:"window_tokens"`
	Tokens   int    `json:"tokens"`
	// StableTokens is the request's common prefix with the previous request.
	StableTokens int `json:"stable_tokens"`
	// PrefixEndsBlock is the 0-based index of the first block not wholly in
	// that common prefix (len(Blocks) when the whole request is);
	// PrefixTokensIntoBlock is how many of its tokens still are.
	PrefixEndsBlock       int              `json:"prefix_ends_block"`
	PrefixTokensIntoBlock int              `json:"prefix_tokens_into_block"`
	CacheReadTokens       int              `json:"cache_read_tokens"`
	Blocks                []InspectedBlock `json:"blocks"`
	Regions               []RegionUse      `json:"regions,omitempty"`
}

// InspectedBlock is one block of an inspected request.
type InspectedBlock struct {
	Index  int    `json:"index"`
	Region string `json:"region,omitempty"`
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Tokens int    `json:"tokens"`
	// Cache is the cache breakpoint the request puts after this block: "",
	// "5m" or "1h".
	Cache string `json:"cache,omitempty"`
	// Text is the block's content; Size its length when elided.
	Text string `json:"text,omitempty"`
	Size int    `json:"size,omitempty"`
	// Facts are the ids of the facts the block holds.
	Facts []string `json:"facts,omitempty"`
	// Hash identifies the content; equal hashes are equal content.
	Hash string `json:"hash"`
}

// RegionUse is one region's tokens in the request.
type RegionUse struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// errInspected stops a run once the inspected request was captured.
var errInspected = errors.New("inspected")

// Inspect replays src through cfg and captures request number step
// (1-based; 0 means the last request of the run).
func Inspect(ctx context.Context, src sim.Source, cfg sim.Config, step int) (*Inspection, error) {
	if step < 0 {
		return nil, fmt.Errorf("step %d: want a request number >= 1 (or 0 for the last)", step)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	insp := &inspector{step: step, cancel: cancel}
	cfg.Series = insp
	_, err := sim.Run(ctx, src, cfg)
	if insp.got != nil && (err == nil || errors.Is(context.Cause(ctx), errInspected)) {
		if step == 0 {
			insp.got.Requests = insp.seen
		}
		return insp.got, nil
	}
	if err != nil {
		return nil, err
	}
	if insp.seen == 0 {
		return nil, errors.New("the run made no request (the trace has no assistant turn)")
	}
	return nil, fmt.Errorf("step %d: the run made only %d requests", step, insp.seen)
}

// inspector is the SeriesSink that captures one request.
type inspector struct {
	step   int
	cancel context.CancelCauseFunc
	seen   int
	prev   []uint64 // block hashes of the previous request
	got    *Inspection
}

func (in *inspector) Request(s sim.RequestSample) {
	in.seen = s.Index
	req := s.Request
	if req == nil {
		return
	}
	if in.step == 0 || s.Index == in.step {
		in.got = capture(s, req, in.prev)
		in.got.Requests = s.Index
		if in.step != 0 {
			in.cancel(errInspected)
		}
	}
	in.prev = in.prev[:0]
	for _, b := range req.Blocks {
		in.prev = append(in.prev, b.Hash)
	}
}

func capture(s sim.RequestSample, req *sim.Request, prev []uint64) *Inspection {
	ins := &Inspection{Step: s.Index, Tokens: s.RequestTokens, StableTokens: s.StableTokens, CacheReadTokens: s.CacheReadTokens}
	marks := map[int]string{}
	for _, m := range req.Marks {
		marks[m.Index] = m.TTL
	}
	ins.PrefixEndsBlock = len(req.Blocks)
	covered := 0
	for i, b := range req.Blocks {
		ib := InspectedBlock{Index: i, Region: b.Region, Kind: b.Kind.String(), ID: b.ID, Tokens: b.Tokens,
			Cache: marks[i], Text: engine.ExpandFiller(b.Text), Size: b.Size, Hash: fmt.Sprintf("%016x", b.Hash)}
		for _, f := range b.Facts {
			ib.Facts = append(ib.Facts, f.ID)
		}
		ins.Blocks = append(ins.Blocks, ib)
		if ins.PrefixEndsBlock == len(req.Blocks) && (i >= len(prev) || prev[i] != b.Hash) {
			ins.PrefixEndsBlock = i
			ins.PrefixTokensIntoBlock = max(0, s.StableTokens-covered)
		}
		if ins.PrefixEndsBlock == len(req.Blocks) {
			covered += b.Tokens
		}
	}
	for _, r := range req.Regions {
		ins.Regions = append(ins.Regions, RegionUse{r.Name, r.Tokens})
	}
	return ins
}

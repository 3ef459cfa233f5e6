package importers

import (
	"bufio"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// importCanonical passes a canonical trace through unchanged (so that
// converting twice gives the same bytes), validating it on the way.
func importCanonical(b *builder, br *bufio.Reader) error {
	r := trace.NewReader(br, b.name)
	h, err := r.Header()
	if err != nil {
		return err
	}
	b.hdr, b.hdrSet = h, true
	b.counts.Format = h.Source
	for r.Scan() {
		e := *r.Event()
		b.counts.Add(&e)
		if err := b.emit(&e); err != nil {
			return err
		}
	}
	return r.Err()
}

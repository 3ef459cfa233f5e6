package engine

import (
	"fmt"
	"testing"
)

// push calls enforceSliding only past slideAt: for every strategy, the
// strategy acts exactly when a window holds more than slideAt entries.
func TestSlideAt(t *testing.T) {
	for _, def := range []string{
		`kind = "sliding_window", max_items = 5, strategy = "per_item"`,
		`kind = "sliding_window", max_items = 5, strategy = "bulk", overflow = 3`,
		`kind = "sliding_window", max_items = 4, strategy = "bulk", overflow = 0`,
		`kind = "sliding_window", max_items = 5, strategy = "compact", compact_count = 2`,
		`kind = "sliding_window", max_items = 3, strategy = "compact", compact_count = 1`,
		`kind = "sliding_window", max_items = 6`,
	} {
		c := newCtx(t, "conversation = { "+def+", max_tokens = 100000 }\n", Options{})
		r := c.conv
		acts := 0
		for i := range 60 {
			// push's steps but its check: whether the strategy acts is
			// seen whatever slideAt says.
			e := c.newEntry(EntryUser, fmt.Sprint("message ", i))
			c.stampEntry(e)
			r.appendEntry(e)
			c.total += e.tokens
			n := len(r.entries)
			c.enforceSliding(r)
			acted := len(r.entries) != n
			if acted != (n > r.slideAt) {
				t.Fatalf("%s: %d entries, slideAt %d, strategy acted %v", def, n, r.slideAt, acted)
			}
			if acted {
				acts++
			}
		}
		if acts == 0 {
			t.Errorf("%s: the strategy never acted", def)
		}
	}
}

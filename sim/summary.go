package sim

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/engine"
	"github.com/ctxsim/ctxsim/sim/trace"
)

// summaryMaxTokens is the summariser's output cap: the reference runtime's
// max_summary_tokens default (spec/ENGINE.md §5).
const summaryMaxTokens = 2000

// summaryRegion names what flat-compact summarises in the summary's header.
const summaryRegion = "earlier messages"

// summarize folds blocks into one summary block with the engine's
// deterministic extractive summariser (decision D9), the one the region policy
// runs, on the same text: each block's content (elided content as the
// same-size stand-in with its facts in the middle, as the region policy
// writes it into the engine), blocks joined by blank lines as the engine joins
// a region's entries. The summary lists no facts: a fact survives only if the
// summariser keeps its line, so flat-compact and the regions are judged by
// one rule (listing the blocks' facts on the summary made it an oracle). The
// call is charged to the run: the input it read and the summary it wrote.
func summarize(e *env, blocks []*Block, maxTokens int) *Block {
	if maxTokens <= 0 {
		maxTokens = summaryMaxTokens
	}
	in, size := 0, 0
	for _, b := range blocks {
		in += b.Tokens
		size += len(b.Text) + b.Size + 2
	}
	var sb strings.Builder
	sb.Grow(size)
	for _, b := range blocks {
		if b.Text == "" && b.Size == 0 {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		writeContent(&sb, b)
	}
	e.compactionSeq++
	id := fmt.Sprintf("summary#%d", e.compactionSeq)
	text, err := engine.Extractive{}.Summarize(engine.SummaryRequest{
		Region: summaryRegion, Content: sb.String(), MaxTokens: maxTokens, Counter: tokenCounter{e.tok},
	})
	if err != nil {
		// Nothing to summarise (or no room for a line): the summary says only
		// what it replaced, as an empty summary would.
		text = fmt.Sprintf("[summary of %s: %d messages, nothing kept]", summaryRegion, len(blocks))
	}
	sum := e.newBlock(BlockSummary, id, text, 0, nil)
	e.sumIn += in
	e.sumOut += sum.Tokens
	return sum
}

// writeContent writes the text a block stands for: its text, or for elided
// content the stand-in the region policy gives the engine.
func writeContent(sb *strings.Builder, b *Block) {
	if b.Text != "" || b.Size == 0 {
		sb.WriteString(b.Text)
		return
	}
	writeStandIn(sb, b.Size, b.Facts)
}

// tokenCounter counts for the engine's summariser with the simulator's
// tokenizer (a run of elided-content filler as bytes, as blocks are counted).
type tokenCounter struct{ tok Tokenizer }

func (c tokenCounter) Count(text string) int { return countText(c.tok, text) }

var _ engine.TokenCounter = tokenCounter{}

// standIn is elided content of size bytes: filler with the facts verbatim in
// its middle, one a line (neither first nor last, where real content would
// have them).
func standIn(size int, facts []trace.Fact) string {
	if len(facts) == 0 {
		// Most stand-ins are fact-free: two runs of filler, each ending in a
		// newline, the second as long as the first or one longer. One string
		// holds such a pair for every length up to maxFillerRun, so they
		// cost no allocation however long the engine keeps them.
		pad := max(0, size-2)
		if b := pad - pad/2; b < maxFillerRun {
			runs := fillerRuns()
			i := len(runs) - (b+1)*(b+2)/2 // where the run of b starts
			return runs[i-1-pad/2 : i+b+1]
		}
	}
	var sb strings.Builder
	writeStandIn(&sb, size, facts)
	return sb.String()
}

func writeStandIn(sb *strings.Builder, size int, facts []trace.Fact) {
	n := 0
	for _, f := range facts {
		n += len(f.Text) + 1
	}
	pad := max(0, size-n-2)
	sb.Grow(pad + n + 2)
	writeFiller(sb, pad/2)
	sb.WriteByte('\n')
	for _, f := range facts {
		sb.WriteString(f.Text)
		sb.WriteByte('\n')
	}
	writeFiller(sb, pad-pad/2)
	sb.WriteByte('\n')
}

// appendStandIn appends standIn(size, facts) to b.
func appendStandIn(b []byte, size int, facts []trace.Fact) []byte {
	n := 0
	for _, f := range facts {
		n += len(f.Text) + 1
	}
	pad := max(0, size-n-2)
	b = appendFiller(b, pad/2)
	b = append(b, '\n')
	for _, f := range facts {
		b = append(b, f.Text...)
		b = append(b, '\n')
	}
	b = appendFiller(b, pad-pad/2)
	return append(b, '\n')
}

// standInLen is len(standIn(size, facts)).
func standInLen(size int, facts []trace.Fact) int {
	n := 2
	for _, f := range facts {
		n += len(f.Text) + 1
	}
	return max(size, n)
}

func appendFiller(b []byte, n int) []byte {
	for n > 0 {
		k := min(n, len(filler))
		b = append(b, filler[:k]...)
		n -= k
	}
	return b
}

// filler is a run of fillerByte to copy from.
var filler = strings.Repeat(fillerByte, 4096)

// maxFillerRun bounds the runs of fillerRuns: stand-ins of up to 8 KB
// (8 MB of runs, made once per process on first use).
const maxFillerRun = 4100

// fillerRuns is runs of filler of lengths maxFillerRun down to 0, each
// followed by a newline: a run of n preceded by the end of a run of n+1.
var fillerRuns = sync.OnceValue(func() string {
	var sb strings.Builder
	sb.Grow((maxFillerRun + 1) * (maxFillerRun + 2) / 2)
	for n := maxFillerRun; n >= 0; n-- {
		writeFiller(&sb, n)
		sb.WriteByte('\n')
	}
	return sb.String()
})

func writeFiller(sb *strings.Builder, n int) {
	for n > 0 {
		k := min(n, len(filler))
		sb.WriteString(filler[:k])
		n -= k
	}
}

package sim

import (
	"fmt"
	"strings"

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
		size += len(b.Text) + 2
		if b.Text == "" && b.Size > 0 {
			size += standInLen(b.Size, b.Facts, e.literalRuns) // not the Size bytes it stands for
		}
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
		writeContent(&sb, b, e.literalRuns)
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
func writeContent(sb *strings.Builder, b *Block, literal bool) {
	if b.Text != "" || b.Size == 0 {
		sb.WriteString(b.Text)
		return
	}
	writeStandIn(sb, b.Size, b.Facts, literal)
}

// tokenCounter counts for the engine's summariser with the simulator's
// tokenizer (a run of elided-content filler as bytes, as blocks are counted).
type tokenCounter struct{ tok Tokenizer }

func (c tokenCounter) Count(text string) int { return countText(c.tok, text) }

var _ engine.TokenCounter = tokenCounter{}

// standIn is elided content of size bytes: filler with the facts verbatim in
// its middle, one a line (neither first nor last, where real content would
// have them). Its runs of filler are encoded (engine.AppendFiller), so that
// a stand-in costs bytes for its facts only, however large the content it
// stands for: the engine and the meter take a run for the bytes it encodes.
// Written out (literal, for tests), it is the text the encoding stands for.
func standIn(size int, facts []trace.Fact, literal bool) string {
	return string(appendStandIn(make([]byte, 0, standInLen(size, facts, literal)), size, facts, literal))
}

func writeStandIn(sb *strings.Builder, size int, facts []trace.Fact, literal bool) {
	var buf [64]byte
	sb.Write(appendStandIn(buf[:0], size, facts, literal))
}

// appendStandIn appends standIn(size, facts, literal) to b.
func appendStandIn(b []byte, size int, facts []trace.Fact, literal bool) []byte {
	n := 0
	for _, f := range facts {
		n += len(f.Text) + 1
	}
	pad := max(0, size-n-2)
	b = appendFiller(b, pad/2, literal)
	b = append(b, '\n')
	for _, f := range facts {
		b = append(b, f.Text...)
		b = append(b, '\n')
	}
	b = appendFiller(b, pad-pad/2, literal)
	return append(b, '\n')
}

// standInLen is len(standIn(size, facts, literal)).
func standInLen(size int, facts []trace.Fact, literal bool) int {
	n := 2
	for _, f := range facts {
		n += len(f.Text) + 1
	}
	if literal {
		return max(size, n)
	}
	pad := max(0, size-n)
	return n + fillerLen(pad/2) + fillerLen(pad-pad/2)
}

// fillerLen is the bytes of n bytes of filler, encoded.
func fillerLen(n int) int {
	var buf [16]byte
	return len(engine.AppendFiller(buf[:0], n))
}

// appendFiller appends n bytes of filler, encoded unless literal.
func appendFiller(b []byte, n int, literal bool) []byte {
	if !literal {
		return engine.AppendFiller(b, n)
	}
	for n > 0 {
		k := min(n, len(filler))
		b = append(b, filler[:k]...)
		n -= k
	}
	return b
}

// filler is a run of fillerByte to copy from.
var filler = strings.Repeat(fillerByte, 4096)

package sim

import (
	"fmt"
	"strings"

	"github.com/ctxsim/ctxsim/sim/trace"
)

// summaryMaxTokens is the summariser's output cap: the reference runtime's
// max_summary_tokens default (spec/ENGINE.md §5).
const summaryMaxTokens = 2000

// summarize folds blocks into one summary block with the deterministic
// extractive summariser the flat-compact baseline uses (the same idea as the
// engine's default, decision D9): it keeps the task verbatim when it fits in
// half the budget (a compaction summary's "primary request" section), then
// the facts the content was known to carry, newest first (what a summary
// prompt asks to preserve), then the first line of each message, newest
// first, until maxTokens. Its call is charged to the run: the input it read
// and the summary it wrote.
func summarize(e *env, blocks []*Block, maxTokens int) *Block {
	if maxTokens <= 0 {
		maxTokens = summaryMaxTokens
	}
	in := 0
	for _, b := range blocks {
		in += b.Tokens
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Summary of %d earlier messages (%d tokens).\n", len(blocks), in)
	used := e.tok.Count(sb.String())
	add := func(line string) bool {
		n := e.tok.Count(line) + 1
		if used+n > maxTokens {
			return false
		}
		used += n
		sb.WriteString(line)
		sb.WriteByte('\n')
		return true
	}
	var facts []trace.Fact
	seen := map[string]bool{}
	for _, b := range blocks {
		if b.Kind == BlockTask && b.Text != "" && e.tok.Count(b.Text) <= maxTokens/2 {
			add("Task: " + b.Text)
		}
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		for _, f := range blocks[i].Facts {
			if !seen[f.ID] {
				seen[f.ID] = true
				if add("- " + f.Text) {
					facts = append(facts, f)
				}
			}
		}
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		if b.Text == "" || b.Kind == BlockTask {
			continue
		}
		line, _, _ := strings.Cut(b.Text, "\n")
		if len(line) > 160 {
			line = line[:160]
		}
		if !add(b.Kind.String() + ": " + line) {
			break
		}
	}
	text := sb.String()
	e.compactionSeq++
	sum := e.newBlock(BlockSummary, fmt.Sprintf("summary#%d", e.compactionSeq), text, 0, facts)
	e.sumIn += in
	e.sumOut += sum.Tokens
	return sum
}

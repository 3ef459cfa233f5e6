package engine

// TokenCounter counts the tokens of a text. The engine calls it once per
// entry, when the entry is written.
type TokenCounter interface {
	Count(text string) int
}

// BytesPerFour is the reference runtime's estimate: bytes/4 rounded up.
type BytesPerFour struct{}

// Count implements TokenCounter.
func (BytesPerFour) Count(text string) int { return estimateTokens(text) }

func estimateTokens(s string) int { return lenTokens(TextLen(s)) }

// lenTokens is BytesPerFour's count of a text whose TextLen is n.
func lenTokens(n int) int { return (n + 3) / 4 }

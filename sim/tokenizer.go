package sim

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Tokenizer counts the tokens of a text the way one model family does.
type Tokenizer interface {
	Name() string
	// Count returns the tokens of text.
	Count(text string) int
	// CountBytes estimates the tokens of n bytes of elided content.
	CountBytes(n int) int
}

// Tokenizers lists the tokenizer names a profile may use.
func Tokenizers() []string {
	return []string{"bytes/4", "bytes/3.5", "o200k_base", "cl100k_base"}
}

// NewTokenizer returns the tokenizer called name.
func NewTokenizer(name string) (Tokenizer, error) {
	switch name {
	case "bytes/4":
		return bytesPer{name, 4}, nil
	case "bytes/3.5":
		return bytesPer{name, 3.5}, nil
	case "o200k_base", "cl100k_base":
		c, err := bpeCodec(tokenizer.Encoding(name))
		if err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", name, err)
		}
		return &bpe{name: name, codec: c}, nil
	}
	return nil, checkTokenizer(name)
}

// checkTokenizer reports whether NewTokenizer knows name, without loading a
// BPE vocabulary: its maps take megabytes that every GC cycle of the process
// would mark, which profiles that never count with it should not cost.
func checkTokenizer(name string) error {
	if slices.Contains(Tokenizers(), name) {
		return nil
	}
	return fmt.Errorf("unknown tokenizer %q (want bytes/4, bytes/3.5, o200k_base or cl100k_base)", name)
}

// bytesPer counts ceil(bytes / per), as the reference runtime estimates.
type bytesPer struct {
	name string
	per  float64
}

func (b bytesPer) Name() string          { return b.name }
func (b bytesPer) Count(text string) int { return b.CountBytes(len(text)) }
func (b bytesPer) CountBytes(n int) int {
	if n <= 0 {
		return 0
	}
	return int(math.Ceil(float64(n) / b.per))
}

// Loading a BPE vocabulary takes a while; codecs are shared by every run and
// are safe for concurrent use.
var (
	bpeMu     sync.Mutex
	bpeCodecs = map[tokenizer.Encoding]tokenizer.Codec{}
)

func bpeCodec(enc tokenizer.Encoding) (tokenizer.Codec, error) {
	bpeMu.Lock()
	defer bpeMu.Unlock()
	if c, ok := bpeCodecs[enc]; ok {
		return c, nil
	}
	c, err := tokenizer.Get(enc)
	if err != nil {
		return nil, err
	}
	bpeCodecs[enc] = c
	return c, nil
}

// bpe is a real byte-pair encoder. Counting is slow, so a run's tokenizer
// memoises counts by content hash (one tokenizer per run: no locking).
type bpe struct {
	name  string
	codec tokenizer.Codec
	memo  map[uint64]int
}

func (b *bpe) Name() string { return b.name }

func (b *bpe) Count(text string) int {
	if text == "" {
		return 0
	}
	h := hashContent(BlockSystem, "", text, 0)
	if n, ok := b.memo[h]; ok {
		return n
	}
	n, err := b.codec.Count(text)
	if err != nil {
		// Invalid UTF-8 the codec refuses: fall back to bytes/4 for this text.
		n = bytesPer{"", 4}.Count(text)
	}
	if b.memo == nil {
		b.memo = make(map[uint64]int)
	}
	b.memo[h] = n
	return n
}

// CountBytes estimates elided content at 4 bytes per token, the usual
// density of English text under o200k_base and cl100k_base.
func (b *bpe) CountBytes(n int) int { return bytesPer{"", 4}.CountBytes(n) }

// fresh returns a tokenizer with its own memo, for one run.
func freshTokenizer(t Tokenizer) Tokenizer {
	if b, ok := t.(*bpe); ok {
		return &bpe{name: b.name, codec: b.codec}
	}
	return t
}

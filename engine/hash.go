package engine

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Content hashes are XXH64 (seed 0), from github.com/cespare/xxhash/v2:
// deterministic across runs and machines, so golden files and cross-run
// comparisons hold. The streaming form lets a one-block region that only
// grew extend its hash instead of rehashing (a grows region's chunks are
// short, and hashed whole).

// hasher is a streaming XXH64; Sum does not disturb the state, and a copy
// of a hasher goes on from where the original was.
type hasher struct{ d xxhash.Digest }

func newHasher() hasher {
	var h hasher
	h.d.Reset()
	return h
}

// WriteString adds s to the hashed stream.
func (h *hasher) WriteString(s string) { h.d.WriteString(s) }

// Sum returns the hash of everything written so far.
func (h *hasher) Sum() uint64 { return h.d.Sum64() }

// head adds a field and its separator, 0.
func (h *hasher) head(s string) {
	h.d.WriteString(s)
	h.d.WriteString("\x00")
}

// Short fields (ids, names, arguments, a tool result's text: 2 to 200
// bytes, mostly) are joined on the stack and hashed in one pass: streaming
// them through a Digest's buffer costs more than the copy. The buffers are
// as small as their usual fields (they are zeroed per call).
const (
	shortMax = 64  // a tool call's id, name and arguments
	pairMax  = 256 // a tool result's id and text
)

// hashText is the content hash of a block's text.
func hashText(s string) uint64 { return xxhash.Sum64String(s) }

// hashPair is hashParts of two (tool results).
func hashPair(a, b string) uint64 {
	if len(a)+1+len(b) <= pairMax {
		var buf [pairMax]byte
		n := copy(buf[:], a) + 1 // and the separator, 0
		n += copy(buf[n:], b)
		return xxhash.Sum64(buf[:n])
	}
	h := newHasher()
	h.head(a)
	h.WriteString(b)
	return h.Sum()
}

// hashCall is hashParts(id, name, string(args)) (tool calls), without the
// conversion.
func hashCall(id, name string, args []byte) uint64 {
	if len(id)+len(name)+2+len(args) <= shortMax {
		var buf [shortMax]byte
		n := copy(buf[:], id) + 1
		n += copy(buf[n:], name) + 1
		n += copy(buf[n:], args)
		return xxhash.Sum64(buf[:n])
	}
	h := newHasher()
	h.head(id)
	h.head(name)
	h.d.Write(args)
	return h.Sum()
}

// hashParts hashes several fields with separators (tool blocks).
func hashParts(parts ...string) uint64 {
	h := newHasher()
	for i, p := range parts {
		if i < len(parts)-1 {
			h.head(p)
		} else {
			h.WriteString(p)
		}
	}
	return h.Sum()
}

// mix folds in into a running digest that is only compared for equality
// (an XXH64 round: cheap, and every bit of in reaches the result).
func mix(acc, in uint64) uint64 {
	const p1, p2 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F
	return bits.RotateLeft64(acc+in*p2, 31) * p1
}

// le64 reads a little-endian word (the compiler makes it one load).
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

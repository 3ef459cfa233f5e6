package engine

import (
	"encoding/binary"
	"math/bits"
)

// Content hashes are XXH64 (seed 0): deterministic across runs and
// machines, so golden files and cross-run comparisons hold, and about ten
// times faster than a byte-at-a-time hash on large regions. The streaming
// form lets a region that only grew extend its hash instead of rehashing.

const (
	xxP1 uint64 = 0x9E3779B185EBCA87
	xxP2 uint64 = 0xC2B2AE3D27D4EB4F
	xxP3 uint64 = 0x165667B19E3779F9
	xxP4 uint64 = 0x85EBCA77C2B2AE63
	xxP5 uint64 = 0x27D4EB2F165667C5
)

// hasher is a streaming XXH64; Sum does not disturb the state.
type hasher struct {
	v     [4]uint64
	buf   [32]byte
	n     int
	total uint64
}

func newHasher() hasher {
	var h hasher
	p1, p2 := xxP1, xxP2 // wrap at run time, as the algorithm intends
	h.v = [4]uint64{p1 + p2, p2, 0, 0 - p1}
	return h
}

func xxRound(acc, in uint64) uint64 {
	return bits.RotateLeft64(acc+in*xxP2, 31) * xxP1
}

func xxMerge(acc, v uint64) uint64 {
	return (acc^xxRound(0, v))*xxP1 + xxP4
}

func (h *hasher) stripe(b []byte) {
	h.v[0] = xxRound(h.v[0], binary.LittleEndian.Uint64(b[0:]))
	h.v[1] = xxRound(h.v[1], binary.LittleEndian.Uint64(b[8:]))
	h.v[2] = xxRound(h.v[2], binary.LittleEndian.Uint64(b[16:]))
	h.v[3] = xxRound(h.v[3], binary.LittleEndian.Uint64(b[24:]))
}

// WriteString adds s to the hashed stream.
func (h *hasher) WriteString(s string) {
	h.total += uint64(len(s))
	if h.n > 0 {
		k := copy(h.buf[h.n:], s)
		h.n += k
		s = s[k:]
		if h.n < 32 {
			return
		}
		h.stripe(h.buf[:])
		h.n = 0
	}
	if len(s) >= 32 {
		// The lanes stay in registers and the words are read from s
		// itself, not from a copy of each stripe.
		v0, v1, v2, v3 := h.v[0], h.v[1], h.v[2], h.v[3]
		for len(s) >= 32 {
			v0 = xxRound(v0, le64(s[0:8]))
			v1 = xxRound(v1, le64(s[8:16]))
			v2 = xxRound(v2, le64(s[16:24]))
			v3 = xxRound(v3, le64(s[24:32]))
			s = s[32:]
		}
		h.v = [4]uint64{v0, v1, v2, v3}
	}
	h.n = copy(h.buf[:], s)
}

// le64 reads a little-endian word (the compiler makes it one load).
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Sum returns the hash of everything written so far.
func (h *hasher) Sum() uint64 {
	acc := xxP5
	if h.total >= 32 {
		acc = xxLanes(h.v)
	}
	return xxTail(acc+h.total, h.buf[:h.n])
}

// xxh64 is the XXH64 of b in one pass: what a hasher that wrote b sums to.
func xxh64(b []byte) uint64 {
	n := uint64(len(b))
	acc := xxP5
	if len(b) >= 32 {
		p1, p2 := xxP1, xxP2
		v0, v1, v2, v3 := p1+p2, p2, uint64(0), 0-p1
		for len(b) >= 32 {
			v0 = xxRound(v0, binary.LittleEndian.Uint64(b[0:]))
			v1 = xxRound(v1, binary.LittleEndian.Uint64(b[8:]))
			v2 = xxRound(v2, binary.LittleEndian.Uint64(b[16:]))
			v3 = xxRound(v3, binary.LittleEndian.Uint64(b[24:]))
			b = b[32:]
		}
		acc = xxLanes([4]uint64{v0, v1, v2, v3})
	}
	return xxTail(acc+n, b)
}

// xxLanes merges the four lanes of an input of 32 bytes or more.
func xxLanes(v [4]uint64) uint64 {
	acc := bits.RotateLeft64(v[0], 1) + bits.RotateLeft64(v[1], 7) + bits.RotateLeft64(v[2], 12) + bits.RotateLeft64(v[3], 18)
	acc = xxMerge(acc, v[0])
	acc = xxMerge(acc, v[1])
	acc = xxMerge(acc, v[2])
	return xxMerge(acc, v[3])
}

// xxTail mixes in the last bytes (under 32), then avalanches.
func xxTail(acc uint64, b []byte) uint64 {
	for len(b) >= 8 {
		acc ^= xxRound(0, binary.LittleEndian.Uint64(b))
		acc = bits.RotateLeft64(acc, 27)*xxP1 + xxP4
		b = b[8:]
	}
	if len(b) >= 4 {
		acc ^= uint64(binary.LittleEndian.Uint32(b)) * xxP1
		acc = bits.RotateLeft64(acc, 23)*xxP2 + xxP3
		b = b[4:]
	}
	for _, c := range b {
		acc ^= uint64(c) * xxP5
		acc = bits.RotateLeft64(acc, 11) * xxP1
	}
	acc ^= acc >> 33
	acc *= xxP2
	acc ^= acc >> 29
	acc *= xxP3
	acc ^= acc >> 32
	return acc
}

// Short fields (ids, names, arguments, text, a tool result's pointer: 2 to
// 200 bytes, mostly) are joined on the stack and hashed in one pass:
// streaming them through a hasher's buffer cost more than hashing them.
// The buffers are as small as their usual fields (they are zeroed per call).
const (
	shortMax = 64  // text, and a tool call's id, name and arguments
	pairMax  = 256 // a tool result's id and text
)

// hashText is the content hash of a block's text.
func hashText(s string) uint64 {
	if len(s) <= shortMax {
		var buf [shortMax]byte
		return xxh64(buf[:copy(buf[:], s)])
	}
	h := newHasher()
	h.WriteString(s)
	return h.Sum()
}

// hashPair is hashParts of two (tool results).
func hashPair(a, b string) uint64 {
	if len(a)+1+len(b) <= pairMax {
		var buf [pairMax]byte
		n := copy(buf[:], a) + 1 // and the separator, 0
		n += copy(buf[n:], b)
		return xxh64(buf[:n])
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
		return xxh64(buf[:n])
	}
	h := newHasher()
	h.head(id)
	h.head(name)
	h.WriteString(string(args))
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

// head adds a field and its separator: short ones (ids, names) go to the
// buffer directly, not through two WriteString calls.
func (h *hasher) head(s string) {
	if h.n+len(s) >= len(h.buf) {
		h.WriteString(s)
		h.WriteString("\x00")
		return
	}
	h.n += copy(h.buf[h.n:], s)
	h.buf[h.n] = 0
	h.n++
	h.total += uint64(len(s) + 1)
}

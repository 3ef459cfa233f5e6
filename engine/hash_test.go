package engine

import (
	"strings"
	"testing"
)

func TestXXH64(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0xEF46DB3751D8E999},
		{"a", 0xD24EC4F1A98C6E5B},
		{"abc", 0x44BC2CF5AD770999},
	} {
		if got := hashText(c.in); got != c.want {
			t.Errorf("xxh64(%q) = %016x, want %016x", c.in, got, c.want)
		}
	}
	t.Run("streaming equals one shot at every split", func(t *testing.T) {
		s := strings.Repeat("the quick brown fox jumps over the lazy dog ", 5)
		want := hashText(s)
		for i := 0; i <= len(s); i++ {
			for j := i; j <= len(s); j += 7 {
				h := newHasher()
				h.WriteString(s[:i])
				mid := h.Sum() // Sum must not disturb the state
				h.WriteString(s[i:j])
				h.WriteString(s[j:])
				if h.Sum() != want || mid != hashText(s[:i]) {
					t.Fatalf("split at %d/%d differs", i, j)
				}
			}
		}
	})
}

// TestHashFields checks the one-pass field hashes, joined on the stack or
// streamed past joinMax, against the streaming form's values at every length.
func TestHashFields(t *testing.T) {
	s := strings.Repeat("the quick brown fox jumps over the lazy dog 0123456789 ", 30)
	var acc uint64
	for n := 0; n <= len(s); n++ {
		acc = acc*31 + hashText(s[:n])
		for _, k := range []int{0, 1, 5, 31, 33, 600} {
			if k <= n {
				acc = acc*31 + hashPair(s[:k], s[k:n])
				acc = acc*31 + hashParts(s[:k/2], s[k/2:k], s[k:n])
				if hashCall(s[:k/2], s[k/2:k], []byte(s[k:n])) != hashParts(s[:k/2], s[k/2:k], s[k:n]) {
					t.Fatalf("hashCall differs from hashParts at %d/%d", k, n)
				}
			}
		}
	}
	if want := uint64(0xe809fe06d72e1a0c); acc != want { // the streaming form's, at dbf127d
		t.Errorf("combined hashes %#x, want %#x", acc, want)
	}
}

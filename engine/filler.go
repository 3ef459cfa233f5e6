package engine

import (
	"strings"
	"unicode/utf8"
)

// Runs of filler: content may say "n bytes of FillerByte" in a few bytes
// instead of n (elided tool results are kilobytes of it). The encoding is
// runMark, n in base 64 most significant digit first, each digit a byte
// 0x80|d with no leading zero digit, and runMark again; n is at least
// MinFillerRun. It is canonical (one encoding per n), so equal texts encode
// alike and hash alike; runMark never occurs in valid UTF-8 and the digits
// are continuation bytes, so no valid UTF-8 text matches inside an
// encoding. Everything the engine computes from content (lengths in bytes
// and characters, cuts, previews, summaries) it computes as on the expanded
// text; a 0xFF byte that does not open a valid encoding is a byte as any.
// Runs may also be written out: the two forms are alike but for hashes.
const (
	FillerByte   = '~'
	MinFillerRun = 16
	runMark      = 0xFF
)

// AppendFiller appends n bytes of filler to b: encoded if n is at least
// MinFillerRun, else written out.
func AppendFiller(b []byte, n int) []byte {
	if n < MinFillerRun {
		for ; n > 0; n-- {
			b = append(b, FillerByte)
		}
		return b
	}
	var d [12]byte
	i := len(d) - 1
	d[i] = runMark
	for ; n > 0; n >>= 6 {
		i--
		d[i] = 0x80 | byte(n&63)
	}
	i--
	d[i] = runMark
	return append(b, d[i:]...)
}

// parseRun reads the encoded run that s starts with: its length and its
// size in s, or 0, 0 if s does not start with one.
func parseRun(s string) (n, size int) {
	if n := twoDigitRun(s); n > 0 {
		return n, 4
	}
	return parseRunDigits(s)
}

// twoDigitRun is the length of the run of two digits (64 <= n < 4096) that
// s starts with, else 0: most runs (elided content's and summaries' cut
// lines). It is small enough to be inlined where runs are read most.
func twoDigitRun(s string) int {
	if len(s) >= 4 && s[3] == runMark && s[0] == runMark && s[1] != 0x80 && s[1]&0xC0 == 0x80 && s[2]&0xC0 == 0x80 {
		return int(s[1]&63)<<6 | int(s[2]&63)
	}
	return 0
}

// parseRunDigits is parseRun a digit at a time, for any number of digits.
func parseRunDigits(s string) (n, size int) {
	if len(s) < 3 || s[0] != runMark || s[1] == 0x80 {
		return 0, 0
	}
	for i := 1; i < len(s) && i <= 11; i++ { // up to 10 digits: n < 1<<60
		c := s[i]
		if c == runMark {
			if i == 1 || n < MinFillerRun {
				return 0, 0
			}
			return n, i + 1
		}
		if c&0xC0 != 0x80 {
			return 0, 0
		}
		n = n<<6 | int(c&63)
	}
	return 0, 0
}

// FillerAt reads the encoded run s starts with: its length in bytes of
// filler and its size in s, or 0, 0 if s does not start with one.
func FillerAt(s string) (n, size int) { return parseRun(s) }

// NextFiller finds the first encoded run in s: where it starts (-1 if
// none), its length in bytes of filler, and the bytes of its encoding.
func NextFiller(s string) (at, n, size int) {
	for from := 0; ; {
		i := strings.IndexByte(s[from:], runMark)
		if i < 0 {
			return -1, 0, 0
		}
		at = from + i
		if n, size = parseRun(s[at:]); size > 0 {
			return at, n, size
		}
		from = at + 1
	}
}

// HasFiller reports whether s may hold an encoded run.
func HasFiller(s string) bool { return strings.IndexByte(s, runMark) >= 0 }

// ExpandFiller returns s with its encoded runs written out.
func ExpandFiller(s string) string {
	at, _, _ := NextFiller(s)
	if at < 0 {
		return s
	}
	b := make([]byte, 0, TextLen(s))
	for {
		at, n, size := NextFiller(s)
		if at < 0 {
			return string(append(b, s...))
		}
		b = append(b, s[:at]...)
		for ; n > 0; n-- {
			b = append(b, FillerByte)
		}
		s = s[at+size:]
	}
}

// TextLen is the length of s in bytes, its runs expanded. It is called
// for nearly every text, so it looks for runs itself (not NextFiller).
func TextLen(s string) int {
	n := len(s)
	for len(s) > 0 {
		// A run that starts s (elided content's first) is read without
		// a search.
		if s[0] != runMark {
			i := strings.IndexByte(s, runMark)
			if i < 0 {
				return n
			}
			s = s[i:]
		}
		k, size := twoDigitRun(s), 4
		if k == 0 {
			k, size = parseRunDigits(s)
		}
		if size > 0 {
			n += k - size
			s = s[size:]
		} else {
			s = s[1:] // a byte as any
		}
	}
	return n
}

// runeCount is utf8.RuneCountInString of s expanded.
func runeCount(s string) int {
	n := 0
	for {
		at, k, size := NextFiller(s)
		if at < 0 {
			return n + utf8.RuneCountInString(s)
		}
		n += utf8.RuneCountInString(s[:at]) + k
		s = s[at+size:]
	}
}

// fillerMark is the shortest run written out that canonicalRuns encodes.
const fillerMark = "~~~~~~~~~~~~~~~~"

// canonicalRuns is s with every run of filler of MinFillerRun bytes or more
// encoded, so that equal texts are equal strings however they came: an
// entry's content is, whoever wrote it (a model's calls cannot carry the
// encoding, JSON having no invalid UTF-8).
func canonicalRuns(s string) string {
	// Most texts have no filler byte at all: one IndexByte says so, at less
	// than the cost of looking for fillerMark.
	if strings.IndexByte(s, FillerByte) < 0 || !strings.Contains(s, fillerMark) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		n := 0
		for i < len(s) {
			if s[i] == FillerByte {
				n, i = n+1, i+1
			} else if k, size := parseRun(s[i:]); size > 0 {
				n, i = n+k, i+size
			} else {
				break
			}
		}
		if n > 0 {
			b = AppendFiller(b, n)
			continue
		}
		b = append(b, s[i])
		i++
	}
	return string(b)
}

// withFiller is s followed by n bytes of filler.
func withFiller(s string, n int) string {
	if n == 0 {
		return s
	}
	return string(AppendFiller([]byte(s), n))
}

// cutRunChars is cutChars for s holding runs: its first n characters, and
// whether that is less than s.
func cutRunChars(s string, n int) (string, bool) {
	cut, tail, more := cutRunCharsAt(s, n)
	return withFiller(s[:cut], tail), more
}

// cutRunCharsAt is where cutRunChars cuts s: s[:cut], then tail bytes of
// filler if the cut falls in a run.
func cutRunCharsAt(s string, n int) (cut, tail int, more bool) {
	for at := 0; ; {
		i, k, size := NextFiller(s[at:])
		end := len(s)
		if i >= 0 {
			end = at + i
		}
		for pos := range s[at:end] {
			if n == 0 {
				return at + pos, 0, true
			}
			n--
		}
		if i < 0 {
			return len(s), 0, false
		}
		if n < k {
			return end, n, true
		}
		n -= k
		at = end + size
	}
}

// cutRunBytes is truncateUTF8 for s holding runs.
func cutRunBytes(s string, n int) string {
	cut := cutRunAt(s, n)
	return withFiller(s[:cut], runTail(s, cut, n))
}

// runTail is the filler that s cut at cut keeps of n bytes: what n lacks
// if an encoded run starts at cut (the cut fell in it), else none.
func runTail(s string, cut, n int) int {
	if cut < len(s) && s[cut] == runMark {
		if _, size := parseRun(s[cut:]); size > 0 {
			return n - TextLen(s[:cut])
		}
	}
	return 0
}

// shortRuns is s with each encoded run written out as 8 bytes of filler:
// lineScore scores any run of 4 or more alike.
func shortRuns(s string) string {
	var b []byte
	for {
		at, _, size := NextFiller(s)
		if at < 0 {
			return string(append(b, s...))
		}
		b = append(append(b, s[:at]...), "~~~~~~~~"...)
		s = s[at+size:]
	}
}

// cutRunAt is where truncateUTF8(s, n) cuts s holding runs: s[:cut],
// then the filler that fills n bytes if the cut falls in a run.
func cutRunAt(s string, n int) (cut int) {
	for at := 0; ; {
		i, k, size := NextFiller(s[at:])
		end := len(s)
		if i >= 0 {
			end = at + i
		}
		if end-at >= n {
			return at + len(truncateUTF8(s[at:end], n))
		}
		if i < 0 {
			return len(s)
		}
		n -= end - at
		if n < k {
			return end
		}
		n -= k
		at = end + size
	}
}

// fillerLine reports whether line is one encoded run and nothing else, and
// its length.
func fillerLine(line string) (int, bool) {
	if len(line) < 3 || line[0] != runMark {
		return 0, false
	}
	n, size := parseRun(line)
	return n, size == len(line)
}

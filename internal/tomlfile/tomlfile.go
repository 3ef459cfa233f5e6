package tomlfile

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Error is an error in a TOML file, with its position when known.
type Error struct {
	File string // the file's name as the user gave it
	Line int    // 1-based; 0 when unknown
	Key  string // the dotted key the error is about, e.g. "stages[1].tools"; "" when none
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Key != "" {
		b.WriteString(": ")
		b.WriteString(e.Key)
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("invalid")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrUnknownKey is wrapped by the Err of an unknown key's *Error.
var ErrUnknownKey = errors.New("unknown key")

// At returns an error about key in data, at the line that sets key (or the
// table that should have held it).
func At(data []byte, file, key string, err error) *Error {
	return &Error{File: file, Line: KeyLine(data, key), Key: key, Err: err}
}

// Decode decodes data into v strictly: a key that v has no field for is an
// error, as is any syntax or type error. Every error is an *Error. An
// unknown key's error suggests the closest known key, and lists the keys
// valid at its place when there are few enough to read.
func Decode(data []byte, file string, v any) (toml.MetaData, error) {
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(v)
	if err != nil {
		return md, wrap(data, file, err)
	}
	for _, k := range md.Undecoded() { // in file order
		if !takesAny(v, k) {
			return md, At(data, file, k.String(), unknownKey(v, k))
		}
	}
	return md, nil
}

// typeErrRE matches BurntSushi/toml's type errors, which are plain errors
// with the position in their text.
var typeErrRE = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): (.*)$`)

func wrap(data []byte, file string, err error) *Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		e := &Error{File: file, Line: pe.Position.Line, Err: errors.New(pe.Message)}
		// LastKey is the last key the parser read: name it only when the
		// error is on its line, where it is the key at fault and not merely
		// the one before.
		if pe.LastKey != "" && (e.Line == 0 || KeyLine(data, pe.LastKey) == e.Line) {
			e.Key = pe.LastKey
		}
		return e
	}
	if m := typeErrRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		if line == 0 {
			line = KeyLine(data, m[2])
		}
		return &Error{File: file, Line: line, Key: m[2], Err: errors.New(m[3])}
	}
	return &Error{File: file, Err: err}
}

// maxListed bounds the "want one of" list, beyond which it stops helping.
const maxListed = 16

func unknownKey(v any, k toml.Key) error {
	known := knownKeys(v, k[:len(k)-1])
	if len(known) == 0 {
		return ErrUnknownKey
	}
	var b strings.Builder
	if s := suggest(k[len(k)-1], known); s != "" {
		fmt.Fprintf(&b, "did you mean %q?", s)
	}
	if len(known) <= maxListed {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		names := make([]string, len(known))
		for i, f := range known {
			names[i] = f.decorated(len(k) == 1)
		}
		fmt.Fprintf(&b, "want one of %s", strings.Join(names, ", "))
	}
	if b.Len() == 0 {
		return ErrUnknownKey
	}
	return fmt.Errorf("%w (%s)", ErrUnknownKey, b.String())
}

// suggest returns the known key closest to name by edit distance, when it
// is close enough to be a typo ("" otherwise).
func suggest(name string, known []field) string {
	best, bestD := "", 3 // at most two edits
	for _, f := range known {
		d := distance(strings.ToLower(name), strings.ToLower(f.name))
		if d < bestD && d < len(name) {
			best, bestD = f.name, d
		}
	}
	return best
}

// Nearest returns the candidate with the smallest edit distance to s
// (Levenshtein, in bytes, case-sensitive), the earliest one on a tie, and ""
// when there are no candidates. Unlike the typo hint in unknown-key errors it
// has no cut-off: callers that always name a nearest valid key use it.
func Nearest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

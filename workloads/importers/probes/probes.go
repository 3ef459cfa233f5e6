// Package probes derives reference-recall probes from a recorded session
// (DESIGN.md §6).
//
// An identifier that first arrived in a tool result or a user message, and
// that a later assistant turn uses (in its text or in its tool-call
// arguments), becomes a probe at that turn: the agent really needed that
// content, so the probe asks whether it was still in context at the inference
// that produced the turn.
//
// # Extraction rules
//
// Text is split into words at whitespace and at the delimiters
// ( ) [ ] { } < > " ' ` , ; | and at a ':' that is followed by a space or ends
// the word. Trailing '.', ':' and '!' / '?' are trimmed. A word is an
// identifier when it is one of:
//
//   - url: starts with "http://" or "https://", at least 12 bytes;
//   - path: contains '/', is at least 5 bytes, has a letter, and either starts
//     with '/', "./", "../" or "~/" or ends in a file extension (".go",
//     "schemas/pipeline.ts"); an optional ":line" or ":line:col" suffix is
//     dropped;
//   - hash: 7 to 64 hexadecimal digits with at least one digit and one letter
//     (git shas, content hashes);
//   - number: at least 6 digits, optionally with '.', '_' or '-' inside
//     (ids, sizes, timestamps);
//   - symbol: an identifier of at least 6 bytes made of letters, digits, '_'
//     and the qualifiers '.' and "::", with at least one '_' , '.', "::" or an
//     inner upper-case letter (snake_case, camelCase, Pkg.Name, mod::fn), and
//     not a plain file name that the path rule would own.
//
// Error texts are taken per line: in a tool result, a line holding
// "Error:", "error:", "Exception:", "panic:" or "FAILED" gives the text after
// the marker (trimmed, 16 to 160 bytes). A later assistant turn that quotes it
// verbatim uses it.
//
// Identifiers longer than 200 bytes are ignored. The first arrival wins: an
// identifier that the assistant wrote before any tool result or user message
// carried it is the assistant's own and never becomes a probe. One probe per
// identifier per turn; identifiers in the task text are probed like the rest
// (flat policies can lose the task).
package probes

import (
	"strings"
	"unicode/utf8"
)

// Class is the kind of an identifier.
type Class uint8

// The identifier classes.
const (
	ClassNone Class = iota
	ClassURL
	ClassPath
	ClassHash
	ClassNumber
	ClassSymbol
	ClassError
)

func (c Class) String() string {
	switch c {
	case ClassURL:
		return "url"
	case ClassPath:
		return "path"
	case ClassHash:
		return "hash"
	case ClassNumber:
		return "number"
	case ClassSymbol:
		return "symbol"
	case ClassError:
		return "error"
	}
	return "none"
}

const (
	maxIdent    = 200
	minErrText  = 16
	maxErrText  = 160
	maxErrTexts = 512 // error texts kept for verbatim matching (oldest dropped)
)

// delim reports the bytes that end a word.
var delim = func() (d [256]bool) {
	for _, c := range " \t\r\n()[]{}<>\"'`,;|\\=*" {
		d[c] = true
	}
	return d
}()

// Words calls fn for each identifier in s with its class. It allocates
// nothing: the strings passed are slices of s.
func Words(s string, fn func(word string, c Class)) {
	i := 0
	for i < len(s) {
		for i < len(s) && delim[s[i]] {
			i++
		}
		j := i
		for j < len(s) && !delim[s[j]] {
			if s[j] == ':' && (j+1 == len(s) || s[j+1] == ' ' || s[j+1] == '\n') {
				break
			}
			j++
		}
		if j-i >= 5 {
			w := trimWord(s[i:j])
			if c := Classify(w); c != ClassNone {
				if c == ClassPath {
					w = trimLineSuffix(w)
				}
				fn(w, c)
			}
		}
		if j == i {
			j++
		}
		i = j
	}
}

func trimWord(w string) string {
	for len(w) > 0 {
		switch w[len(w)-1] {
		case '.', ':', '!', '?':
			w = w[:len(w)-1]
			continue
		}
		break
	}
	return w
}

// trimLineSuffix drops ":12" or ":12:5" from "file.go:12:5".
func trimLineSuffix(w string) string {
	for k := 0; k < 2; k++ {
		c := strings.LastIndexByte(w, ':')
		if c < 0 || c == len(w)-1 {
			return w
		}
		digits := true
		for _, r := range w[c+1:] {
			if r < '0' || r > '9' {
				digits = false
				break
			}
		}
		if !digits {
			return w
		}
		w = w[:c]
	}
	return w
}

func isHex(c byte) bool    { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }

// Classify returns the class of one word, or ClassNone.
func Classify(w string) Class {
	n := len(w)
	if n < 5 || n > maxIdent {
		return ClassNone
	}
	if strings.HasPrefix(w, "https://") || strings.HasPrefix(w, "http://") {
		if n >= 12 {
			return ClassURL
		}
		return ClassNone
	}
	var slash, letters, digits, hex, upperInner, under, dot, other int
	for k := 0; k < n; k++ {
		c := w[k]
		switch {
		case c == '/':
			slash++
		case isDigit(c):
			digits++
			hex++
		case isLetter(c):
			letters++
			if isHex(c) {
				hex++
			}
			if k > 0 && isUpper(c) && !isUpper(w[k-1]) {
				upperInner++
			}
		case c == '_':
			under++
		case c == '.':
			dot++
		case c >= 0x80:
			return ClassNone // identifiers are ASCII; this also keeps probe texts valid UTF-8
		default:
			other++
		}
	}
	if slash > 0 {
		if letters == 0 {
			return ClassNone
		}
		if w[0] == '/' && slash == 1 && !hasExt(trimLineSuffix(w)) {
			return ClassNone // "/span", "/code": a closing tag or a word, not a path
		}
		if w[0] == '/' || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") || strings.HasPrefix(w, "~/") || hasExt(trimLineSuffix(w)) {
			return ClassPath
		}
		return ClassNone
	}
	if hex == n && n >= 7 && n <= 64 && digits > 0 && letters > 0 {
		return ClassHash
	}
	if digits >= 6 && letters == 0 && slash == 0 {
		for k := 0; k < n; k++ {
			c := w[k]
			if !isDigit(c) && c != '.' && c != '_' && c != '-' {
				return ClassNone
			}
		}
		return ClassNumber
	}
	if n >= 6 && letters > 0 && isLetter(w[0]) || n >= 6 && w[0] == '_' {
		// symbol: letters, digits, '_', '.', "::" only
		colons := 0
		for k := 0; k < n; k++ {
			c := w[k]
			if c == ':' {
				colons++
				continue
			}
			if !isLetter(c) && !isDigit(c) && c != '_' && c != '.' {
				return ClassNone
			}
		}
		if colons%2 != 0 || w[n-1] == '.' || strings.Contains(w, "..") {
			return ClassNone
		}
		if dot > 0 && hasExt(w) && upperInner == 0 && under == 0 {
			return ClassNone // a bare file name such as "index.html": not specific enough
		}
		if under > 0 || dot > 0 || colons > 0 || upperInner > 0 {
			return ClassSymbol
		}
	}
	return ClassNone
}

// hasExt reports whether w ends in ".ext" with a short alphanumeric extension
// that starts with a letter.
func hasExt(w string) bool {
	d := strings.LastIndexByte(w, '.')
	if d <= 0 || d == len(w)-1 || len(w)-d-1 > 6 {
		return false
	}
	if !isLetter(w[d+1]) {
		return false
	}
	for k := d + 1; k < len(w); k++ {
		if !isLetter(w[k]) && !isDigit(w[k]) {
			return false
		}
	}
	return true
}

// errorMarkers start an error text in a tool result line.
var errorMarkers = []string{"Error: ", "error: ", "Exception: ", "panic: ", "FAILED "}

// ErrorTexts calls fn for each error text in s (see the package comment).
func ErrorTexts(s string, fn func(text string)) {
	if !strings.Contains(s, "rror: ") && !strings.Contains(s, "xception: ") && !strings.Contains(s, "panic: ") && !strings.Contains(s, "FAILED ") {
		return
	}
	for line := range strings.Lines(s) {
		// The earliest marker wins: "panic: runtime error: x" is the panic's text.
		at, ml := -1, 0
		for _, m := range errorMarkers {
			if k := strings.Index(line, m); k >= 0 && (at < 0 || k < at) {
				at, ml = k, len(m)
			}
		}
		if at < 0 {
			continue
		}
		t := strings.TrimSpace(line[at+ml:])
		if len(t) > maxErrText {
			t = t[:maxErrText]
			for !utf8.ValidString(t) && len(t) > 0 {
				t = t[:len(t)-1]
			}
		}
		if len(t) >= minErrText {
			fn(t)
		}
	}
}

package importers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A fast walk over the top-level fields of a JSON object. encoding/json
// validates a whole line before decoding it, which for a Claude Code line
// means scanning megabytes of tool output twice (and the toolUseResult copy
// of it once more); walking the fields and decoding only the ones an importer
// needs is several times faster. Values handed to json.Unmarshal are still
// fully validated; values skipped only need to be well nested.

var errTruncated = errors.New("unexpected end of JSON input")

// decodeFields calls fn with each top-level key and raw value of the object
// b, as forFields does; the first error fn returns stops the walk and comes
// back naming its key.
func decodeFields(b []byte, fn func(key, val []byte) error) error {
	var err error
	if ferr := forFields(b, func(k, v []byte) bool {
		if e := fn(k, v); e != nil {
			err = fmt.Errorf("%s: %w", k, e)
			return false
		}
		return true
	}); ferr != nil {
		return ferr
	}
	return err
}

// forFields calls fn with each top-level key (raw, without quotes) and its
// raw value. It stops early when fn returns false.
func forFields(b []byte, fn func(key, val []byte) bool) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return fmt.Errorf("want a JSON object")
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return fmt.Errorf("offset %d: want a key", i)
		}
		end := skipString(b, i)
		if end < 0 {
			return errTruncated
		}
		key := b[i+1 : end-1]
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return fmt.Errorf("offset %d: want ':' after key %q", i, key)
		}
		i = skipWS(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return fmt.Errorf("offset %d: bad value for key %q", i, key)
		}
		if !fn(key, b[i:vend]) {
			return nil
		}
		i = skipWS(b, vend)
		if i >= len(b) {
			return errTruncated
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return nil
		default:
			return fmt.Errorf("offset %d: want ',' or '}'", i)
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i] == '"'.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// skipValue returns the index after the value that starts at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := skipString(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// rawString decodes a JSON string value; plain strings avoid the decoder.
func rawString(v []byte) (string, error) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), nil
	}
	var s string
	err := json.Unmarshal(v, &s)
	return s, err
}

// rawBool reads true, false or null (false).
func rawBool(v []byte) (bool, error) {
	switch string(v) {
	case "true":
		return true, nil
	case "false", "null":
		return false, nil
	}
	return false, fmt.Errorf("want a boolean, got %.20q", v)
}

// forElems calls fn with each raw element of the JSON array in b.
func forElems(b []byte, fn func(val []byte) error) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return fmt.Errorf("want a JSON array")
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		end := skipValue(b, i)
		if end < 0 {
			return fmt.Errorf("offset %d: bad array element", i)
		}
		if err := fn(b[i:end]); err != nil {
			return err
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return errTruncated
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return nil
		default:
			return fmt.Errorf("offset %d: want ',' or ']'", i)
		}
	}
}

// unquote decodes a JSON string literal (quotes included) as encoding/json
// does: escapes resolved, invalid UTF-8 and lone surrogates replaced by
// U+FFFD. It rejects control characters and bad escapes.
func unquote(v []byte) (string, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", fmt.Errorf("want a JSON string")
	}
	s := v[1 : len(v)-1]
	// Fast path: no escapes, ASCII or valid UTF-8 without control bytes.
	clean := true
	for _, c := range s {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return string(s), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return "", fmt.Errorf("bad escape at end of string")
			}
			switch s[i+1] {
			case '"', '\\', '/':
				out = append(out, s[i+1])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					return "", fmt.Errorf("bad \\u escape")
				}
				i += 6
				if utf16IsSurrogate(r) {
					if r2, ok := hex4(s, i+2); ok && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if dec := utf16Decode(r, r2); dec != utf8RuneError {
							out = utf8AppendRune(out, dec)
							i += 6
							continue
						}
					}
					r = utf8RuneError
				}
				out = utf8AppendRune(out, r)
				continue
			default:
				return "", fmt.Errorf("bad escape \\%c", s[i+1])
			}
			i += 2
		case c == '"' || c < 0x20:
			return "", fmt.Errorf("invalid character %q in string", c)
		case c < 0x80:
			out = append(out, c)
			i++
		default:
			r, size := utf8DecodeRune(s[i:])
			if r == utf8RuneError && size == 1 {
				out = utf8AppendRune(out, utf8RuneError)
			} else {
				out = append(out, s[i:i+size]...)
			}
			i += size
		}
	}
	return string(out), nil
}

func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

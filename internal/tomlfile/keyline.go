package tomlfile

import (
	"strconv"
	"strings"
)

// KeyLine returns the 1-based line of data on which key is set, or 0 when it
// cannot be found (for instance because the key was never in the file). key
// is dotted, with array-of-table indexes as in "stages[2].tools.grep".
//
// BurntSushi/toml does not expose key positions, so this is a small line
// scanner: it follows [table] and [[array]] headers and dotted or inline-table
// keys, which covers every file layout the defaults use. When no line sets the
// whole key, the line of its longest set prefix is returned (the table that
// should have held it).
func KeyLine(data []byte, key string) int {
	if len(data) == 0 {
		return 0
	}
	want := splitDotted(key)
	best, bestLen := 0, 0
	counts := map[string]int{}
	var table []string
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		var cands [][]string
		if strings.HasPrefix(line, "[[") {
			parts := splitDotted(strings.Trim(line, "[]"))
			if len(parts) == 0 {
				continue
			}
			name := strings.Join(parts, ".")
			parts[len(parts)-1] += "[" + strconv.Itoa(counts[name]) + "]"
			counts[name]++
			table = parts
			cands = append(cands, table)
		} else if strings.HasPrefix(line, "[") {
			table = splitDotted(strings.Trim(line, "[]"))
			cands = append(cands, table)
		} else if eq := strings.IndexByte(line, '='); eq > 0 {
			k := append(append([]string(nil), table...), splitDotted(line[:eq])...)
			cands = append(cands, k)
			val := strings.TrimSpace(line[eq+1:])
			if strings.HasPrefix(val, "{") {
				for _, kv := range strings.Split(strings.Trim(val, "{}"), ",") {
					if e := strings.IndexByte(kv, '='); e > 0 {
						cands = append(cands, append(append([]string(nil), k...), splitDotted(kv[:e])...))
					}
				}
			}
		}
		for _, c := range cands {
			n := matchLen(c, want)
			if n == len(want) && n == len(c) {
				return i + 1
			}
			if n == len(c) && n > bestLen {
				best, bestLen = i+1, n
			}
		}
	}
	return best
}

// matchLen returns how many leading components of have match want; a
// component without an index matches any index of the same name.
func matchLen(have, want []string) int {
	n := 0
	for n < len(have) && n < len(want) {
		h, w := have[n], want[n]
		if h != w && stripIndex(h) != w && stripIndex(w) != h {
			break
		}
		n++
	}
	return n
}

func stripIndex(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		return s[:i]
	}
	return s
}

// splitDotted splits "stages[2].tools.grep" into ["stages[2]", "tools", "grep"].
func splitDotted(s string) []string {
	parts := strings.Split(s, ".")
	out := parts[:0]
	for _, p := range parts {
		p = strings.Trim(strings.TrimSpace(p), `"'`)
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// stripComment removes a # comment that is not inside a string.
func stripComment(s string) string {
	inStr := byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inStr != 0:
			if c == '\\' && inStr == '"' {
				i++
			} else if c == inStr {
				inStr = 0
			}
		case c == '"' || c == '\'':
			inStr = c
		case c == '#':
			return s[:i]
		}
	}
	return s
}

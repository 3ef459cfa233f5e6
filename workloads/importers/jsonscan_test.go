package importers

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`""`, `"plain"`, `"a\nb\t\"q\"\\ \/"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud83d x"`,
		"\"caf\xc3\xa9\"", "\"bad \xff byte\"", `"\u12"`, `"\x"`, "\"ctl \x01\"", `"emoji 😀"`,
	} {
		t.Run(in, func(t *testing.T) {
			var want string
			werr := json.Unmarshal([]byte(in), &want)
			got, gerr := unquote([]byte(in))
			if (werr == nil) != (gerr == nil) || werr == nil && got != want {
				t.Errorf("unquote(%q) = %q, %v; encoding/json: %q, %v", in, got, gerr, want, werr)
			}
		})
	}
}

func FuzzUnquote(f *testing.F) {
	f.Add([]byte(`"a\nb\u00e9\ud83d\ude00"`))
	f.Add([]byte("\"\xff\""))
	f.Fuzz(func(t *testing.T, in []byte) {
		var want string
		werr := json.Unmarshal(in, &want)
		lo, hi := skipWS(in, 0), trimWSRight(in)
		if lo > hi {
			return
		}
		got, gerr := unquote(in[lo:hi]) // values reach unquote without blanks
		if werr == nil && (gerr != nil || got != want) {
			t.Fatalf("unquote(%q) = %q, %v; encoding/json: %q", in, got, gerr, want)
		}
	})
}

// forFields must see the same top-level keys and values as encoding/json
// on any valid object.
func FuzzForFields(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":"x\"}","c":{"d":[1,{"e":"]"}]},"f":true}`))
	f.Add([]byte(`{ "k" : [ ] , "l" : null }`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var want map[string]json.RawMessage
		if json.Unmarshal(in, &want) != nil {
			_ = forFields(in, func(k, v []byte) bool { return true }) // must not panic
			return
		}
		got := map[string]string{}
		err := forFields(in, func(k, v []byte) bool {
			got[string(k)] = string(v)
			return true
		})
		if err != nil {
			t.Fatalf("forFields(%q): %v", in, err)
		}
		for k, v := range want {
			var ks string
			if json.Unmarshal([]byte(`"`+k+`"`), &ks) != nil {
				continue // a key with escapes: forFields hands it raw
			}
			if g, ok := got[k]; ok && !jsonEqual(g, string(v)) {
				t.Fatalf("key %q: got %q, want %q", k, g, v)
			}
		}
	})
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func trimWSRight(b []byte) int {
	n := len(b)
	for n > 0 && (b[n-1] == ' ' || b[n-1] == '\t' || b[n-1] == '\n' || b[n-1] == '\r') {
		n--
	}
	return n
}

func TestDecodeFields(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		seen     string // the keys fn saw, in order
		err      string
	}{
		{"all fields", `{"a": 1, "b": "x", "c": {"d": 2}}`, "a b c", ""},
		{"empty object", `{}`, "", ""},
		{"first error stops the walk and names its key", `{"a": 1, "bad": 2, "c": 3}`, "a bad", "bad: rejected"},
		{"malformed object", `{"a": 1, "b"}`, "a", `offset 12: want ':' after key "b"`},
		{"not an object", `[1]`, "", "want a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen []string
			err := decodeFields([]byte(tc.in), func(k, v []byte) error {
				seen = append(seen, string(k))
				if string(k) == "bad" {
					return errors.New("rejected")
				}
				return nil
			})
			if got := strings.Join(seen, " "); got != tc.seen {
				t.Errorf("saw %q, want %q", got, tc.seen)
			}
			if (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

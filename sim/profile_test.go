package sim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEmbeddedProfiles(t *testing.T) {
	ps := Profiles()
	if len(ps) < 10 {
		t.Fatalf("%d profiles, want at least 10", len(ps))
	}
	vendors := map[string]bool{}
	minW, maxW := ps[0].Window, ps[0].Window
	for _, p := range ps {
		vendors[p.Vendor] = true
		minW, maxW = min(minW, p.Window), max(maxW, p.Window)
		if p.Date == "" || p.Source == "" {
			t.Errorf("%s: no date or source", p.Name)
		}
		if p.Cache == "anthropic" && p.CacheMin == 0 {
			t.Errorf("%s: an anthropic cache needs its per-model minimum", p.Name)
		}
		got, err := LookupProfile(p.Name)
		if err != nil || got.Name != p.Name {
			t.Errorf("LookupProfile(%s) = %v", p.Name, err)
		}
	}
	if len(vendors) < 4 {
		t.Errorf("%d vendors, want at least 4", len(vendors))
	}
	if minW > 8192 || maxW < 2000000 {
		t.Errorf("windows %d..%d, want 8K to 2M+", minW, maxW)
	}
	if _, err := LookupProfile("gpt-2"); err == nil || !strings.Contains(err.Error(), "claude-opus-5") {
		t.Errorf("unknown model error %v should list the known ones", err)
	}
	// The table's prices follow PEERS.md §A.6.
	p, _ := LookupProfile("claude-opus-5")
	if p.Input != 5 || p.Output != 25 || p.CacheWrite5m != 6.25 || p.CacheWrite1h != 10 || p.CacheRead != 0.5 || p.CacheMin != 512 {
		t.Errorf("claude-opus-5 = %+v", p)
	}
}

func TestLoadProfiles(t *testing.T) {
	dir := t.TempDir()
	good := `[[model]]
name = "my-model"
vendor = "me"
date = "2026-11-29"
source = "measured"
window = 65536
tokenizer = "bytes/4"
cache = "vllm"
cache_capacity_tokens = 100000
prefill_tps = 5000
decode_tps = 50
`
	path := filepath.Join(dir, "m.toml")
	if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := LoadProfiles(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Window != 65536 || ps[0].CacheBlock != 16 {
		t.Errorf("loaded %+v (cache block should default to 16)", ps)
	}
	bad := []struct{ name, body, mention string }{
		{"syntax", "[[model]\nname=1", ":2"},
		{"unknown key", good + "colour = 1\n", ":12: model.colour: unknown key"},
		{"misspelt key", good + "decode_tsp = 1\n", `:12: model.decode_tsp: unknown key (did you mean "decode_tps"?)`},
		{"no models", "", "no [[model]]"},
		{"bad window", strings.Replace(good, "65536", "-1", 1), ":6: model[0].window: -1: want a positive"},
		{"bad tokenizer", strings.Replace(good, `"bytes/4"`, `"words"`, 1), ":7: model[0].tokenizer"},
		{"bad cache", strings.Replace(good, `"vllm"`, `"redis"`, 1), ":8: model[0].cache"},
		{"vllm without capacity", strings.Replace(good, "cache_capacity_tokens = 100000\n", "", 1), ":1: model[0].cache_capacity_tokens: missing"},
		{"no decode speed", strings.Replace(good, "decode_tps = 50\n", "", 1), "decode_tps"},
		{"negative price", good + "input = -1\n", ":12: model[0].input"},
		{"duplicate", good + good, ":13: model[1].name"},
		{"missing name", strings.Replace(good, `name = "my-model"`, "", 1), ":1: model[0].name: missing"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".toml")
			if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadProfiles(p)
			var pe *ProfileError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a *ProfileError", err)
			}
			if !strings.Contains(err.Error(), c.mention) || !strings.HasPrefix(err.Error(), p) {
				t.Errorf("error %q, want the file and %q", err, c.mention)
			}
		})
	}
	if _, err := LoadProfiles(filepath.Join(dir, "missing.toml")); err == nil {
		t.Error("missing file accepted")
	}
}

func FuzzParseProfiles(f *testing.F) {
	f.Add(string(profilesTOML))
	f.Add("[[model]]\nname=\"x\"\nwindow=1\ntokenizer=\"bytes/4\"\ncache=\"none\"\nprefill_tps=1\ndecode_tps=1\n")
	f.Add("[[model]]\n")
	f.Add("x=")
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := parseProfiles("fuzz.toml", []byte(s))
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.Window <= 0 || p.PrefillTPS <= 0 || p.DecodeTPS <= 0 || p.CacheStep <= 0 {
				t.Fatalf("accepted an unusable profile %+v", p)
			}
		}
	})
}

func TestTokenizers(t *testing.T) {
	cases := []struct {
		name string
		text string
		want int
	}{
		{"bytes/4", "", 0},
		{"bytes/4", "abcde", 2},
		{"bytes/3.5", "abcdefgh", 3},
		// Real BPE counts of a fixed string (tiktoken's published encodings).
		{"o200k_base", "hello world", 2},
		{"cl100k_base", "hello world", 2},
		{"o200k_base", "The quick brown fox jumps over the lazy dog.", 10},
		{"cl100k_base", "The quick brown fox jumps over the lazy dog.", 10},
	}
	for _, c := range cases {
		t.Run(c.name+"/"+c.text, func(t *testing.T) {
			tok, err := NewTokenizer(c.name)
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.Count(c.text); got != c.want {
				t.Errorf("Count = %d, want %d", got, c.want)
			}
			if got := tok.Count(c.text); got != c.want {
				t.Errorf("memoised Count = %d, want %d", got, c.want)
			}
		})
	}
	if _, err := NewTokenizer("words"); err == nil {
		t.Error("unknown tokenizer accepted")
	}
	tok, _ := NewTokenizer("o200k_base")
	if n := tok.CountBytes(4000); n != 1000 {
		t.Errorf("elided 4000 bytes = %d tokens, want 1000", n)
	}
}

package sim

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ctxsim/ctxsim/internal/tomlfile"
)

// Profile is one model: its window, tokenizer, prices (USD per million
// tokens), provider cache model and speed. The embedded table (profiles.toml)
// is dated per row; a user adds profiles with LoadProfiles.
type Profile struct {
	Name         string  `toml:"name"`
	Vendor       string  `toml:"vendor"`
	Date         string  `toml:"date"`   // when the figures were true (YYYY-MM-DD)
	Source       string  `toml:"source"` // where they come from
	Window       int     `toml:"window"` // context window, tokens
	MaxOutput    int     `toml:"max_output"`
	Tokenizer    string  `toml:"tokenizer"` // bytes/4, bytes/3.5, o200k_base, cl100k_base
	Cache        string  `toml:"cache"`     // anthropic, openai, vllm, none
	CacheMin     int     `toml:"cache_min_tokens"`
	CacheStep    int     `toml:"cache_step_tokens"`     // openai: hits in steps of this many tokens (default 128)
	CacheTTL     float64 `toml:"cache_ttl_s"`           // openai: idle lifetime of an entry, seconds
	CacheBlock   int     `toml:"cache_block_tokens"`    // vllm: KV block size (default 16)
	CacheCap     int     `toml:"cache_capacity_tokens"` // vllm: KV cache capacity
	Input        float64 `toml:"input"`
	Output       float64 `toml:"output"`
	CacheWrite5m float64 `toml:"cache_write_5m"`
	CacheWrite1h float64 `toml:"cache_write_1h"`
	CacheRead    float64 `toml:"cache_read"`
	TTFTBase     float64 `toml:"ttft_base_s"` // time to first token of a fully cached request, seconds
	PrefillTPS   float64 `toml:"prefill_tps"` // uncached prompt tokens per second
	DecodeTPS    float64 `toml:"decode_tps"`  // output tokens per second
	SpeedSource  string  `toml:"speed_source"`
}

//go:embed profiles.toml
var profilesTOML []byte

var builtinProfiles = func() []Profile {
	ps, err := parseProfiles("profiles.toml", profilesTOML)
	if err != nil {
		panic("embedded profiles.toml: " + err.Error()) // a build defect, caught by every test
	}
	return ps
}()

// Profiles returns the embedded model profiles, in table order.
func Profiles() []Profile {
	return append([]Profile(nil), builtinProfiles...)
}

// LookupProfile returns the embedded profile called name.
func LookupProfile(name string) (Profile, error) {
	for _, p := range builtinProfiles {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, len(builtinProfiles))
	for i, p := range builtinProfiles {
		names[i] = p.Name
	}
	return Profile{}, fmt.Errorf("unknown model %q (have %s)", name, strings.Join(names, ", "))
}

// LoadProfiles reads profiles from a TOML file shaped like the embedded
// table: one [[model]] table per profile.
func LoadProfiles(path string) ([]Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseProfiles(path, data)
}

// ProfileError is an error in a profile file, with its position when
// known. It is the shared strict-TOML error, so its text matches the other
// files'.
type ProfileError = tomlfile.Error

func parseProfiles(file string, data []byte) ([]Profile, error) {
	var doc struct {
		Model []Profile `toml:"model"`
	}
	if _, err := tomlfile.Decode(data, file, &doc); err != nil {
		return nil, err
	}
	if len(doc.Model) == 0 {
		return nil, &ProfileError{File: file, Err: errors.New("no [[model]] tables")}
	}
	seen := map[string]int{}
	for i := range doc.Model {
		p := &doc.Model[i]
		key := func(k string) string { return fmt.Sprintf("model[%d].%s", i, k) }
		if p.Name == "" {
			return nil, tomlfile.At(data, file, key("name"), errors.New("missing"))
		}
		if j, dup := seen[p.Name]; dup {
			return nil, tomlfile.At(data, file, key("name"), fmt.Errorf("%q already defined by model[%d]", p.Name, j))
		}
		seen[p.Name] = i
		if err := p.check(); err != nil {
			var ke keyError
			if errors.As(err, &ke) {
				return nil, tomlfile.At(data, file, key(ke.key), ke.err)
			}
			return nil, tomlfile.At(data, file, fmt.Sprintf("model[%d]", i), err)
		}
	}
	return doc.Model, nil
}

type keyError struct {
	key string
	err error
}

func (e keyError) Error() string { return e.key + ": " + e.err.Error() }

// check validates a profile and fills the documented defaults of the cache
// parameters (128-token steps, 16-token blocks).
func (p *Profile) check() error {
	if p.Window <= 0 {
		return keyError{"window", fmt.Errorf("%d: want a positive number of tokens", p.Window)}
	}
	if p.MaxOutput < 0 {
		return keyError{"max_output", fmt.Errorf("%d: want >= 0", p.MaxOutput)}
	}
	if err := checkTokenizer(p.Tokenizer); err != nil {
		return keyError{"tokenizer", err}
	}
	if _, err := ParseCacheKind(p.Cache); err != nil {
		return keyError{"cache", err}
	}
	for _, f := range []struct {
		k string
		v float64
	}{{"input", p.Input}, {"output", p.Output}, {"cache_write_5m", p.CacheWrite5m}, {"cache_write_1h", p.CacheWrite1h},
		{"cache_read", p.CacheRead}, {"ttft_base_s", p.TTFTBase}, {"cache_ttl_s", p.CacheTTL}} {
		if f.v < 0 {
			return keyError{f.k, fmt.Errorf("%g: want >= 0", f.v)}
		}
	}
	if p.PrefillTPS <= 0 {
		return keyError{"prefill_tps", fmt.Errorf("%g: want > 0 tokens per second", p.PrefillTPS)}
	}
	if p.DecodeTPS <= 0 {
		return keyError{"decode_tps", fmt.Errorf("%g: want > 0 tokens per second", p.DecodeTPS)}
	}
	if p.CacheMin < 0 || p.CacheStep < 0 || p.CacheBlock < 0 || p.CacheCap < 0 {
		return errors.New("cache_min_tokens, cache_step_tokens, cache_block_tokens and cache_capacity_tokens must be >= 0")
	}
	if p.CacheStep == 0 {
		p.CacheStep = 128
	}
	if p.CacheBlock == 0 {
		p.CacheBlock = 16
	}
	if p.Cache == "vllm" && p.CacheCap == 0 {
		return keyError{"cache_capacity_tokens", errors.New("missing: a vllm cache needs a capacity in tokens")}
	}
	if p.Cache == "openai" && p.CacheTTL == 0 {
		p.CacheTTL = 600 // in_memory retention: 5-10 minutes idle (PEERS §A.2)
	}
	return nil
}

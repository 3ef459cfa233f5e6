// Package redact masks secrets in recorded agent sessions: API keys, bearer
// tokens, private keys, and cloud and chat tokens.
//
// A redaction keeps the length in bytes: every character of the secret (after
// a recognisable prefix such as "sk-ant-" or "AKIA") becomes 'x'. Sizes and
// byte-based token estimates of the content therefore stay true, and masking
// inside a JSON string keeps the JSON valid (escape sequences are left alone).
//
// The scanner looks for fixed prefixes with strings.Index and checks the body
// by hand; there are no regular expressions, so clean text costs one fast
// substring search per rule.
package redact

import "strings"

// Mask is the byte that replaces each secret character.
const Mask = 'x'

// charset is a set of ASCII bytes.
type charset [256]bool

func set(s string) charset {
	var c charset
	for i := 0; i < len(s); i++ {
		c[s[i]] = true
	}
	return c
}

const (
	lower  = "abcdefghijklmnopqrstuvwxyz"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits = "0123456789"
	alnum  = lower + upper + digits
)

var (
	csAlnum     = set(alnum)
	csKey       = set(alnum + "_-")
	csUpperNum  = set(upper + digits)
	csSlack     = set(alnum + "-")
	csBearer    = set(alnum + "._~+/=-")
	csAlnumUS   = set(alnum + "_")
	csBase64    = set(alnum + "+/=")
	csWordBound = set(alnum + "_-")
)

// rule is one secret shape: a prefix followed by a body of at least min (and
// at most max, when max > 0) characters from cs. keep is how much of the
// prefix stays readable.
type rule struct {
	name   string
	prefix string
	cs     *charset
	min    int
	max    int
	// exact means the body must be exactly min characters long (AWS key ids).
	exact bool
	// bound requires a non-word byte before the prefix ("task-" is not "sk-").
	bound bool
	// unless lists body starts that belong to a longer rule already applied.
	unless []string
}

// rules is ordered so that longer prefixes come first for the same start
// ("sk-ant-" before "sk-"); a masked secret no longer matches a later rule.
var rules = []rule{
	{name: "anthropic", prefix: "sk-ant-", cs: &csKey, min: 20, bound: true},
	{name: "openai", prefix: "sk-proj-", cs: &csKey, min: 20, bound: true},
	{name: "openai", prefix: "sk-", cs: &csKey, min: 20, bound: true, unless: []string{"ant-", "proj-"}},
	{name: "stripe", prefix: "sk_live_", cs: &csAlnum, min: 16, bound: true},
	{name: "stripe", prefix: "rk_live_", cs: &csAlnum, min: 16, bound: true},
	{name: "aws-key-id", prefix: "AKIA", cs: &csUpperNum, min: 16, exact: true, bound: true},
	{name: "aws-key-id", prefix: "ASIA", cs: &csUpperNum, min: 16, exact: true, bound: true},
	{name: "aws-secret", prefix: "aws_secret_access_key=", cs: &csBase64, min: 40},
	{name: "aws-secret", prefix: "aws_secret_access_key = ", cs: &csBase64, min: 40},
	{name: "azure", prefix: "AccountKey=", cs: &csBase64, min: 40},
	{name: "google", prefix: "AIza", cs: &csKey, min: 35, bound: true},
	{name: "github", prefix: "ghp_", cs: &csAlnum, min: 30, bound: true},
	{name: "github", prefix: "gho_", cs: &csAlnum, min: 30, bound: true},
	{name: "github", prefix: "ghu_", cs: &csAlnum, min: 30, bound: true},
	{name: "github", prefix: "ghs_", cs: &csAlnum, min: 30, bound: true},
	{name: "github", prefix: "ghr_", cs: &csAlnum, min: 30, bound: true},
	{name: "github", prefix: "github_pat_", cs: &csAlnumUS, min: 30, bound: true},
	{name: "gitlab", prefix: "glpat-", cs: &csKey, min: 20, bound: true},
	{name: "huggingface", prefix: "hf_", cs: &csAlnum, min: 30, bound: true},
	{name: "slack", prefix: "xoxb-", cs: &csSlack, min: 10, bound: true},
	{name: "slack", prefix: "xoxp-", cs: &csSlack, min: 10, bound: true},
	{name: "slack", prefix: "xoxa-", cs: &csSlack, min: 10, bound: true},
	{name: "slack", prefix: "xoxr-", cs: &csSlack, min: 10, bound: true},
	{name: "slack", prefix: "xoxs-", cs: &csSlack, min: 10, bound: true},
	{name: "slack", prefix: "xapp-", cs: &csSlack, min: 10, bound: true},
	{name: "slack-webhook", prefix: "hooks.slack.com/services/", cs: &csBearer, min: 20},
	{name: "discord-webhook", prefix: "discord.com/api/webhooks/", cs: &csBearer, min: 20},
	{name: "bearer", prefix: "Bearer ", cs: &csBearer, min: 16},
	{name: "bearer", prefix: "bearer ", cs: &csBearer, min: 16},
}

const (
	pemBegin = "-----BEGIN "
	pemKey   = "PRIVATE KEY-----"
	pemEnd   = "-----END "
)

// buckets index the rules by the first two bytes of their prefix, so that
// String finds every candidate in one pass over the text; within a bucket
// the rules keep their order (longer prefixes first).
var (
	bucketOf [1 << 16]uint8
	buckets  = [][]int{nil}
)

func init() {
	for i, r := range rules {
		k := uint16(r.prefix[0])<<8 | uint16(r.prefix[1])
		if bucketOf[k] == 0 {
			bucketOf[k] = uint8(len(buckets))
			buckets = append(buckets, nil)
		}
		buckets[bucketOf[k]] = append(buckets[bucketOf[k]], i)
	}
}

// String returns s with every secret masked. It returns s itself (no copy)
// when nothing matched.
func String(s string) string {
	var b []byte // copy made on the first match
	for i := 0; i+1 < len(s); i++ {
		bk := bucketOf[uint16(s[i])<<8|uint16(s[i+1])]
		if bk == 0 {
			continue
		}
		for _, ri := range buckets[bk] {
			r := &rules[ri]
			if !strings.HasPrefix(s[i:], r.prefix) {
				continue
			}
			if r.bound && i > 0 && csWordBound[s[i-1]] {
				continue
			}
			from := i + len(r.prefix)
			if hasAnyPrefix(s[from:], r.unless) {
				continue
			}
			end := from
			for end < len(s) && r.cs[s[end]] && (r.max == 0 || end-from < r.max) {
				end++
			}
			n := end - from
			if n < r.min || (r.exact && n != r.min) {
				continue
			}
			if r.exact && end < len(s) && csWordBound[s[end]] {
				continue
			}
			if b == nil {
				b = []byte(s)
			}
			for k := from; k < end; k++ {
				b[k] = Mask
			}
			i = end - 1
			break
		}
	}
	if b != nil {
		s = string(b)
	}
	return maskPEM(s)
}

// maskPEM masks the body of PEM private keys, keeping the BEGIN/END lines,
// line breaks and backslash escapes (so "\n" in JSON text stays "\n").
func maskPEM(s string) string {
	if !strings.Contains(s, pemBegin) {
		return s
	}
	var b []byte
	from := 0
	for {
		j := strings.Index(s[from:], pemBegin)
		if j < 0 {
			break
		}
		hdr := from + j + len(pemBegin)
		// The header line must name a private key: "-----BEGIN RSA PRIVATE KEY-----".
		k := strings.Index(s[hdr:], pemKey)
		if k < 0 || k > 40 {
			from = hdr
			continue
		}
		body := hdr + k + len(pemKey)
		e := strings.Index(s[body:], pemEnd)
		stop := len(s)
		if e >= 0 {
			stop = body + e
		}
		if b == nil {
			b = []byte(s)
		}
		for p := body; p < stop; p++ {
			c := b[p]
			if c == '\\' {
				p++ // keep the escape and the byte it escapes
				continue
			}
			if csBase64[c] {
				b[p] = Mask
			}
		}
		from = stop
		if e < 0 {
			break
		}
		from += len(pemEnd)
	}
	if b == nil {
		return s
	}
	return string(b)
}

// Bytes masks secrets in b in place and reports whether anything changed.
func Bytes(b []byte) bool {
	s := String(string(b))
	if s == string(b) {
		return false
	}
	copy(b, s)
	return true
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

package synthetic

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The vocabularies below are what the generated text is built from. They are
// small on purpose: realism comes from the grammar around them (code,
// log lines, prose), and a fixed list keeps output identical across Go
// versions, which random-word generation from a dictionary would not.

var (
	pkgNames = []string{"billing", "ledger", "auth", "scheduler", "ingest", "cache", "invoice",
		"payments", "router", "storage", "metrics", "notify", "search", "export", "session",
		"quota", "webhook", "catalog", "pricing", "audit", "gateway", "replica", "tenant", "usage"}
	nouns = []string{"account", "batch", "buffer", "client", "cursor", "entry", "event", "handler",
		"index", "job", "key", "lease", "limit", "record", "request", "result", "segment",
		"snapshot", "token", "window", "worker", "offset", "policy", "queue", "shard", "span",
		"ticket", "retry", "digest", "manifest", "checkpoint", "balance", "refund", "credit"}
	verbs = []string{"apply", "build", "check", "close", "commit", "compute", "decode", "drain",
		"encode", "fetch", "flush", "load", "lookup", "merge", "open", "parse", "post", "prune",
		"publish", "read", "reconcile", "refresh", "release", "render", "replay", "resolve",
		"rotate", "scan", "settle", "sync", "validate", "write"}
	adjectives = []string{"active", "stale", "pending", "partial", "remote", "local", "cached",
		"expired", "primary", "shadow", "nightly", "signed", "frozen", "sealed", "orphaned",
		"late", "hot", "cold", "draft", "final"}
	goTypes    = []string{"int", "int64", "string", "bool", "time.Duration", "[]byte", "float64", "uint32", "error", "time.Time"}
	weekdays   = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	months     = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	orgs       = []string{"the CNCF", "Gartner", "the Linux Foundation", "Stack Overflow", "the OECD", "Eurostat", "the IEA", "JetBrains", "GitHub", "the ACM", "Forrester", "IDC", "the W3C", "Datadog", "Honeycomb", "the Apache Software Foundation"}
	topics     = []string{"container adoption", "vector database latency", "LLM agent reliability", "battery storage costs", "heat pump efficiency", "open-source maintainer burnout", "WebAssembly in production", "carbon-aware scheduling", "edge inference", "memory-safe languages", "prompt caching", "observability spend"}
	metrics    = []string{"median p99 latency", "adoption", "year-over-year growth", "failure rate", "cost per request", "deployment frequency", "mean time to recovery", "cache hit rate", "energy use per job", "share of teams in production"}
	groups     = []string{"mid-size teams", "enterprises", "startups", "public agencies", "hobby projects", "regulated industries", "platform teams", "research labs"}
	domains    = []string{"example.org", "research.example.com", "blog.example.net", "docs.example.io", "news.example.com", "arxiv.example.org", "stats.example.gov", "wiki.example.org"}
	services   = []string{"billing-api", "ledger-worker", "auth-gateway", "search-indexer", "notify-relay", "export-cron", "quota-service", "webhook-dispatch", "session-store", "pricing-engine"}
	codenames  = []string{"heron", "kestrel", "marten", "osprey", "plover", "sable", "tern", "wren", "ibis", "lynx", "otter", "puffin"}
	regions    = []string{"eu-west-1", "us-east-2", "ap-south-1", "eu-central-2", "us-west-1", "sa-east-1"}
	relations  = []string{"sister", "manager", "landlord", "accountant", "co-founder", "dentist", "neighbour", "teammate"}
	chatTopics = []string{"the quarterly migration", "the conference trip", "the new billing flow", "the hiring plan",
		"the kitchen renovation", "the data retention policy", "the on-call rotation", "the product launch"}
	logMsgs = []string{"request completed", "cache miss", "retrying upstream call", "connection reset by peer",
		"lease renewed", "batch flushed", "slow query", "token refreshed", "queue depth high",
		"checkpoint written", "rate limit applied", "health check ok", "payload rejected", "circuit half-open"}
	sentenceOpeners = []string{"In practice,", "By contrast,", "Notably,", "According to the maintainers,",
		"Over the last two years,", "In most deployments,", "Perhaps surprisingly,", "For smaller teams,"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// titled caches the title-cased words of the vocabularies: title is on
// every generated line's path.
var titled = func() map[string]string {
	m := map[string]string{}
	for _, l := range [][]string{pkgNames, nouns, verbs, adjectives, codenames} {
		for _, w := range l {
			m[w] = strings.ToUpper(w[:1]) + w[1:]
			m[plural(w)] = strings.ToUpper(w[:1]) + plural(w)[1:]
		}
	}
	return m
}()

func title(s string) string {
	if t, ok := titled[s]; ok {
		return t
	}
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// camel joins words in lowerCamelCase.
func camel(words ...string) string {
	var b strings.Builder
	for i, w := range words {
		if i == 0 {
			b.WriteString(w)
		} else {
			b.WriteString(title(w))
		}
	}
	return b.String()
}

func hexID(r *rand.Rand, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return string(b)
}

// repoPath returns a Go source path in the repository model, e.g.
// "internal/billing/ledger_post.go".
func repoPath(r *rand.Rand) string {
	return fmt.Sprintf("internal/%s/%s_%s.go", pick(r, pkgNames), pick(r, nouns), pick(r, verbs))
}

func ipPort(r *rand.Rand) string {
	return fmt.Sprintf("10.%d.%d.%d:%d", r.IntN(256), r.IntN(256), 1+r.IntN(254), pick(r, []int{443, 8443, 5432, 6379, 9092, 8080}))
}

// plural returns the plural of a noun of the vocabulary.
func plural(n string) string {
	switch {
	case strings.HasSuffix(n, "y") && !strings.ContainsRune("aeiou", rune(n[len(n)-2])):
		return n[:len(n)-1] + "ies"
	case strings.HasSuffix(n, "s"), strings.HasSuffix(n, "x"), strings.HasSuffix(n, "ch"), strings.HasSuffix(n, "sh"):
		return n + "es"
	}
	return n + "s"
}

// third returns the third person singular of a verb of the vocabulary.
func third(v string) string {
	if strings.HasSuffix(v, "y") && !strings.ContainsRune("aeiou", rune(v[len(v)-2])) {
		return v[:len(v)-1] + "ies"
	}
	if strings.HasSuffix(v, "h") || strings.HasSuffix(v, "s") || strings.HasSuffix(v, "x") {
		return v + "es"
	}
	return v + "s"
}

// past returns the past participle of a verb of the vocabulary.
func past(v string) string {
	switch v {
	case "build":
		return "built"
	case "read":
		return "read"
	case "write":
		return "written"
	}
	switch {
	case strings.HasSuffix(v, "e"):
		return v + "d"
	case strings.HasSuffix(v, "y") && !strings.ContainsRune("aeiou", rune(v[len(v)-2])):
		return v[:len(v)-1] + "ied"
	}
	return v + "ed"
}

// gerund returns the -ing form of a verb of the vocabulary.
func gerund(v string) string {
	if strings.HasSuffix(v, "e") {
		return v[:len(v)-1] + "ing"
	}
	return v + "ing"
}

package engine

import "fmt"

// Kind is a region's lifecycle policy.
type Kind uint8

// The nine region kinds of the seeds.
const (
	KindTemporary Kind = iota
	KindPinned
	KindSlidingWindow
	KindCompacting
	KindCompactHistory
	KindClearable
	KindHashMap
	KindChecklist
	KindCustom
)

var kindNames = [...]string{"temporary", "pinned", "sliding_window", "compacting", "compact_history", "clearable", "hashmap", "checklist", "custom"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// parseKind accepts the TOML spellings, including the hash_map alias.
func parseKind(s string) (Kind, bool) {
	if s == "hash_map" {
		return KindHashMap, true
	}
	for i, n := range kindNames {
		if n == s {
			return Kind(i), true
		}
	}
	return 0, false
}

// rollsOffOldest reports whether an over-budget write evicts inside the
// region (reference policy.rs).
func (k Kind) rollsOffOldest() bool {
	switch k {
	case KindTemporary, KindClearable, KindSlidingWindow, KindCompacting:
		return true
	}
	return false
}

// Strategy is how a sliding_window sheds entries past max_items.
type Strategy uint8

// Sliding-window strategies.
const (
	StrategyPerItem Strategy = iota
	StrategyBulk
	StrategyCompact
)

var strategyNames = [...]string{"per_item", "bulk", "compact"}

func (s Strategy) String() string {
	if int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return fmt.Sprintf("Strategy(%d)", s)
}

// Admission says what a write that does not fit does.
type Admission uint8

// Admission policies.
const (
	AdmissionEvict Admission = iota
	AdmissionReject
)

func (a Admission) String() string {
	if a == AdmissionReject {
		return "reject"
	}
	return "evict"
}

// Volatility drives system-block ordering and chunking.
type Volatility uint8

// Volatility tiers, in sort order.
const (
	VolatilityStable Volatility = iota
	VolatilityGrows
	VolatilityRewritten
)

var volatilityNames = [...]string{"stable", "grows", "rewritten"}

func (v Volatility) String() string {
	if int(v) < len(volatilityNames) {
		return volatilityNames[v]
	}
	return fmt.Sprintf("Volatility(%d)", v)
}

// CacheHint tells a provider model how long a block is expected to stay put.
type CacheHint uint8

// Cache hints (reference cache.rs).
const (
	CacheAlways CacheHint = iota
	CacheSlidingPrefix
	CacheUntilChanged
	CacheRecentlyChanged
	CacheNever
)

var cacheNames = [...]string{"always", "sliding_prefix", "until_changed", "recently_changed", "never"}

func (c CacheHint) String() string {
	if int(c) < len(cacheNames) {
		return cacheNames[c]
	}
	return fmt.Sprintf("CacheHint(%d)", c)
}

// priority is the sort rank of a hint within a volatility tier.
func (c CacheHint) priority() int {
	switch c {
	case CacheAlways:
		return 0
	case CacheSlidingPrefix:
		return 1
	case CacheUntilChanged, CacheRecentlyChanged:
		return 2
	}
	return 3
}

// Transform is what an edge does to the context when a stage changes.
type Transform uint8

// Edge transforms.
const (
	TransformDirect Transform = iota
	TransformClear
	TransformCompact
	TransformCustom
)

var transformNames = [...]string{"direct", "clear", "compact", "custom"}

func (t Transform) String() string {
	if int(t) < len(transformNames) {
		return transformNames[t]
	}
	return fmt.Sprintf("Transform(%d)", t)
}

// EntryKind is the shape of one stored entry.
type EntryKind uint8

// Entry kinds.
const (
	EntryText EntryKind = iota
	EntryUser
	EntryAssistant
	EntryToolResult
)

var entryKindNames = [...]string{"text", "user_message", "assistant_turn", "tool_result"}

func (k EntryKind) String() string {
	if int(k) < len(entryKindNames) {
		return entryKindNames[k]
	}
	return fmt.Sprintf("EntryKind(%d)", k)
}

package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// LoadError is a problem with a blueprint file: which file, where (when known),
// which key, and what was expected.
type LoadError struct {
	File string
	Line int    // 1-based; 0 when unknown
	Key  string // dotted TOML key, when known
	Msg  string
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// SeedForm is which form of seed a region declares.
type SeedForm uint8

// Seed forms of seed 000's table.
const (
	SeedCaller SeedForm = iota // "task_input", "input", "<key>", { caller = "…" }
	SeedFiles
	SeedGlob
	SeedLiteral
	SeedCommand
	SeedRhai
	SeedTools
)

var seedFormNames = [...]string{"caller", "files", "glob", "literal", "command", "rhai", "tools"}

func (f SeedForm) String() string {
	if int(f) < len(seedFormNames) {
		return seedFormNames[f]
	}
	return fmt.Sprintf("SeedForm(%d)", f)
}

// Seed is what a region starts with.
type Seed struct {
	Form      SeedForm
	Caller    string   // caller key (SeedCaller); "task" for task_input
	Files     []string // SeedFiles
	Pattern   string   // SeedGlob
	Text      string   // SeedLiteral
	Command   string   // SeedCommand
	Script    string   // SeedRhai
	Tools     []string // SeedTools
	EachStage bool     // tools refresh = "each_stage"
}

// RegionDef is one declared region with every key of seed 000 and its default.
type RegionDef struct {
	Name             string
	Kind             Kind
	Budget           Budget
	CompactAt        float64 // fraction; meaningful when HasCompactAt
	HasCompactAt     bool
	ThresholdTokens  int // declared threshold_tokens; 0 = unset
	MaxItems         int
	Strategy         Strategy
	Overflow         int
	CompactCount     int
	SourceRegion     string
	MaxEntries       int
	HasMaxEntries    bool
	Script           string
	Persistent       bool
	Seed             *Seed
	SeedDeclared     bool // a seed key was written, understood or not
	Required         bool
	RequiredMessage  string
	Summarizable     bool
	Admission        Admission
	Volatility       Volatility
	Description      string
	DescribeInPrompt bool
	UnknownKeys      []string
	Line             int

	storedThreshold int    // ENGINE.md §2.3 parse-time threshold
	scriptSrc       []byte // custom script source, read at load
}

// fixed reports whether the region persists for the whole run and so counts
// against the working-room rule.
func (d *RegionDef) fixed() bool {
	switch d.Kind {
	case KindPinned, KindHashMap, KindCompactHistory:
		return true
	case KindCustom:
		return d.Persistent
	}
	return false
}

// pinnedLike: never evicted by the cascade, never cleared by clear/compact edges.
func (d *RegionDef) pinnedLike() bool { return d.fixed() }

// Routing is a stage's [tool_routing] table.
type Routing struct {
	DefaultRegion   string
	Overrides       map[string]Override
	MaxResultTokens int // 0 = no stage-wide cap
	PerTool         map[string]int
	Persist         bool
}

// Override is one tool's routing: a region, a cap, or both.
type Override struct {
	Region          string
	MaxResultTokens int // 0 = none
	HasCap          bool
}

// Gate holds an edge until its conditions pass.
type Gate struct {
	RequireNoOpenItems   string
	Region               string
	RequireRegionUpdated string
	RequireModifications bool
	Message              string
	MaxAttempts          int
}

// TransitionDef is one edge out of a stage.
type TransitionDef struct {
	Target    string
	Condition string
	Transform Transform
	Carry     []string
	Compact   []string
	Clear     []string
	Gate      *Gate
}

// StageDef is one [stages.<name>] table, as far as the engine reads it.
type StageDef struct {
	Name        string
	Prompt      string
	Tools       []string
	Regions     []*RegionDef // nil: the stage uses the global layout
	HasLayout   bool
	Routing     *Routing
	Transitions []*TransitionDef
}

// CompactionConfig is the [compaction] table; it configures the summariser only (D1).
type CompactionConfig struct {
	Provider         string
	Model            string
	SystemPrompt     string
	MaxSummaryTokens int
	Temperature      float64
}

// FileTracking is [context.file_tracking].
type FileTracking struct {
	Enabled       bool
	Region        string
	TrackReads    bool
	TrackWrites   bool
	MaxFileTokens int
}

// Limits is the part of [limits] the engine reads.
type Limits struct {
	ExactTokenCounting bool
}

// Blueprint is a loaded agent.leviath.
type Blueprint struct {
	Name          string // file name as given
	Dir           string // blueprint folder (scripts resolve here)
	RegionDefs    []*RegionDef
	DefaultLayout bool // no [context.regions]: the reference default layout
	EvictionOrder []string
	StageDefs     []*StageDef // initial stage first, then declared order
	Compaction    CompactionConfig
	HasCompaction bool
	FileTracking  FileTracking
	Limits        Limits
	parseLints    []Diagnostic
}

// LoadBlueprint reads and parses one blueprint file; its folder is the
// blueprint folder.
func LoadBlueprint(path string) (*Blueprint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load blueprint: %w", err)
	}
	return ParseBlueprint(path, data, filepath.Dir(path))
}

// ParseBlueprint parses blueprint text. name labels errors; dir is the
// blueprint folder against which custom-region scripts resolve.
func ParseBlueprint(name string, data []byte, dir string) (*Blueprint, error) {
	p := &parser{file: name, src: string(data), dir: dir}
	var raw map[string]any
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &LoadError{File: name, Line: pe.Position.Line, Msg: "invalid TOML: " + pe.Message}
		}
		return nil, &LoadError{File: name, Msg: "invalid TOML: " + err.Error()}
	}
	p.keys = md.Keys()
	return p.blueprint(raw)
}

type parser struct {
	file string
	src  string
	dir  string
	keys []toml.Key
	bp   *Blueprint
	// src's lines, split at the first lineOf (it runs for many keys).
	lines []string
}

func (p *parser) errf(line int, key, format string, args ...any) error {
	return &LoadError{File: p.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// childOrder lists the direct children of prefix in declaration order.
func (p *parser) childOrder(prefix []string, m map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range p.keys {
		if len(k) <= len(prefix) {
			continue
		}
		match := true
		for i := range prefix {
			if k[i] != prefix[i] {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		c := k[len(prefix)]
		if _, ok := m[c]; ok && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	// Anything the metadata missed (should not happen) keeps a stable order.
	var rest []string
	for c := range m {
		if !seen[c] {
			rest = append(rest, c)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// lineOf finds, best effort, the line of key name inside section: either
// "name = …" after the [section] header or a [section.name] header.
func (p *parser) lineOf(section, name string) int {
	if p.lines == nil {
		p.lines = strings.Split(p.src, "\n")
	}
	full := section + "." + name
	in := false
	for i, l := range p.lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			h := strings.Trim(t, "[] \t")
			if h == full {
				return i + 1
			}
			in = h == section
			continue
		}
		if in {
			k, _, ok := strings.Cut(t, "=")
			if ok && strings.Trim(strings.TrimSpace(k), `"'`) == name {
				return i + 1
			}
		}
	}
	return 0
}

func tableOf(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

func (p *parser) blueprint(raw map[string]any) (*Blueprint, error) {
	bp := &Blueprint{Name: p.file, Dir: p.dir}
	p.bp = bp
	agentV, ok := raw["agent"]
	if !ok {
		return nil, p.errf(0, "agent", "missing [agent] section")
	}
	agent, ok := tableOf(agentV)
	if !ok {
		return nil, p.errf(p.lineOf("", "agent"), "agent", "must be a table, not %s", tomlType(agentV))
	}
	entry := ""
	if v, ok := agent["entry_stage"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, p.errf(p.lineOf("agent", "entry_stage"), "agent.entry_stage", "must be a stage name, not %s", tomlType(v))
		}
		entry = s
	}

	// [context]
	var ctxT map[string]any
	if v, ok := raw["context"]; ok {
		if ctxT, ok = tableOf(v); !ok {
			return nil, p.errf(0, "context", "must be a table, not %s", tomlType(v))
		}
	}
	for _, k := range sortedKeys(ctxT) {
		switch k {
		case "regions", "file_tracking", "eviction_order":
		default:
			return nil, p.errf(p.lineOf("context", k), "context."+k, "[context] has unknown key '%s' (valid: eviction_order, file_tracking, regions)", k)
		}
	}
	if v, ok := ctxT["regions"]; ok {
		rt, ok := tableOf(v)
		if !ok {
			return nil, p.errf(p.lineOf("context", "regions"), "context.regions", "must be a table of regions, not %s", tomlType(v))
		}
		regs, err := p.regions([]string{"context", "regions"}, "context.regions", rt)
		if err != nil {
			return nil, err
		}
		bp.RegionDefs = regs
	} else {
		bp.DefaultLayout = true
		bp.RegionDefs = []*RegionDef{
			newRegionDef("system", KindPinned, 8000),
			newRegionDef("conversation", KindSlidingWindow, 10000),
		}
	}
	if v, ok := ctxT["eviction_order"]; ok {
		arr, err := p.stringList(v, "context.eviction_order")
		if err != nil {
			return nil, err
		}
		bp.EvictionOrder = arr
	}
	if v, ok := ctxT["file_tracking"]; ok {
		ft, ok := tableOf(v)
		if !ok {
			return nil, p.errf(0, "context.file_tracking", "must be a table, not %s", tomlType(v))
		}
		bp.FileTracking = FileTracking{Enabled: true, Region: "files", TrackReads: true, TrackWrites: true}
		for _, k := range sortedKeys(ft) {
			key := "context.file_tracking." + k
			switch k {
			case "region":
				s, ok := ft[k].(string)
				if !ok {
					return nil, p.errf(0, key, "must be a region name, not %s", tomlType(ft[k]))
				}
				bp.FileTracking.Region = s
			case "track_reads", "track_writes", "enabled":
				b, ok := ft[k].(bool)
				if !ok {
					return nil, p.errf(0, key, "must be true or false, not %s", tomlType(ft[k]))
				}
				switch k {
				case "track_reads":
					bp.FileTracking.TrackReads = b
				case "track_writes":
					bp.FileTracking.TrackWrites = b
				default:
					bp.FileTracking.Enabled = b
				}
			case "max_file_tokens":
				n, err := p.nonNegInt(ft[k], key)
				if err != nil {
					return nil, err
				}
				bp.FileTracking.MaxFileTokens = n
			default:
				return nil, p.errf(0, key, "[context.file_tracking] has unknown key '%s' (valid: enabled, max_file_tokens, region, track_reads, track_writes)", k)
			}
		}
	}

	// [compaction]: configures the summariser only (D1).
	bp.Compaction = CompactionConfig{Provider: "anthropic", Model: "claude-sonnet-4-6", MaxSummaryTokens: 2000, Temperature: 0.2}
	if v, ok := raw["compaction"]; ok {
		ct, ok := tableOf(v)
		if !ok {
			return nil, p.errf(0, "compaction", "must be a table, not %s", tomlType(v))
		}
		bp.HasCompaction = true
		for _, k := range sortedKeys(ct) {
			key := "compaction." + k
			switch k {
			case "provider", "model", "system_prompt":
				s, ok := ct[k].(string)
				if !ok {
					return nil, p.errf(p.lineOf("compaction", k), key, "must be a string, not %s", tomlType(ct[k]))
				}
				switch k {
				case "provider":
					bp.Compaction.Provider = s
				case "model":
					bp.Compaction.Model = s
				default:
					bp.Compaction.SystemPrompt = s
				}
			case "max_summary_tokens":
				n, err := p.nonNegInt(ct[k], key)
				if err != nil {
					return nil, err
				}
				if n == 0 {
					return nil, p.errf(p.lineOf("compaction", k), key, "must be at least 1")
				}
				bp.Compaction.MaxSummaryTokens = n
			case "temperature":
				switch t := ct[k].(type) {
				case float64:
					bp.Compaction.Temperature = t
				case int64:
					bp.Compaction.Temperature = float64(t)
				default:
					return nil, p.errf(p.lineOf("compaction", k), key, "must be a number, not %s", tomlType(ct[k]))
				}
			}
			// Other keys belong to the runtime's provider plumbing; read without failing.
		}
	}
	if v, ok := raw["limits"]; ok {
		lt, ok := tableOf(v)
		if !ok {
			return nil, p.errf(0, "limits", "must be a table, not %s", tomlType(v))
		}
		if e, ok := lt["exact_token_counting"]; ok {
			b, ok := e.(bool)
			if !ok {
				return nil, p.errf(p.lineOf("limits", "exact_token_counting"), "limits.exact_token_counting", "must be true or false, not %s", tomlType(e))
			}
			bp.Limits.ExactTokenCounting = b
		}
	}

	// [stages.*]
	if v, ok := raw["stages"]; ok {
		st, ok := tableOf(v)
		if !ok {
			return nil, p.errf(0, "stages", "must be a table of stages, not %s", tomlType(v))
		}
		for _, name := range p.childOrder([]string{"stages"}, st) {
			sv, ok := tableOf(st[name])
			if !ok {
				return nil, p.errf(p.lineOf("stages", name), "stages."+name, "must be a table, not %s", tomlType(st[name]))
			}
			sd, err := p.stage(name, sv)
			if err != nil {
				return nil, err
			}
			bp.StageDefs = append(bp.StageDefs, sd)
		}
	}
	if entry != "" {
		idx := -1
		for i, s := range bp.StageDefs {
			if s.Name == entry {
				idx = i
			}
		}
		if idx < 0 {
			return nil, p.errf(p.lineOf("agent", "entry_stage"), "agent.entry_stage", "names stage '%s', which is not declared under [stages]", entry)
		}
		s := bp.StageDefs[idx]
		copy(bp.StageDefs[1:idx+1], bp.StageDefs[:idx])
		bp.StageDefs[0] = s
	}
	return bp, nil
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (p *parser) stringList(v any, key string) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, p.errf(0, key, "must be an array of strings, not %s", tomlType(v))
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, p.errf(0, fmt.Sprintf("%s[%d]", key, i), "must be a string, not %s", tomlType(e))
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) nonNegInt(v any, key string) (int, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, p.errf(0, key, "must be an integer, not %s", tomlType(v))
	}
	if n < 0 {
		return 0, p.errf(0, key, "must not be negative (got %d)", n)
	}
	if n > 1<<40 {
		return 0, p.errf(0, key, "is too large (got %d)", n)
	}
	return int(n), nil
}

func newRegionDef(name string, k Kind, maxTokens int) *RegionDef {
	d := &RegionDef{
		Name: name, Kind: k, Budget: Budget{Tokens: maxTokens},
		MaxItems: 10, Overflow: 10, CompactCount: 10,
		Summarizable: true, Volatility: VolatilityRewritten,
	}
	if k == KindCompacting {
		d.storedThreshold = maxTokens * 8 / 10
	}
	return d
}

var regionKeys = []string{
	"admission", "budget", "compact_at", "compact_count", "describe_in_prompt", "description",
	"kind", "max_entries", "max_items", "max_tokens", "min_tokens", "overflow", "persistent",
	"required", "required_message", "script", "seed", "source_region", "strategy",
	"summarizable", "threshold_tokens", "volatility",
}

func (p *parser) regions(path []string, section string, rt map[string]any) ([]*RegionDef, error) {
	var out []*RegionDef
	for _, name := range p.childOrder(path, rt) {
		d, err := p.region(section, name, rt[name])
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (p *parser) region(section, name string, v any) (*RegionDef, error) {
	line := p.lineOf(section, name)
	key := section + "." + name
	t, ok := tableOf(v)
	if !ok {
		return nil, p.errf(line, key, "region '%s' must be a table such as { kind = \"pinned\", budget = \"5%%\" }, not %s", name, tomlType(v))
	}
	str := func(k string) (string, bool, error) {
		x, ok := t[k]
		if !ok {
			return "", false, nil
		}
		s, ok := x.(string)
		if !ok {
			return "", true, p.errf(line, key+"."+k, "region '%s': %s must be a string, not %s", name, k, tomlType(x))
		}
		return s, true, nil
	}
	integer := func(k string) (int, bool, error) {
		x, ok := t[k]
		if !ok {
			return 0, false, nil
		}
		n, ok := x.(int64)
		if !ok {
			return 0, true, p.errf(line, key+"."+k, "region '%s': %s must be an integer, not %s", name, k, tomlType(x))
		}
		if n < 0 {
			return 0, true, p.errf(line, key+"."+k, "region '%s': %s must not be negative (got %d)", name, k, n)
		}
		if n > 1<<40 {
			return 0, true, p.errf(line, key+"."+k, "region '%s': %s is too large (got %d)", name, k, n)
		}
		return int(n), true, nil
	}
	boolean := func(k string, def bool) (bool, error) {
		x, ok := t[k]
		if !ok {
			return def, nil
		}
		b, ok := x.(bool)
		if !ok {
			return false, p.errf(line, key+"."+k, "region '%s': %s must be true or false, not %s", name, k, tomlType(x))
		}
		return b, nil
	}

	kind := KindTemporary
	if s, ok, err := str("kind"); err != nil {
		return nil, err
	} else if ok {
		k, valid := parseKind(s)
		if !valid {
			return nil, p.errf(line, key+".kind", "region '%s': unknown kind \"%s\" (valid kinds: pinned, sliding_window, temporary, compacting, clearable, compact_history, checklist, hashmap, custom)", name, s)
		}
		kind = k
	}
	maxTok, hasMax, err := integer("max_tokens")
	if err != nil {
		return nil, err
	}
	minTok, _, err := integer("min_tokens")
	if err != nil {
		return nil, err
	}
	d := newRegionDef(name, kind, DefaultMaxTokens)
	d.Line = line
	d.Budget = Budget{Tokens: DefaultMaxTokens}
	if hasMax {
		d.Budget.Tokens = maxTok
	}
	hasPercent := false
	if s, ok, err := str("budget"); err != nil {
		return nil, err
	} else if ok {
		f, perr := ParseBudget(s)
		if perr != nil {
			return nil, p.errf(line, key+".budget", "region '%s': %v", name, perr)
		}
		hasPercent = true
		d.Budget = Budget{Percent: true, Fraction: f, Min: minTok}
		if hasMax {
			d.Budget.Max = maxTok
		}
	}
	if s, ok, err := str("compact_at"); err != nil {
		return nil, err
	} else if ok {
		f, perr := ParseBudget(s)
		if perr != nil {
			return nil, p.errf(line, key+".compact_at", "region '%s': %v", name, perr)
		}
		d.CompactAt, d.HasCompactAt = f, true
	}
	thr, hasThr, err := integer("threshold_tokens")
	if err != nil {
		return nil, err
	}
	d.ThresholdTokens = thr
	if kind == KindCompacting {
		// ENGINE.md §2.3, parse-time table.
		switch {
		case d.HasCompactAt && hasThr:
			d.storedThreshold = thr
		case d.HasCompactAt:
			d.storedThreshold = noThreshold
		case hasThr:
			d.storedThreshold = thr
		case hasPercent:
			d.storedThreshold = noThreshold
			d.CompactAt, d.HasCompactAt = 0.80, true
		default:
			d.storedThreshold = d.Budget.Tokens * 8 / 10
		}
	}
	if n, ok, err := integer("max_items"); err != nil {
		return nil, err
	} else if ok {
		d.MaxItems = n
	}
	if s, ok, err := str("strategy"); err != nil {
		return nil, err
	} else if ok {
		found := false
		for i, n := range strategyNames {
			if n == s {
				d.Strategy, found = Strategy(i), true
			}
		}
		if !found {
			return nil, p.errf(line, key+".strategy", "region '%s': strategy \"%s\" is not valid (valid: per_item, bulk, compact)", name, s)
		}
	}
	if n, ok, err := integer("overflow"); err != nil {
		return nil, err
	} else if ok {
		d.Overflow = n
	}
	if n, ok, err := integer("compact_count"); err != nil {
		return nil, err
	} else if ok {
		d.CompactCount = n
	}
	if s, _, err := str("source_region"); err != nil {
		return nil, err
	} else {
		d.SourceRegion = s
	}
	if n, ok, err := integer("max_entries"); err != nil {
		return nil, err
	} else if ok {
		d.MaxEntries, d.HasMaxEntries = n, true
	}
	if s, ok, err := str("script"); err != nil {
		return nil, err
	} else if ok {
		d.Script = strings.TrimSpace(s)
	}
	if kind == KindCustom {
		if d.Script == "" {
			return nil, p.errf(line, key+".script", "region '%s': kind = \"custom\" requires script = \"<path>.rhai\"", name)
		}
		if err := p.loadScript(d, line, key); err != nil {
			return nil, err
		}
	}
	if d.Persistent, err = boolean("persistent", false); err != nil {
		return nil, err
	}
	if d.Required, err = boolean("required", false); err != nil {
		return nil, err
	}
	if s, _, err := str("required_message"); err != nil {
		return nil, err
	} else {
		d.RequiredMessage = s
	}
	if d.Summarizable, err = boolean("summarizable", true); err != nil {
		return nil, err
	}
	if s, ok, err := str("admission"); err != nil {
		return nil, err
	} else if ok {
		switch s {
		case "evict":
			d.Admission = AdmissionEvict
		case "reject":
			d.Admission = AdmissionReject
		default:
			return nil, p.errf(line, key+".admission", "Region validation failed: region '%s' has admission = \"%s\"; expected \"evict\" or \"reject\"", name, s)
		}
	}
	if s, ok, err := str("volatility"); err != nil {
		return nil, err
	} else if ok {
		switch s {
		case "stable":
			d.Volatility = VolatilityStable
		case "grows":
			d.Volatility = VolatilityGrows
		case "rewritten":
			d.Volatility = VolatilityRewritten
		default:
			return nil, p.errf(line, key+".volatility", "Region validation failed: region '%s' has volatility = \"%s\"; expected \"stable\", \"grows\" or \"rewritten\"", name, s)
		}
	}
	if s, _, err := str("description"); err != nil {
		return nil, err
	} else {
		d.Description = strings.TrimSpace(s)
	}
	if d.DescribeInPrompt, err = boolean("describe_in_prompt", false); err != nil {
		return nil, err
	}
	if sv, ok := t["seed"]; ok {
		d.SeedDeclared = true
		d.Seed = parseSeed(name, sv)
	} else if name == "task" {
		d.Seed = &Seed{Form: SeedCaller, Caller: "task"}
	}
	for _, k := range sortedKeys(t) {
		known := false
		for _, rk := range regionKeys {
			if rk == k {
				known = true
				break
			}
		}
		if !known {
			d.UnknownKeys = append(d.UnknownKeys, k)
		}
	}
	return d, nil
}

// loadScript reads a custom region's script at load: the path must stay
// inside the blueprint folder and the file must be readable.
func (p *parser) loadScript(d *RegionDef, line int, key string) error {
	rel := filepath.FromSlash(d.Script)
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		return p.errf(line, key+".script", "region '%s': custom region script '%s' must stay inside the blueprint folder", d.Name, d.Script)
	}
	src, err := os.ReadFile(filepath.Join(p.dir, rel))
	if err != nil {
		return p.errf(line, key+".script", "region '%s': cannot read custom region script '%s': %v", d.Name, d.Script, errors.Unwrap(err))
	}
	d.scriptSrc = src
	return nil
}

// parseSeed follows ENGINE.md §1.8; nil means "not understood" (a lint).
func parseSeed(region string, v any) *Seed {
	switch s := v.(type) {
	case string:
		switch s {
		case "task_input":
			return &Seed{Form: SeedCaller, Caller: "task"}
		case "input":
			return &Seed{Form: SeedCaller, Caller: region}
		}
		if s == "" {
			return &Seed{Form: SeedCaller, Caller: region}
		}
		return &Seed{Form: SeedCaller, Caller: s}
	case map[string]any:
		each := false
		if r, ok := s["refresh"].(string); ok {
			w := strings.ToLower(strings.ReplaceAll(r, " ", ""))
			each = w == "each_stage" || w == "stage"
		}
		if g, ok := s["glob"].(string); ok {
			return &Seed{Form: SeedGlob, Pattern: g}
		}
		if arr, ok := s["files"].([]any); ok {
			var files []string
			for _, e := range arr {
				if f, ok := e.(string); ok {
					files = append(files, f)
				}
			}
			return &Seed{Form: SeedFiles, Files: files}
		}
		if l, ok := s["literal"].(string); ok {
			return &Seed{Form: SeedLiteral, Text: l}
		}
		if r, ok := s["rhai"].(string); ok {
			return &Seed{Form: SeedRhai, Script: r}
		}
		if c, ok := s["command"].(string); ok {
			return &Seed{Form: SeedCommand, Command: c}
		}
		if t, ok := s["tool"].(string); ok {
			return &Seed{Form: SeedTools, Tools: []string{t}, EachStage: each}
		}
		if arr, ok := s["tools"].([]any); ok {
			var tools []string
			for _, e := range arr {
				switch x := e.(type) {
				case string:
					tools = append(tools, x)
				case map[string]any:
					if n, ok := x["name"].(string); ok {
						tools = append(tools, n)
					}
				}
			}
			if len(tools) == 0 {
				return nil
			}
			return &Seed{Form: SeedTools, Tools: tools, EachStage: each}
		}
		if c, ok := s["caller"].(string); ok {
			return &Seed{Form: SeedCaller, Caller: c}
		}
	}
	return nil
}

var routingKeys = "default_region, max_result_tokens, max_result_tokens_per_tool, overrides, persist"

// stageKeys are the keys the reference runtime reads in a [stages.<name>]
// table (manifest/stage.rs); anything else is reported as a lint.
var stageKeys = []string{
	"accepts_messages", "allow_as_worker", "allow_blocking_tools", "allow_complete", "available_tools",
	"batch_tool_hint", "context", "description", "hooks", "interaction_points", "max_items", "max_iterations",
	"max_revisits", "max_workers", "merge_stage", "mode", "model", "nudge", "on_worker_failure", "output",
	"require_output", "required_tools", "requires_children", "results_region", "sandbox", "security",
	"shell_hint", "split_prompt", "system_prompt", "tool_permissions", "tool_routing", "transition_prompt",
	"transitions", "worker_agent", "worker_query", "worker_stage",
}

func (p *parser) stage(name string, t map[string]any) (*StageDef, error) {
	sd := &StageDef{Name: name}
	sect := "stages." + name
	for _, k := range sortedKeys(t) {
		if !contains(stageKeys, k) {
			p.bp.parseLints = append(p.bp.parseLints, Diagnostic{"unknown-stage-key", fmt.Sprintf("stage '%s' has unknown key '%s' (nearest valid key: '%s'); the engine ignores it", name, k, nearest(k, stageKeys))})
		}
	}
	if v, ok := t["system_prompt"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, p.errf(p.lineOf(sect, "system_prompt"), sect+".system_prompt", "stage '%s': system_prompt must be a string, not %s", name, tomlType(v))
		}
		sd.Prompt = strings.TrimSpace(s)
	}
	// A fan-out stage's split_prompt is appended to its prompt, as the
	// runtime does when it sets the stage up.
	if v, ok := t["split_prompt"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, p.errf(p.lineOf(sect, "split_prompt"), sect+".split_prompt", "stage '%s': split_prompt must be a string, not %s", name, tomlType(v))
		}
		if s = strings.TrimSpace(s); s != "" {
			if sd.Prompt != "" {
				sd.Prompt += "\n\n"
			}
			sd.Prompt += s
		}
	}
	if v, ok := t["available_tools"]; ok {
		tools, err := p.stringList(v, sect+".available_tools")
		if err != nil {
			return nil, err
		}
		sd.Tools = tools
	}
	if v, ok := t["context"]; ok {
		ct, ok := tableOf(v)
		if !ok {
			return nil, p.errf(0, sect+".context", "stage '%s': context must be a table, not %s", name, tomlType(v))
		}
		for _, k := range sortedKeys(ct) {
			if k != "regions" {
				return nil, p.errf(0, sect+".context."+k, "stage '%s': context has unknown key '%s' (valid: regions)", name, k)
			}
		}
		if rv, ok := ct["regions"]; ok {
			rt, ok := tableOf(rv)
			if !ok {
				return nil, p.errf(0, sect+".context.regions", "stage '%s': context.regions must be a table of regions, not %s", name, tomlType(rv))
			}
			regs, err := p.regions([]string{"stages", name, "context", "regions"}, sect+".context.regions", rt)
			if err != nil {
				return nil, err
			}
			sd.Regions, sd.HasLayout = regs, true
		}
	}
	if v, ok := t["tool_routing"]; ok {
		r, err := p.routing(name, v)
		if err != nil {
			return nil, err
		}
		sd.Routing = r
	}
	if v, ok := t["transitions"]; ok {
		tt, ok := tableOf(v)
		if !ok {
			return nil, p.errf(0, sect+".transitions", "stage '%s': transitions must be a table, not %s", name, tomlType(v))
		}
		for _, target := range p.childOrder([]string{"stages", name, "transitions"}, tt) {
			td, err := p.transition(name, target, tt[target])
			if err != nil {
				return nil, err
			}
			sd.Transitions = append(sd.Transitions, td)
		}
	}
	return sd, nil
}

func (p *parser) routing(stage string, v any) (*Routing, error) {
	sect := "stages." + stage + ".tool_routing"
	t, ok := tableOf(v)
	if !ok {
		return nil, p.errf(0, sect, "stage '%s': tool_routing must be a table, not %s", stage, tomlType(v))
	}
	r := &Routing{DefaultRegion: "tool_results", Persist: true, Overrides: map[string]Override{}, PerTool: map[string]int{}}
	for _, k := range sortedKeys(t) {
		key := sect + "." + k
		line := p.lineOf(sect, k)
		switch k {
		case "default_region":
			s, ok := t[k].(string)
			if !ok {
				return nil, p.errf(line, key, "stage '%s': tool_routing.default_region must be a region name, not %s", stage, tomlType(t[k]))
			}
			r.DefaultRegion = s
		case "persist":
			b, ok := t[k].(bool)
			if !ok {
				return nil, p.errf(line, key, "stage '%s': tool_routing.persist must be true or false, not %s", stage, tomlType(t[k]))
			}
			r.Persist = b
		case "max_result_tokens":
			n, ok := t[k].(int64)
			if !ok {
				return nil, p.errf(line, key, "stage '%s': tool_routing.max_result_tokens must be a number", stage)
			}
			if n < 0 {
				return nil, p.errf(line, key, "stage '%s': tool_routing.max_result_tokens must not be negative (got %d)", stage, n)
			}
			r.MaxResultTokens = int(min(n, 1<<40))
		case "max_result_tokens_per_tool":
			pt, ok := tableOf(t[k])
			if !ok {
				return nil, p.errf(line, key, "stage '%s': tool_routing.max_result_tokens_per_tool must be a table of tool = tokens, not %s", stage, tomlType(t[k]))
			}
			for _, tool := range sortedKeys(pt) {
				n, ok := pt[tool].(int64)
				if !ok {
					return nil, p.errf(p.lineOf(sect+".max_result_tokens_per_tool", tool), key+"."+tool, "stage '%s': tool_routing.max_result_tokens_per_tool.%s must be a number", stage, tool)
				}
				if n < 0 {
					return nil, p.errf(p.lineOf(sect+".max_result_tokens_per_tool", tool), key+"."+tool, "stage '%s': tool_routing.max_result_tokens_per_tool.%s must not be negative (got %d)", stage, tool, n)
				}
				r.PerTool[tool] = int(min(n, 1<<40))
			}
		case "overrides":
			ot, ok := tableOf(t[k])
			if !ok {
				return nil, p.errf(line, key, "stage '%s': tool_routing.overrides must be a table of tool = region, not %s", stage, tomlType(t[k]))
			}
			for _, tool := range sortedKeys(ot) {
				o, err := p.override(stage, tool, ot[tool])
				if err != nil {
					return nil, err
				}
				r.Overrides[tool] = o
			}
		default:
			return nil, p.errf(line, key, "stage '%s': tool_routing has unknown key '%s' (valid: %s)", stage, k, routingKeys)
		}
	}
	return r, nil
}

func (p *parser) override(stage, tool string, v any) (Override, error) {
	sect := "stages." + stage + ".tool_routing.overrides"
	key := sect + "." + tool
	line := p.lineOf(sect, tool)
	pre := fmt.Sprintf("stage '%s': tool_routing.overrides.%s", stage, tool)
	switch x := v.(type) {
	case string:
		return Override{Region: x}, nil
	case map[string]any:
		if len(x) == 0 {
			return Override{}, p.errf(line, key, "%s is empty (set region, max_result_tokens, or both)", pre)
		}
		var o Override
		for _, k := range sortedKeys(x) {
			switch k {
			case "region":
				s, ok := x[k].(string)
				if !ok {
					return o, p.errf(line, key+".region", "%s.region must be a region name", pre)
				}
				o.Region = s
			case "max_result_tokens":
				n, ok := x[k].(int64)
				if !ok {
					return o, p.errf(line, key+".max_result_tokens", "%s.max_result_tokens must be a number", pre)
				}
				if n < 0 {
					return o, p.errf(line, key+".max_result_tokens", "%s.max_result_tokens must not be negative (got %d)", pre, n)
				}
				o.MaxResultTokens, o.HasCap = int(min(n, 1<<40)), true
			default:
				return o, p.errf(line, key+"."+k, "%s has unknown key '%s' (valid: region, max_result_tokens)", pre, k)
			}
		}
		return o, nil
	}
	return Override{}, p.errf(line, key, "%s must be a region name or a table of { region, max_result_tokens }, not %s", pre, tomlType(v))
}

var (
	edgeKeys = []string{"condition", "gate", "hint", "prompt", "stuck_after_iterations", "stuck_after_minutes", "stuck_after_same_file_edits", "stuck_after_tool_calls", "transform", "transform_config"}
	gateKeys = []string{"max_attempts", "message", "region", "require_modifications", "require_no_open_items", "require_region_updated", "tools"}
)

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) transition(stage, target string, v any) (*TransitionDef, error) {
	sect := "stages." + stage + ".transitions"
	key := sect + "." + target
	line := p.lineOf(sect, target)
	t, ok := tableOf(v)
	if !ok {
		return nil, p.errf(line, key, "stage '%s': transition to '%s' must be a table, not %s", stage, target, tomlType(v))
	}
	td := &TransitionDef{Target: target, Condition: "always"}
	for _, k := range sortedKeys(t) {
		if !contains(edgeKeys, k) {
			return nil, p.errf(line, key+"."+k, "stage '%s': transition to '%s' has unknown key '%s' (valid: %s)", stage, target, k, strings.Join(edgeKeys, ", "))
		}
	}
	if c, ok := t["condition"]; ok {
		s, ok := c.(string)
		if !ok {
			return nil, p.errf(line, key+".condition", "transition to '%s': condition must be a string, not %s", target, tomlType(c))
		}
		switch s {
		case "always", "error", "max_iterations", "llm_choice", "stuck", "dead_end":
			td.Condition = s
		default:
			return nil, p.errf(line, key+".condition", "transition to '%s' has unknown condition '%s' (valid: always, error, max_iterations, llm_choice, stuck, dead_end)", target, s)
		}
	}
	if x, ok := t["transform"]; ok {
		s, ok := x.(string)
		if !ok {
			return nil, p.errf(line, key+".transform", "transition to '%s': transform must be a string, not %s", target, tomlType(x))
		}
		switch s {
		case "direct":
			td.Transform = TransformDirect
		case "clear":
			td.Transform = TransformClear
		case "compact", "summarize":
			td.Transform = TransformCompact
		case "custom":
			td.Transform = TransformCustom
		default:
			return nil, p.errf(line, key+".transform", "transition to '%s' has unknown transform '%s' (valid: direct, clear, compact, summarize, custom)", target, s)
		}
	}
	if x, ok := t["transform_config"]; ok {
		tc, ok := tableOf(x)
		if !ok {
			return nil, p.errf(line, key+".transform_config", "transition to '%s': transform_config must be a table, not %s", target, tomlType(x))
		}
		for _, k := range sortedKeys(tc) {
			var err error
			switch k {
			case "carry":
				td.Carry, err = p.stringList(tc[k], key+".transform_config.carry")
			case "compact":
				td.Compact, err = p.stringList(tc[k], key+".transform_config.compact")
			case "clear":
				td.Clear, err = p.stringList(tc[k], key+".transform_config.clear")
			case "compact_prompt":
			default:
				err = p.errf(line, key+".transform_config."+k, "transition to '%s': transform_config has unknown key '%s' (valid: carry, clear, compact, compact_prompt)", target, k)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if x, ok := t["gate"]; ok {
		gt, ok := tableOf(x)
		if !ok {
			return nil, p.errf(line, key+".gate", "transition to '%s': gate must be a table, not %s", target, tomlType(x))
		}
		g := &Gate{MaxAttempts: 3}
		for _, k := range sortedKeys(gt) {
			gk := key + ".gate." + k
			if !contains(gateKeys, k) {
				return nil, p.errf(line, gk, "stage '%s': transition to '%s': gate has unknown key '%s' (valid: %s)", stage, target, k, strings.Join(gateKeys, ", "))
			}
			switch k {
			case "require_no_open_items", "region", "require_region_updated", "message":
				s, ok := gt[k].(string)
				if !ok {
					return nil, p.errf(line, gk, "transition to '%s': gate.%s must be a string, not %s", target, k, tomlType(gt[k]))
				}
				switch k {
				case "require_no_open_items":
					g.RequireNoOpenItems = s
				case "region":
					g.Region = s
				case "require_region_updated":
					g.RequireRegionUpdated = s
				default:
					g.Message = strings.TrimSpace(s)
				}
			case "require_modifications":
				b, ok := gt[k].(bool)
				if !ok {
					return nil, p.errf(line, gk, "transition to '%s': gate.require_modifications must be true or false, not %s", target, tomlType(gt[k]))
				}
				g.RequireModifications = b
			case "max_attempts":
				n, err := p.nonNegInt(gt[k], gk)
				if err != nil {
					return nil, err
				}
				g.MaxAttempts = n
			}
		}
		td.Gate = g
	}
	return td, nil
}

// Stages lists the stage names: the initial stage first, then the rest in
// declared order.
func (b *Blueprint) Stages() []string {
	out := make([]string, len(b.StageDefs))
	for i, s := range b.StageDefs {
		out[i] = s.Name
	}
	return out
}

// Stage returns a stage definition by name.
func (b *Blueprint) Stage(name string) (*StageDef, bool) {
	for _, s := range b.StageDefs {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// layout returns the regions a stage sees: its own layout, else the global one.
func (b *Blueprint) layout(stage string) ([]*RegionDef, error) {
	if stage == "" {
		return b.RegionDefs, nil
	}
	s, ok := b.Stage(stage)
	if !ok {
		return nil, fmt.Errorf("unknown stage '%s' (stages: %s)", stage, strings.Join(b.Stages(), ", "))
	}
	if s.HasLayout {
		return s.Regions, nil
	}
	return b.RegionDefs, nil
}

// ResolvedRegion is a region's budget worked out against one window.
type ResolvedRegion struct {
	Name            string
	Kind            Kind
	MaxTokens       int
	MinTokens       int // declared floor, 0 = none
	ThresholdTokens int // compacting only; 0 otherwise
	Def             *RegionDef
}

// HasThreshold reports whether the kind has a compaction threshold.
func (r ResolvedRegion) HasThreshold() bool { return r.Kind == KindCompacting }

// Regions resolves the layout a stage sees ("" = the global layout) against
// a window, in declared order.
func (b *Blueprint) Regions(stage string, window int) ([]ResolvedRegion, error) {
	defs, err := b.layout(stage)
	if err != nil {
		return nil, err
	}
	out := make([]ResolvedRegion, 0, len(defs))
	for _, d := range defs {
		out = append(out, resolveDef(d, window))
	}
	return out, nil
}

func resolveDef(d *RegionDef, window int) ResolvedRegion {
	m := d.Budget.Resolve(window)
	return ResolvedRegion{Name: d.Name, Kind: d.Kind, MaxTokens: m, MinTokens: d.Budget.Min, ThresholdTokens: d.resolveThreshold(m), Def: d}
}

// Resolved returns a copy whose every budget is absolute: each percentage
// worked out against window, each compacting threshold fixed (the
// reference's ContextLayout::resolved). Resolving is idempotent.
func (b *Blueprint) Resolved(window int) *Blueprint {
	return b.ResolvedStages(func(string) int { return window })
}

// ResolvedStages resolves the global layout against the initial stage's
// window and each stage layout against its own stage's window.
func (b *Blueprint) ResolvedStages(windowFor func(stage string) int) *Blueprint {
	first := ""
	if len(b.StageDefs) > 0 {
		first = b.StageDefs[0].Name
	}
	resolve := func(defs []*RegionDef, window int) []*RegionDef {
		out := make([]*RegionDef, len(defs))
		for i, d := range defs {
			c := *d
			rr := resolveDef(d, window)
			c.Budget = Budget{Tokens: rr.MaxTokens}
			if c.Kind == KindCompacting {
				c.storedThreshold, c.HasCompactAt, c.CompactAt = rr.ThresholdTokens, false, 0
			}
			out[i] = &c
		}
		return out
	}
	nb := *b
	nb.RegionDefs = resolve(b.RegionDefs, windowFor(first))
	nb.StageDefs = make([]*StageDef, len(b.StageDefs))
	for i, s := range b.StageDefs {
		c := *s
		if s.HasLayout {
			c.Regions = resolve(s.Regions, windowFor(s.Name))
		}
		nb.StageDefs[i] = &c
	}
	return &nb
}

// WithBudgets returns a copy whose named regions (in every layout that
// declares them) take new budgets: "N%" keeps the region's cap and floor,
// "N" is an absolute token count.
func (b *Blueprint) WithBudgets(budgets map[string]string) (*Blueprint, error) {
	nb := *b
	clone := func(defs []*RegionDef) []*RegionDef {
		out := make([]*RegionDef, len(defs))
		for i, d := range defs {
			c := *d
			out[i] = &c
		}
		return out
	}
	nb.RegionDefs = clone(b.RegionDefs)
	nb.StageDefs = make([]*StageDef, len(b.StageDefs))
	for i, s := range b.StageDefs {
		c := *s
		if s.HasLayout {
			c.Regions = clone(s.Regions)
		}
		nb.StageDefs[i] = &c
	}
	names := make([]string, 0, len(budgets))
	for n := range budgets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		spec := strings.TrimSpace(budgets[name])
		var nbud Budget
		if strings.HasSuffix(spec, "%") {
			f, err := ParseBudget(spec)
			if err != nil {
				return nil, fmt.Errorf("region '%s': %w", name, err)
			}
			nbud = Budget{Percent: true, Fraction: f}
		} else {
			var n int
			if _, err := fmt.Sscanf(spec, "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != spec {
				return nil, fmt.Errorf("region '%s': budget '%s' must be \"N%%\" or a positive token count", name, spec)
			}
			nbud = Budget{Tokens: n}
		}
		found := false
		apply := func(defs []*RegionDef) {
			for _, d := range defs {
				if d.Name != name {
					continue
				}
				found = true
				if nbud.Percent {
					nbud.Max, nbud.Min = d.Budget.Max, d.Budget.Min
				}
				d.Budget = nbud
				if d.Kind == KindCompacting && !d.HasCompactAt && d.ThresholdTokens == 0 {
					if nbud.Percent {
						d.CompactAt, d.HasCompactAt, d.storedThreshold = 0.80, true, noThreshold
					} else {
						d.storedThreshold = nbud.Tokens * 8 / 10
					}
				}
			}
		}
		apply(nb.RegionDefs)
		for _, s := range nb.StageDefs {
			if s.HasLayout {
				apply(s.Regions)
			}
		}
		if !found {
			return nil, fmt.Errorf("region '%s' is not declared in this blueprint", name)
		}
	}
	return &nb, nil
}

package engine

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsim/ctxsim/internal/tomlfile"
)

// Diagnostic is one validation finding.
type Diagnostic struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Report holds every error and lint of one validation.
type Report struct {
	Errors []Diagnostic
	Lints  []Diagnostic
}

// OK reports whether the blueprint has no errors.
func (r Report) OK() bool { return len(r.Errors) == 0 }

func (r *Report) errf(code, format string, args ...any) {
	r.Errors = append(r.Errors, Diagnostic{code, fmt.Sprintf(format, args...)})
}

func (r *Report) lintf(code, format string, args ...any) {
	r.Lints = append(r.Lints, Diagnostic{code, fmt.Sprintf(format, args...)})
}

// The reference runtime's working-room rule (layout.rs).
const (
	MinWorkingTokens     = 8000
	BudgetCheckMinTotal  = 20_000
	StageInstructions    = "stage_instructions"
	stageInstrPrefix     = "[Stage instructions: "
	defaultGateAttempts  = 3
	defaultRequiredNudge = "Required context region '{region}' is still empty. You must populate it (e.g. via context_write with region=\"{region}\") before this stage can complete."
)

// unboundedLintWindow: the reference reports unbounded percentage budgets
// against its widest (1M-class) models, where a share stops meaning "evicts".
const unboundedLintWindow = 1_000_000

func percentString(f float64) string {
	return strconv.FormatFloat(math.Round(f*100*1e6)/1e6, 'f', -1, 64)
}

// alwaysVisible are the regions the runtime always carries (§8.4).
var alwaysVisible = []string{"conversation", "tool_results", "final_output", StageInstructions}

// Validate checks the blueprint at one model window (0 skips the token
// checks, as the reference does before resolution) and returns every error
// and lint with its code.
func (b *Blueprint) Validate(window int) Report {
	return b.validate(func(string) int { return window })
}

// ValidateStages checks each layout against its own stage's window: the
// global layout against the initial stage's window, each stage layout
// against that stage's (ENGINE.md §2.5). windowFor gets a stage name.
func (b *Blueprint) ValidateStages(windowFor func(stage string) int) Report {
	return b.validate(windowFor)
}

func (b *Blueprint) validate(windowFor func(stage string) int) Report {
	var r Report
	r.Lints = append(r.Lints, b.parseLints...)
	first := ""
	if len(b.StageDefs) > 0 {
		first = b.StageDefs[0].Name
	}

	// Unknown keys (D8) and seeds, over every layout, once per declaration.
	for _, lay := range b.layouts() {
		st := lay.stage
		if st == "" {
			st = first
		}
		window := windowFor(st)
		for _, d := range lay.defs {
			for _, k := range d.UnknownKeys {
				r.lintf("unknown-region-key", "%sregion '%s' has unknown key '%s' (nearest valid key: '%s'); it is ignored", lay.prefix, d.Name, k, nearest(k, regionKeys))
			}
			if d.SeedDeclared && d.Seed == nil {
				r.lintf("region-seed-not-understood", "%sregion '%s' declares a seed that isn't one of the recognized forms, so it is ignored and the region starts empty", lay.prefix, d.Name)
			}
			if d.Seed != nil && d.Seed.Form == SeedCommand {
				r.lintf("command-seed", "%sregion '%s' is seeded by the command %q, which runs only when the caller allows command seeds", lay.prefix, d.Name, d.Seed.Command)
			}
			if d.Seed != nil && d.Seed.Form == SeedTools {
				each := ""
				if d.Seed.EachStage {
					each = " (on every stage entry)"
				}
				r.lintf("tool-seed", "%sregion '%s' is seeded by the tools %s%s", lay.prefix, d.Name, strings.Join(d.Seed.Tools, ", "), each)
			}
			if d.Kind == KindHashMap && d.HasMaxEntries && d.MaxEntries == 0 {
				r.errf("max-entries-zero", "%sregion '%s': max_entries = 0 leaves the hashmap no room for any key; omit it for no limit or set it to at least 1", lay.prefix, d.Name)
			}
			if d.Kind == KindSlidingWindow && d.MaxItems == 0 {
				r.errf("max-items-zero", "%sregion '%s': max_items = 0 keeps nothing; set it to at least 1", lay.prefix, d.Name)
			}
			if d.Kind == KindCompactHistory && d.SourceRegion != "" {
				if src := findDef(lay.defs, d.SourceRegion); src == nil || src.Kind != KindCompacting {
					r.lintf("compact-history-unpaired", "%sregion '%s' names source_region '%s', which is not a compacting region of this layout, so no summary will ever arrive", lay.prefix, d.Name, d.SourceRegion)
				}
			}
			if d.Budget.Percent && d.Budget.Max == 0 && window >= unboundedLintWindow {
				switch d.Kind {
				case KindTemporary, KindClearable, KindSlidingWindow, KindCompacting:
					r.lintf("unbounded-percentage-budget", "%sregion '%s' evicts at its bound, and its budget \"%s%%\" resolves to %d tokens on a %d-token window - a bound that large may never be reached, so the region hoards instead of evicting", lay.prefix, d.Name, percentString(d.Budget.Fraction), d.Budget.Resolve(window), window)
				}
			}
		}
		// Layout rules (§2.6).
		seen := map[string]bool{}
		for _, d := range lay.defs {
			if seen[d.Name] {
				r.errf("duplicate-region", "%sInvalid region '%s': duplicate region name", lay.prefix, d.Name)
			}
			seen[d.Name] = true
		}
		if window > 0 {
			total, fixed := 0, 0
			anyPercent := false
			for _, d := range lay.defs {
				m := d.Budget.Resolve(window)
				if d.Budget.Percent {
					anyPercent = true
				}
				total += m
				if d.fixed() {
					fixed += m
				}
			}
			if anyPercent {
				total = window
			}
			working := max(total-fixed, 0)
			if total >= BudgetCheckMinTotal && working < MinWorkingTokens {
				r.errf("working-room", "%sInvalid layout: context layout leaves only %d working tokens after fixed regions (pinned/hashmap/compact_history/persistent custom) consume %d of the %d total budget; at least %d are needed for the agent to operate. Reduce the fixed regions' max_tokens or increase the total budget.", lay.prefix, working, fixed, total, MinWorkingTokens)
			}
		}
	}
	for _, n := range b.EvictionOrder {
		if findDef(b.RegionDefs, n) == nil {
			r.errf("eviction-order-unknown-region", "Invalid layout: eviction order references unknown region: %s", n)
		}
	}

	// Routing, gates and stage prompts.
	known := map[string]*RegionDef{}
	for _, lay := range b.layouts() {
		for _, d := range lay.defs {
			if _, ok := known[d.Name]; !ok || d.Kind == KindChecklist {
				known[d.Name] = d
			}
		}
	}
	for _, s := range b.StageDefs {
		defs, _ := b.layout(s.Name)
		visible := func(n string) bool { return contains(alwaysVisible, n) || findDef(defs, n) != nil }
		if rt := s.Routing; rt != nil {
			if !visible(rt.DefaultRegion) {
				r.errf("routing-invisible-region", "Invalid stage '%s': tool_routing.default_region sends results to region '%s', which this stage's context does not include, so it could not read them back. Add '%s' to [stages.%s.context.regions], or route somewhere the stage can see.", s.Name, rt.DefaultRegion, rt.DefaultRegion, s.Name)
			}
			for _, tool := range slices.Sorted(maps.Keys(rt.Overrides)) {
				reg := rt.Overrides[tool].Region
				if reg != "" && !visible(reg) {
					r.errf("routing-invisible-region", "Invalid stage '%s': tool_routing.overrides.%s sends results to region '%s', which this stage's context does not include, so it could not read them back. Add '%s' to [stages.%s.context.regions], or route somewhere the stage can see.", s.Name, tool, reg, reg, s.Name)
				}
			}
			reads := contains(s.Tools, "read_file") || contains(s.Tools, "read_files")
			routesAway := rt.DefaultRegion != "conversation"
			for _, o := range rt.Overrides {
				if o.Region != "" && o.Region != "conversation" {
					routesAway = true
				}
			}
			if routesAway && reads && !contains(s.Tools, "context_read") {
				r.lintf("routing-without-region-read", "stage '%s' routes tool output into regions and grants read_file, but not context_read, so the model may re-read files to see what is already in its context", s.Name)
			}
		}
		for _, t := range s.Transitions {
			g := t.Gate
			if g == nil {
				continue
			}
			for _, ref := range []struct{ key, name string }{{"region", g.Region}, {"require_region_updated", g.RequireRegionUpdated}, {"require_no_open_items", g.RequireNoOpenItems}} {
				if ref.name == "" {
					continue
				}
				d, ok := known[ref.name]
				if !ok && !contains(alwaysVisible, ref.name) {
					r.errf("gate-unknown-region", "Invalid stage '%s': transition to '%s': gate.%s names region '%s', which no stage declares", s.Name, t.Target, ref.key, ref.name)
					continue
				}
				if ref.key == "require_no_open_items" && (d == nil || d.Kind != KindChecklist) {
					r.errf("gate-not-checklist", "Invalid stage '%s': transition to '%s': gate.require_no_open_items names region '%s', which is not a checklist region (set kind = \"checklist\" on it)", s.Name, t.Target, ref.name)
				}
			}
			if g.MaxAttempts == 0 {
				r.lintf("gate-zero-attempts", "stage '%s': transition to '%s': gate.max_attempts = 0 means the gate never holds", s.Name, t.Target)
			}
		}
	}
	for _, s := range b.StageDefs {
		for _, t := range s.Transitions {
			if _, ok := b.Stage(t.Target); !ok {
				r.lintf("transition-unknown-stage", "stage '%s' has a transition to '%s', which is not a declared stage", s.Name, t.Target)
			}
		}
	}
	b.checkStagePrompts(windowFor, &r)
	b.lintRequired(&r)
	b.lintCompactDeliverable(&r)
	return r
}

// checkStagePrompts: each stage's prompt must fit where it will be written.
func (b *Blueprint) checkStagePrompts(windowFor func(string) int, r *Report) {
	for _, s := range b.StageDefs {
		window := windowFor(s.Name)
		if s.Prompt == "" || window <= 0 {
			continue
		}
		defs, _ := b.layout(s.Name)
		target, max := b.stageInstrTarget(defs, window, false)
		if target == "" {
			continue
		}
		t := stageInstrTokens(s.Prompt)
		if t > max {
			r.errf("stage-prompt-does-not-fit", "stage system prompt (~%d tokens) does not fit context region '%s': Content exceeds token budget: %d > %d. Increase that region's max_tokens (or shorten the prompt).", t, target, t, max)
		}
	}
}

// stageInstrTarget says where stage prompts land and how big that region is.
// Without a declared stage_instructions region the runtime creates one sized
// to the widest prompt, at most a quarter of the window (ENGINE.md §1.9),
// unless legacy asks for the seeds' first-pinned-region fallback.
func (b *Blueprint) stageInstrTarget(defs []*RegionDef, window int, legacy bool) (string, int) {
	if d := findDef(defs, StageInstructions); d != nil {
		return d.Name, d.Budget.Resolve(window)
	}
	if d := findDef(b.RegionDefs, StageInstructions); d != nil {
		return d.Name, d.Budget.Resolve(window)
	}
	if legacy || !b.anyPrompt() {
		for _, d := range defs {
			if d.Kind == KindPinned {
				return d.Name, d.Budget.Resolve(window)
			}
		}
		return "conversation", 10000
	}
	return StageInstructions, b.autoStageInstrTokens(window)
}

func (b *Blueprint) anyPrompt() bool {
	for _, s := range b.StageDefs {
		if s.Prompt != "" {
			return true
		}
	}
	return false
}

// stageInstrTokens is estimateTokens(stageInstrPrefix+prompt+"]"), counted
// without building it (at every engine.New, for every stage): no encoded
// run can span either join, as runs start and end with runMark.
func stageInstrTokens(prompt string) int {
	return (len(stageInstrPrefix) + TextLen(prompt) + len("]") + 3) / 4
}

func (b *Blueprint) autoStageInstrTokens(window int) int {
	widest := 0
	for _, s := range b.StageDefs {
		if s.Prompt != "" {
			widest = max(widest, stageInstrTokens(s.Prompt))
		}
	}
	return min(widest, window/4)
}

func (b *Blueprint) lintRequired(r *Report) {
	seen := map[string]bool{}
	for _, lay := range b.layouts() {
		for _, d := range lay.defs {
			if !d.Required || seen[d.Name] || (d.Seed != nil && d.Seed.Form == SeedCaller) {
				continue
			}
			seen[d.Name] = true
			granted := false
			for _, s := range b.StageDefs {
				defs, _ := b.layout(s.Name)
				if findDef(defs, d.Name) != nil && (contains(s.Tools, "context_write") || contains(s.Tools, "context_append")) {
					granted = true
				}
			}
			if !granted {
				r.lintf("required-region-unenforceable", "region '%s' is required, but no stage that carries it grants context_write or context_append, so nothing can fill it", d.Name)
			}
		}
	}
}

func (b *Blueprint) lintCompactDeliverable(r *Report) {
	for _, s := range b.StageDefs {
		compacts := false
		for _, t := range s.Transitions {
			if t.Transform == TransformCompact {
				compacts = true
			}
		}
		if !compacts {
			continue
		}
		defs, _ := b.layout(s.Name)
		for _, d := range defs {
			if d.Required && d.Summarizable && !d.pinnedLike() {
				r.lintf("compact-summarizes-deliverable", "stage '%s' leaves through a compact edge that will paraphrase required region '%s'; set summarizable = false on it to keep it verbatim", s.Name, d.Name)
			}
		}
	}
}

type layoutRef struct {
	prefix string
	stage  string // "" for the global layout
	defs   []*RegionDef
}

func (b *Blueprint) layouts() []layoutRef {
	out := []layoutRef{{"", "", b.RegionDefs}}
	for _, s := range b.StageDefs {
		if s.HasLayout {
			out = append(out, layoutRef{fmt.Sprintf("stage '%s': ", s.Name), s.Name, s.Regions})
		}
	}
	return out
}

func findDef(defs []*RegionDef, name string) *RegionDef {
	for _, d := range defs {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// nearest is tomlfile.Nearest: the unknown-key lints name the closest valid
// key, with no cut-off, and the edit distance lives in one place.
func nearest(s string, candidates []string) string {
	return tomlfile.Nearest(s, candidates)
}

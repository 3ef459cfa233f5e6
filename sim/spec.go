package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// PolicySpec is a parsed policy string: a name and its parameters, as in
// "flat-compact(threshold=150000,keep=3)" or "regions:coder".
type PolicySpec struct {
	Name   string            // flat, flat-compact, ..., regions
	Arg    string            // the blueprint of regions:<blueprint>
	Params map[string]string // key -> raw value
}

// SpecError is a bad policy string.
type SpecError struct {
	Spec  string
	Param string // the offending parameter, "" for the name
	Err   error
}

func (e *SpecError) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("policy %q: parameter %s: %v", e.Spec, e.Param, e.Err)
	}
	return fmt.Sprintf("policy %q: %v", e.Spec, e.Err)
}

func (e *SpecError) Unwrap() error { return e.Err }

// Policies lists the built-in policy names. "regions" is used as
// "regions:<blueprint>".
func Policies() []string {
	return []string{"flat", "flat-keep-system", "flat-compact", "flat-clear-tools", "regions", "as-recorded", "unbounded", "clairvoyant"}
}

// policyParams lists each policy's parameters (all integers, in tokens or counts).
var policyParams = map[string][]string{
	"flat":             {"reserve"},
	"flat-keep-system": {"reserve"},
	"flat-compact":     {"reserve", "threshold", "keep", "summary"},
	"flat-clear-tools": {"reserve", "trigger", "keep"},
	"regions":          {},
	"as-recorded":      {},
	"unbounded":        {},
	"clairvoyant":      {"reserve"},
}

// ParsePolicy parses a policy string.
func ParsePolicy(s string) (PolicySpec, error) {
	spec := PolicySpec{Params: map[string]string{}}
	name := strings.TrimSpace(s)
	if i := strings.IndexByte(name, '('); i >= 0 {
		if !strings.HasSuffix(name, ")") {
			return spec, &SpecError{Spec: s, Err: fmt.Errorf("missing ')'")}
		}
		body := name[i+1 : len(name)-1]
		name = name[:i]
		if strings.TrimSpace(body) != "" {
			for _, kv := range strings.Split(body, ",") {
				k, v, ok := strings.Cut(kv, "=")
				k, v = strings.TrimSpace(k), strings.TrimSpace(v)
				if !ok || k == "" || v == "" {
					return spec, &SpecError{Spec: s, Param: strings.TrimSpace(kv), Err: fmt.Errorf("want key=value")}
				}
				if _, dup := spec.Params[k]; dup {
					return spec, &SpecError{Spec: s, Param: k, Err: fmt.Errorf("given twice")}
				}
				spec.Params[k] = v
			}
		}
	}
	if strings.HasPrefix(name, "regions:") {
		spec.Arg = strings.TrimPrefix(name, "regions:")
		name = "regions"
		if spec.Arg == "" {
			return spec, &SpecError{Spec: s, Err: fmt.Errorf("regions: needs a blueprint name or path, as regions:coder")}
		}
	}
	allowed, ok := policyParams[name]
	if !ok {
		return spec, &SpecError{Spec: s, Err: fmt.Errorf("unknown policy %q (want %s)", name, strings.Join(Policies(), ", "))}
	}
	if name == "regions" && spec.Arg == "" {
		return spec, &SpecError{Spec: s, Err: fmt.Errorf("regions needs a blueprint, as regions:coder")}
	}
	spec.Name = name
	keys := make([]string, 0, len(spec.Params))
	for k := range spec.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(allowed, k) {
			want := "none"
			if len(allowed) > 0 {
				want = strings.Join(allowed, ", ")
			}
			return spec, &SpecError{Spec: s, Param: k, Err: fmt.Errorf("unknown for %s (parameters: %s)", name, want)}
		}
		if n, err := strconv.Atoi(spec.Params[k]); err != nil || n < 0 {
			return spec, &SpecError{Spec: s, Param: k, Err: fmt.Errorf("%q: want a non-negative integer", spec.Params[k])}
		}
	}
	return spec, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Int returns parameter key, or def when it is not given.
func (s PolicySpec) Int(key string, def int) int {
	if v, ok := s.Params[key]; ok {
		n, _ := strconv.Atoi(v) // validated by ParsePolicy
		return n
	}
	return def
}

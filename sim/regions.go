package sim

import "errors"

// regionsAvailable reports whether the region engine is built in.
const regionsAvailable = false

// newRegionPolicy builds the region-engine policy. The engine is being
// written in parallel; until it lands this reports that it is unavailable.
func newRegionPolicy(spec PolicySpec, e *env, budget int) (policy, error) {
	return nil, &SpecError{Spec: "regions:" + spec.Arg, Err: errors.New("the region engine is not available in this build yet")}
}

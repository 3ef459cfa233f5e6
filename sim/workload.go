package sim

import (
	"fmt"

	"github.com/ctxsim/ctxsim/sim/internal/needle"
)

// BuiltinWorkloads names the workloads the simulator can generate itself,
// without a trace file (the workloads package has the full generators).
func BuiltinWorkloads() []string { return []string{"needle"} }

// BuiltinWorkload returns a built-in workload as a Source: "needle" plants
// facts at depths from 1K to 160K tokens and probes them at the end.
func BuiltinWorkload(name string, seed uint64) (Source, error) {
	switch name {
	case "needle":
		h, evs, err := needle.Generate(needle.Default(seed))
		if err != nil {
			return nil, err
		}
		return SliceSource(h, evs), nil
	}
	return nil, fmt.Errorf("unknown built-in workload %q (have needle)", name)
}

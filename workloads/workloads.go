package workloads

import (
	"bytes"
	"fmt"
	"io"

	"github.com/ctxsim/ctxsim/sim/trace"
	"github.com/ctxsim/ctxsim/workloads/synthetic"
)

// Names returns the names of the built-in synthetic workloads, sorted.
func Names() []string { return synthetic.Names() }

// DefaultParams returns the embedded default parameter file of a synthetic
// workload: every key documented, the starting point for a user's own file.
func DefaultParams(name string) ([]byte, error) { return synthetic.Defaults(name) }

// Generate writes the canonical trace of a synthetic workload to w. The
// workload's embedded defaults apply, overlaid with paramsFile when it is
// not empty; name may be empty when paramsFile names the workload in its
// `workload` key. The same arguments give the same bytes.
func Generate(name string, seed uint64, paramsFile string, w io.Writer) error {
	p, err := synthetic.Load(name, paramsFile)
	if err != nil {
		return fmt.Errorf("workload %s: %w", displayName(name, paramsFile), err)
	}
	tw, err := trace.NewWriter(w, synthetic.Header(p, seed))
	if err != nil {
		return err
	}
	if err := synthetic.Generate(p, seed, tw.Write); err != nil {
		return fmt.Errorf("workload %s: %w", p.Workload(), err)
	}
	return tw.Flush()
}

// Source generates a synthetic workload into memory and returns a reader of
// it; *trace.Reader satisfies the simulator's Source (Header, Scan, Event,
// Err). A default run is a few MB, which is why it is held, not streamed:
// the reader then validates exactly what a trace file would.
func Source(name string, seed uint64, paramsFile string) (*trace.Reader, error) {
	var buf bytes.Buffer
	if err := Generate(name, seed, paramsFile, &buf); err != nil {
		return nil, err
	}
	label := "synthetic:" + name
	if name == "" {
		label = paramsFile
	}
	return trace.NewReader(&buf, label), nil
}

func displayName(name, paramsFile string) string {
	if name != "" {
		return name
	}
	return paramsFile
}

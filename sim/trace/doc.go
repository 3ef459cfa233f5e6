// Package trace defines ctxsim's canonical trace: JSON Lines, one header line
// then one event per line, produced by every workload generator and importer
// and consumed by the simulator.
//
// The format is versioned (Header.Version). Readers refuse unknown fields and
// newer versions, so a trace is never half understood.
package trace

// Package bench turns the simulator into a benchmark harness: it expands a
// grid (workloads × policies × models × windows × seeds, from TOML) into
// cells, runs them over all cores with each run single-threaded, stores each
// finished cell at once (a temporary file renamed into place, so a sweep
// killed at any moment resumes without losing a finished cell), splits a
// grid into deterministic shards and merges their outputs, and writes the
// report: Markdown tables with flat and region layouts side by side at every
// window, CSV and JSON of every cell, and the figures.
//
// The go test -bench benchmarks of this package run one whole simulation per
// b.Loop iteration and report every metric with b.ReportMetric, so that
// benchstat compares policies (-col /policy) and versions.
//
// The sweep machinery takes the run as a RunFunc, so that it is tested
// without the simulator; Simulate is the real one.
package bench

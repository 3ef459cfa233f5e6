// Package workloads produces canonical traces: seeded synthetic generators
// whose facts and probes are planted, and importers for sessions recorded
// from real agents.
package workloads

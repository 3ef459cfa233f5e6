// Package bench runs grids of simulations (workloads × policies × models ×
// windows × seeds), writes reports, and holds the go test -bench benchmarks
// and the budget chooser.
package bench

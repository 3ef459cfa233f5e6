//go:build !unix

package engine

func cpuSeconds() float64 { return 0 }

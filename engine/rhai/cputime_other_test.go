//go:build !unix

package rhai_test

func cpuNanos() int64 { return 0 }

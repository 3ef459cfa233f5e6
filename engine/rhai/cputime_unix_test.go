//go:build unix

package rhai_test

import "syscall"

// cpuNanos is the process's user+system CPU time: benchmarks report it per
// op beside wall time, which on a shared machine mostly measures waiting.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

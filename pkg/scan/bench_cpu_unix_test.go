//go:build unix

package scan_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used,
// so benchmarks can report CPU per operation next to wall time: on a busy
// machine wall time varies with the other load, CPU time much less.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

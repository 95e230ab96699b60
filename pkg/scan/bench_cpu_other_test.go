//go:build !unix

package scan_test

import "time"

// processCPU is not measured on this platform; benchmarks then report wall
// time only.
func processCPU() (time.Duration, bool) { return 0, false }

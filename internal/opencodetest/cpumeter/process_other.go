//go:build !unix

package cpumeter

import "time"

// Process is not measured on this platform; benchmarks then report wall
// time only.
func Process() (time.Duration, bool) { return 0, false }

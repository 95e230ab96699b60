package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestBatchGC(t *testing.T) {
	oldPercent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(oldPercent)
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(oldLimit)

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	BatchGC()
	if got := debug.SetGCPercent(100); got != BatchGCPercent {
		t.Errorf("GC percent %d after BatchGC, want %d", got, BatchGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != BatchMemoryLimit {
		t.Errorf("memory limit %d after BatchGC, want %d", got, BatchMemoryLimit)
	}

	// What the user set wins (the runtime read it at start; BatchGC must
	// leave it alone).
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "200MiB")
	debug.SetGCPercent(150)
	debug.SetMemoryLimit(200 << 20)
	BatchGC()
	if got := debug.SetGCPercent(100); got != 150 {
		t.Errorf("GC percent %d after BatchGC with GOGC=150, want the user's 150", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 200<<20 {
		t.Errorf("memory limit %d after BatchGC with GOMEMLIMIT=200MiB, want the user's", got)
	}
}

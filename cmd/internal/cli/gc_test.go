package cli

import (
	"runtime/debug"
	"testing"
)

func TestBatchGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)

	t.Setenv("GOGC", "")
	BatchGC()
	if got := debug.SetGCPercent(100); got != BatchGCPercent {
		t.Errorf("GC percent %d after BatchGC, want %d", got, BatchGCPercent)
	}

	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	BatchGC()
	if got := debug.SetGCPercent(100); got != 150 {
		t.Errorf("GC percent %d after BatchGC with GOGC=150, want the user's 150", got)
	}
}

package cli

import (
	"os"
	"runtime/debug"
)

// BatchGCPercent is the garbage collector's target for a one-shot scan or
// fix: the heap may grow to five times what is live before a collection.
const BatchGCPercent = 400

// BatchMemoryLimit is the soft memory limit that goes with BatchGCPercent:
// near it the collector works as often as it must, so sessions large
// enough to make five times their live heap matter cost no more memory
// than this, or than Go's default would.
const BatchMemoryLimit = 1 << 30

// BatchGC tunes the garbage collector for a command that reads a whole
// store once (scan, fix). Such a run allocates every record of the store
// but keeps only the sessions in flight, so at Go's default (GOGC=100) it
// collects every few megabytes read; at BatchGCPercent a scan costs 15-20%
// less CPU (docs/performance.md) for about 15-40 MB more peak memory on
// typical stores, and memory still follows the largest sessions in flight,
// not the store. A GOGC or GOMEMLIMIT the user set wins. watch keeps the
// defaults: it runs all day.
func BatchGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(BatchGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(BatchMemoryLimit)
	}
}

package cli

import (
	"os"
	"runtime/debug"
)

// BatchGCPercent is the garbage collector's target for a one-shot scan or
// fix: the heap may grow to five times what is live before a collection.
const BatchGCPercent = 400

// BatchGC tunes the garbage collector for a command that reads a whole
// store once (scan, fix). Such a run allocates every record of the store
// but keeps only the sessions in flight, so at Go's default (100) it
// collects every few megabytes read; at BatchGCPercent a scan costs 15-20%
// less CPU (docs/performance.md) for about 20-30 MB more peak memory, and
// memory still follows the largest sessions in flight, not the store. A
// GOGC the user set wins. watch keeps the default: it runs all day.
func BatchGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(BatchGCPercent)
	}
}

// Package cpumeter measures the CPU time sessfix's benchmarks spend, next to
// wall time: on a busy machine wall time varies with the other load, CPU
// time much less (docs/performance.md).
package cpumeter

import (
	"testing"
	"time"
)

// Meter measures the process's CPU time and the wall time over a benchmark
// loop, reported as cpu-ms/op and cores (CPU time over wall time: above 1
// means the work ran on more than one core at once).
type Meter struct {
	cpu0 time.Duration
	t0   time.Time
	ok   bool
	// N counts the operations measured.
	N int
}

// Start starts measuring.
func Start() *Meter {
	c, ok := Process()
	return &Meter{cpu0: c, t0: time.Now(), ok: ok}
}

// Report reports cpu-ms/op and cores for the N operations since Start
// (nothing where the platform does not measure CPU time).
func (m *Meter) Report(b *testing.B) {
	wall := time.Since(m.t0)
	c, ok := Process()
	if !ok || !m.ok || m.N == 0 || wall <= 0 {
		return
	}
	cpu := c - m.cpu0
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(m.N), "cpu-ms/op")
	b.ReportMetric(float64(cpu)/float64(wall), "cores")
}

//go:build unix

package cpumeter

import "testing"

var sink uint64

func TestProcessCountsWork(t *testing.T) {
	c0, ok := Process()
	if !ok {
		t.Fatal("no CPU time on a unix system")
	}
	x := uint64(1)
	for i := 0; i < 50_000_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
	c1, _ := Process()
	if c1 <= c0 {
		t.Errorf("CPU time went from %v to %v over 50 million multiplications", c0, c1)
	}
}

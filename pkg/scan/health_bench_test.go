package scan_test

import (
	"context"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/cpumeter"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// BenchmarkStoreHealthSQLite measures what the store-health rules add to a
// scan of the generated SQLite database (docs/performance.md): the scan
// without them, their default check (quick_check, with the free-list count
// and the oversized-part query) and the --deep one (integrity_check).
func BenchmarkStoreHealthSQLite(b *testing.B) {
	s := generated(b, store.ShapeSQLite)
	b.Run("scan-without-SF5", func(b *testing.B) {
		opts := &scan.Options{Ignore: []string{"SF5"}}
		m := cpumeter.Start()
		for b.Loop() {
			d, err := shapes.Open([]string{s.path})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := scan.Run(context.Background(), d.Stores, opts); err != nil {
				b.Fatal(err)
			}
			d.Close()
			m.N++
		}
		m.Report(b)
	})
	for _, deep := range []bool{false, true} {
		name := "quick_check"
		if deep {
			name = "integrity_check"
		}
		b.Run(name, func(b *testing.B) {
			m := cpumeter.Start()
			for b.Loop() {
				d, err := shapes.Open([]string{s.path})
				if err != nil {
					b.Fatal(err)
				}
				hc, ok := store.HealthOf(d.Stores[0])
				if !ok {
					b.Fatal("the sqlite store reports no health")
				}
				h, err := hc.Health(context.Background(), store.HealthOptions{Deep: deep, Oversized: scan.DefaultOversized})
				if err != nil || h.Damaged() {
					b.Fatalf("health of the generated store: %+v, %v", h, err)
				}
				d.Close()
				m.N++
			}
			m.Report(b)
		})
	}
}

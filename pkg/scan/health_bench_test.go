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
// without them and with them (the difference is their cost), their
// default check alone as the scan runs it (quick_check and the free-list
// count; a scan of every session measures oversized parts on the rows it
// loads) and the --deep one (integrity_check).
func BenchmarkStoreHealthSQLite(b *testing.B) {
	s := generated(b, store.ShapeSQLite)
	for _, name := range []string{"scan-without-SF5", "scan"} {
		b.Run(name, func(b *testing.B) {
			opts := &scan.Options{}
			if name == "scan-without-SF5" {
				opts.Ignore = []string{"SF5"}
			}
			benchScanOnce(b, s.path, opts)
		})
	}
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
				h, err := hc.Health(context.Background(), store.HealthOptions{Deep: deep})
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

// benchScanOnce scans the store at path with opts once per iteration.
func benchScanOnce(b *testing.B, path string, opts *scan.Options) {
	m := cpumeter.Start()
	for b.Loop() {
		d, err := shapes.Open([]string{path})
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
}

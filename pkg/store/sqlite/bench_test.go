//go:build unix

package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/sqlite"
)

// BenchmarkSQLiteRead splits what reading a database costs a scan, one
// session after the other on one goroutine, CPU time per pass over the
// whole database (cpu-ms/op):
//
//   - queries: Load's message and part queries, every column scanned into
//     the types Load uses, nothing built (sqlite.QueryOnly);
//   - load: Store.Load, adding records, body validation and indexing.
//
// pkg/scan's BenchmarkScanSQLite adds the rules and the preflight, and runs
// on every core; BenchmarkReadOnlySQLite is the plain read they are
// compared with. The database is $SESSFIX_BENCH_DIR/sqlite/opencode.db
// (pkg/scan's benchmark store) when that variable is set, else a small one
// generated here.
func BenchmarkSQLiteRead(b *testing.B) {
	path := benchDB(b)
	d, err := shapes.Open([]string{path})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	st := d.Stores[0]
	ctx := context.Background()
	refs, err := st.List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	queries := func() int {
		n := 0
		for _, ref := range refs {
			k, err := sqlite.QueryOnly(st, ref.ID)
			if err != nil {
				b.Fatal(err)
			}
			n += k
		}
		return n
	}
	want := queries()
	if want == 0 {
		b.Fatal("no rows in the benchmark database")
	}
	for _, bc := range []struct {
		name string
		pass func() int
	}{
		{"queries", queries},
		{"load", func() int {
			n := 0
			for _, ref := range refs {
				s, err := st.Load(ctx, ref)
				if err != nil {
					b.Fatal(err)
				}
				n += len(s.Messages) + s.PartCount() + len(s.Broken) + len(s.Orphans)
			}
			return n
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cpu0 := cpuTime(b)
			n := 0
			for b.Loop() {
				// Every row read (or made into a record, broken or not).
				if got := bc.pass(); got != want {
					b.Fatalf("%d rows, want %d", got, want)
				}
				n++
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1e3/float64(n), "cpu-ms/op")
		})
	}
}

func benchDB(b *testing.B) string {
	if dir := os.Getenv("SESSFIX_BENCH_DIR"); dir != "" {
		p := filepath.Join(dir, "sqlite", "opencode.db")
		if _, err := os.Stat(p); err != nil {
			b.Fatalf("SESSFIX_BENCH_DIR is set, but %v (pkg/scan's BenchmarkScanSQLite generates it)", err)
		}
		return p
	}
	p, _, err := storegen.Generate(store.ShapeSQLite, b.TempDir(), storegen.Config{Sessions: 12, Messages: 120, Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

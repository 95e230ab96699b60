package scan_test

// Benchmarks of a full scan over generated stores, next to baselines that
// only read the same bytes. docs/performance.md has the numbers and
// scripts/bench.sh runs them:
//
//	go test -run '^$' -bench . -benchtime 3x ./pkg/scan
//
// The stores (internal/storegen's Default: 125 sessions, 100,000 parts) are
// generated once and kept in $SESSFIX_BENCH_DIR, default
// $TMPDIR/sessfix-bench (about 2 GB on disk); a stamp file makes a
// changed generator regenerate them. Remove the directory to free the space.

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/cpumeter"
	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// benchShapes are the JSON shapes benchmarked (the project tree is read by
// the same code as the sessions layout).
var benchShapes = []store.Shape{store.ShapeSessions, store.ShapeStorage}

type benchStore struct {
	path    string
	stats   storegen.Stats
	defects int
}

var (
	benchMu     sync.Mutex
	benchStores = map[store.Shape]*benchStore{}
)

// generated returns the benchmark store of the shape, generating it on
// first use (or reusing the one a previous run left in the cache).
func generated(b *testing.B, shape store.Shape) *benchStore {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if s := benchStores[shape]; s != nil {
		return s
	}
	dir := filepath.Join(storegen.BenchDir(), string(shape))
	b.Logf("using the %s benchmark store in %s (generated once; set SESSFIX_BENCH_DIR to move it)", shape, dir)
	path, st, err := storegen.Cached(shape, dir, storegen.Default)
	if err != nil {
		b.Fatal(err)
	}
	s := &benchStore{path: path, stats: st, defects: st.DefectCount()}
	benchStores[shape] = s
	return s
}

// scanOnce opens the store at path the way `sessfix scan PATH` does and
// scans every session with the default options.
func scanOnce(b *testing.B, path string) *scan.Result {
	d, err := shapes.Open([]string{path})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	res, err := scan.Run(context.Background(), d.Stores, nil)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

func benchScan(b *testing.B, shape store.Shape) {
	s := generated(b, shape)
	b.SetBytes(s.stats.Bytes)
	b.ReportMetric(float64(s.stats.Parts), "parts")
	var res *scan.Result
	m := cpumeter.Start()
	for b.Loop() {
		res = scanOnce(b, s.path)
		m.N++
	}
	m.Report(b)
	// A scan that skipped work would be fast for nothing: it must see
	// every session and report every injected defect.
	if got := len(res.Stores[0].Sessions); got != s.stats.Sessions {
		b.Fatalf("scan saw %d sessions, the store has %d", got, s.stats.Sessions)
	}
	if len(res.Findings) < s.defects {
		b.Fatalf("scan reported %d findings, the store has %d injected defects", len(res.Findings), s.defects)
	}
}

// BenchmarkScanJSON scans the JSON shapes: open, list, load and check
// every session with the default number of workers.
func BenchmarkScanJSON(b *testing.B) {
	for _, shape := range benchShapes {
		b.Run(string(shape), func(b *testing.B) { benchScan(b, shape) })
	}
}

// BenchmarkScanSQLite scans the SQLite database.
func BenchmarkScanSQLite(b *testing.B) { benchScan(b, store.ShapeSQLite) }

// BenchmarkReadOnlyJSON is the baseline of BenchmarkScanJSON: walk the
// store's directories and read every file, with as many goroutines as the
// scan uses workers, doing nothing with the bytes.
func BenchmarkReadOnlyJSON(b *testing.B) {
	for _, shape := range benchShapes {
		b.Run(string(shape), func(b *testing.B) {
			s := generated(b, shape)
			b.SetBytes(s.stats.Bytes)
			var n int64
			m := cpumeter.Start()
			for b.Loop() {
				var err error
				if n, err = storegen.ReadTree(s.path, runtime.GOMAXPROCS(0)); err != nil {
					b.Fatal(err)
				}
				m.N++
			}
			m.Report(b)
			if n < s.stats.Bytes {
				b.Fatalf("read %d bytes, the store's records hold %d", n, s.stats.Bytes)
			}
		})
	}
}

// BenchmarkReadOnlySQLite is the baseline of BenchmarkScanSQLite: select
// every data column of the message and part tables (and the session rows)
// through a read-only connection, the part table split by rowid between as
// many goroutines as the scan uses workers.
func BenchmarkReadOnlySQLite(b *testing.B) {
	s := generated(b, store.ShapeSQLite)
	b.SetBytes(s.stats.Bytes)
	var n int64
	m := cpumeter.Start()
	for b.Loop() {
		var err error
		if n, err = storegen.ReadSQLite(s.path, runtime.GOMAXPROCS(0)); err != nil {
			b.Fatal(err)
		}
		m.N++
	}
	m.Report(b)
	if n < s.stats.Bytes {
		b.Fatalf("read %d bytes, the store's data columns hold %d", n, s.stats.Bytes)
	}
}

// BenchmarkLoadCheckSession loads and checks the store's first session
// alone, reporting allocations: what one session costs in memory, which is
// what bounds a scan's memory (times the number of workers).
func BenchmarkLoadCheckSession(b *testing.B) {
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeSessions} {
		b.Run(string(shape), func(b *testing.B) {
			s := generated(b, shape)
			d, err := shapes.Open([]string{s.path})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			st := d.Stores[0]
			refs, err := st.List(context.Background())
			if err != nil || len(refs) == 0 {
				b.Fatalf("list %s: %d sessions, %v", s.path, len(refs), err)
			}
			ctx := context.Background()
			var size int64
			b.ReportAllocs()
			for b.Loop() {
				sess, err := st.Load(ctx, refs[0])
				if err != nil {
					b.Fatal(err)
				}
				scan.CheckSession(sess, nil)
				size = sessionBytes(sess)
			}
			b.SetBytes(size)
		})
	}
}

func sessionBytes(s *store.Session) int64 {
	var n int64
	for _, m := range s.Messages {
		n += int64(len(m.Raw))
		for _, p := range m.Parts {
			n += int64(len(p.Raw))
		}
	}
	for _, r := range s.Broken {
		n += int64(len(r.Raw))
	}
	return n
}

// TestScanKeepsNoCheckedSession proves memory is bounded by the sessions in
// flight, not the store: while the scan runs, at most one session per
// worker (plus one being handed over) is reachable, and none once it
// returns. It counts reachable sessions, not bytes or time, so it does not
// depend on the machine.
func TestScanKeepsNoCheckedSession(t *testing.T) {
	const sessions, workers = 24, 2
	cfg := storegen.Config{Sessions: sessions, Messages: 8, Parts: 4, ToolOutput: 200, Seed: 7}
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeSessions} {
		t.Run(string(shape), func(t *testing.T) {
			path, _, err := storegen.Generate(shape, t.TempDir(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			d, err := shapes.Open([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()

			// The detector itself: loading sessions and keeping them must
			// show up as retention.
			kept := &storetest.Retention{Store: d.Stores[0]}
			refs, err := kept.List(context.Background())
			if err != nil || len(refs) != sessions {
				t.Fatalf("list: %d sessions, %v", len(refs), err)
			}
			var hold []*store.Session
			for _, ref := range refs {
				s, err := kept.Load(context.Background(), ref)
				if err != nil {
					t.Fatal(err)
				}
				hold = append(hold, s)
			}
			if got := kept.Alive(); got != sessions {
				t.Fatalf("detector: %d of %d kept sessions seen alive", got, sessions)
			}
			runtime.KeepAlive(hold)

			r := &storetest.Retention{Store: d.Stores[0]}
			res, err := scan.Run(context.Background(), []store.Store{r}, &scan.Options{Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Stores[0].Sessions); got != sessions {
				t.Fatalf("scan saw %d sessions, want %d", got, sessions)
			}
			if r.Loaded() != sessions {
				t.Fatalf("scan loaded %d sessions, want %d", r.Loaded(), sessions)
			}
			// workers sessions being checked, plus one per worker waiting
			// to hand its summary over: anything above keeps checked
			// sessions.
			if limit := 2 * workers; r.MaxAlive() > limit {
				t.Errorf("while scanning, %d checked sessions were still reachable (limit %d): the scan keeps sessions it is done with", r.MaxAlive(), limit)
			}
			if got := r.Alive(); got != 0 {
				t.Errorf("after the scan, %d sessions are still reachable from its result", got)
			}
			runtime.KeepAlive(res)
		})
	}
}

package watch

// Benchmark of the time a repair takes once a session has settled: from the
// moment its settle window has passed to the Repaired event (load, check,
// plan, back up, write, verify), on generated single-session SQLite stores.
// docs/performance.md has the numbers:
//
//	go test -run '^$' -bench RepairAfterSettle -benchtime 3x ./pkg/watch
//
// The sessions are generated once into $SESSFIX_BENCH_DIR (default
// $TMPDIR/sessfix-bench) and copied before each operation (untimed).

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/cpumeter"
	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// BenchmarkRepairAfterSettle times runDue on a session whose settle window
// has just passed, on an injected clock: the latency `sessfix watch` adds
// after settle. It reports repair-ms/op and repair-cpu-ms/op and fails
// unless every operation repaired the session.
func BenchmarkRepairAfterSettle(b *testing.B) {
	for _, c := range []struct {
		messages int
		defects  float64
	}{{200, 0.02}, {4000, 0.02}, {4000, 0.3}} {
		cfg := storegen.Config{Sessions: 1, Messages: c.messages, DefectRate: c.defects}
		b.Run(fmt.Sprintf("messages=%d,defects=%g", c.messages, c.defects), func(b *testing.B) {
			dir := filepath.Join(storegen.BenchDir(), fmt.Sprintf("plan-%d-%g", cfg.Messages, cfg.DefectRate))
			src, _, err := storegen.Cached(store.ShapeSQLite, dir, cfg)
			if err != nil {
				b.Fatal(err)
			}
			work := b.TempDir()
			var wall, cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				w, clock, repaired := settledWatcher(b, src, work)
				b.StartTimer()
				c0, _ := cpumeter.Process()
				t0 := time.Now()
				for w.anyDue(clock.Now()) {
					w.runDue(context.Background())
				}
				wall += time.Since(t0)
				c1, _ := cpumeter.Process()
				cpu += c1 - c0
				b.StopTimer()
				w.close()
				if *repaired != 1 {
					b.Fatalf("%d repairs, want 1", *repaired)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(wall.Microseconds())/1e3/float64(b.N), "repair-ms/op")
			b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "repair-cpu-ms/op")
		})
	}
}

// settledWatcher copies the store at src into work and starts a watcher on
// it whose only session is due now: its files were last written long
// before the fake clock's time.
func settledWatcher(b *testing.B, src, work string) (*Watcher, *fakeClock, *int) {
	b.Helper()
	path := copyDB(b, src, filepath.Join(work, "store"))
	journal := filepath.Join(work, "journal")
	if err := os.RemoveAll(journal); err != nil {
		b.Fatal(err)
	}
	clock := newFakeClock(time.Now().Add(time.Hour))
	repaired := new(int)
	w, err := New(Options{
		Stores: []store.Store{storetest.OpenOne(b, path)},
		Settle: 2 * time.Second,
		Poll:   time.Hour, // nothing polls: runDue is called by hand
		Clock:  clock,
		Write:  fix.WriteOptions{Backup: backup.Options{Dir: journal}},
		Fix:    fix.Options{Placeholder: "[user interrupted]"},
		Report: func(e Event) {
			if e.Kind == Repaired {
				*repaired++
			}
		},
		Activity: func(store.Info) store.Activity { return store.Activity{State: store.ActivityNone} },
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.start(context.Background()); err != nil {
		b.Fatal(err)
	}
	if !w.anyDue(clock.Now()) {
		b.Fatal("no session is due after the initial scan")
	}
	return w, clock, repaired
}

// anyDue reports whether a pending session is due at now.
func (w *Watcher) anyDue(now time.Time) bool {
	for _, p := range w.pending {
		if !p.due.After(now) {
			return true
		}
	}
	return false
}

// copyDB replaces dst with a copy of the database file at src, its time
// kept, and returns the copy's path.
func copyDB(b *testing.B, src, dst string) string {
	b.Helper()
	if err := os.RemoveAll(dst); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	to := filepath.Join(dst, filepath.Base(src))
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, data, fs.FileMode(0o644)); err != nil {
		b.Fatal(err)
	}
	if err := os.Chtimes(to, fi.ModTime(), fi.ModTime()); err != nil {
		b.Fatal(err)
	}
	return to
}

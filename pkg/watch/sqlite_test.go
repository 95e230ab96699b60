package watch

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// BenchmarkDatabaseChecks measures the two questions watch asks a
// database (storegen.Default: 125 sessions, 100,000 parts): which sessions
// have a newer time_updated (the first pass, which records every session,
// and the passes after every change, paced by queryPace) and the
// content check (once the database has been quiet for the settle window).
//
//	go test ./pkg/watch -run '^$' -bench DatabaseChecks
func BenchmarkDatabaseChecks(b *testing.B) {
	path, stats, err := storegen.Cached(store.ShapeSQLite, filepath.Join(storegen.BenchDir(), "watch-sqlite"), storegen.Default)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("time_updated", func(b *testing.B) {
		c, err := openChanges(path)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for b.Loop() {
			if _, err := c.since(ctx, true); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(stats.Parts), "parts")
	})
	// What each change costs once watch runs: the rows newer than the
	// last pass (none here), still found by reading every row.
	b.Run("time_updated-since", func(b *testing.B) {
		c, err := openChanges(path)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if _, err := c.since(ctx, true); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := c.since(ctx, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("content", func(b *testing.B) {
		c, err := openChanges(path)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for b.Loop() {
			if _, err := c.digest(ctx, true); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(stats.Bytes)
	})
}

// TestChangeQueriesArePaced: after a change query that took a second, the
// database is not asked again for four seconds, however soon it changes;
// one that seemed to take an hour (the machine slept through it) puts the
// next off by maxQueryGap, not by four hours. Either way the session the
// change broke is then found and repaired.
func TestChangeQueriesArePaced(t *testing.T) {
	for _, c := range []struct {
		name       string
		cost, next time.Duration // the query's cost, and when the next may run
	}{
		{"paced", time.Second, queryPace * time.Second},
		{"bounded", time.Hour, maxQueryGap},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := loadFixture(t, "tool-loop-negative")
			var dir string
			h := newHarness(t, store.ShapeSQLite, func(o *Options) {
				dir = filepath.Dir(o.Stores[0].Info().Path)
				o.Poll = 0
			}, f)
			h.step(0)
			// A write that changes no time_updated: the query it causes
			// finds nothing and takes c.cost.
			h.w.queried = func() { h.clock.Advance(c.cost) }
			storetest.ExecSQL(t, h.path, "UPDATE session SET title = title")
			h.sync(dir)
			h.step(DefaultCoalesce)
			if got := h.w.stores[0].queryCost; got != c.cost {
				t.Fatalf("the change query was taken to last %s, want %s", got, c.cost)
			}
			h.w.queried = nil
			storetest.ExecSQL(t, h.path, blankFirstText(f.ID, false))
			h.sync(dir)
			// Not asked again until c.next: neither at once nor just
			// before.
			const early = 100 * time.Millisecond
			h.step(DefaultCoalesce)
			if h.w.pending[key{0, f.ID}] != nil {
				t.Fatalf("the database was asked again %s after a query that took %s", DefaultCoalesce, c.cost)
			}
			h.step(c.next - DefaultCoalesce - early)
			if h.w.pending[key{0, f.ID}] != nil {
				t.Fatalf("the database was asked again %s after a query that took %s", c.next-early, c.cost)
			}
			h.step(early)
			if h.w.pending[key{0, f.ID}] == nil {
				t.Fatalf("the change was not found %s after a query that took %s", c.next, c.cost)
			}
			h.step(2 * time.Second)
			if rep := h.kinds(Repaired); len(rep) != 1 || rep[0].Session != f.ID {
				t.Fatalf("repaired %+v, want %s", rep, f.ID)
			}
		})
	}
}

package watch

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/store"
)

// BenchmarkDatabaseChecks measures the two questions watch asks a
// database (storegen.Default: 125 sessions, 100,000 parts): which sessions
// have a newer time_updated (the first pass, which records every session,
// and the passes after every change, at most four times a second) and the
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

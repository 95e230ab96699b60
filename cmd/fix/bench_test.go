package fix

// BenchmarkFixStore: `sessfix fix --yes` against `sessfix scan` over the
// 100,000-part benchmark stores (internal/storegen's Default, generated once
// into $SESSFIX_BENCH_DIR as pkg/scan's benchmarks do). docs/performance.md
// has the numbers:
//
//	go test -run '^$' -bench FixStore -benchtime 3x ./cmd/fix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	cmdscan "github.com/sessfix/sessfix/cmd/scan"
	"github.com/sessfix/sessfix/internal/opencodetest/cpumeter"
	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// BenchmarkFixStore copies the benchmark store of each shape (untimed),
// then runs the scan command on the copy and the fix command with --yes
// (backups into a temporary journal), and reports both and their ratio:
// fix/scan (wall time) and fix-cpu/scan-cpu (process CPU time).
func BenchmarkFixStore(b *testing.B) {
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage, store.ShapeSessions} {
		b.Run(string(shape), func(b *testing.B) {
			src, stats, err := storegen.Cached(shape, filepath.Join(storegen.BenchDir(), string(shape)), storegen.Default)
			if err != nil {
				b.Fatal(err)
			}
			work := b.TempDir()
			var scanWall, fixWall, scanCPU, fixCPU time.Duration
			var fixed string
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				path := copyStore(b, src, filepath.Join(work, "store"))
				journal := filepath.Join(work, "journal")
				if err := os.RemoveAll(journal); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()

				c0, _ := cpumeter.Process()
				t0 := time.Now()
				scanF, _ := benchFactory()
				if err := cmdscan.RunScan(context.Background(), &cmdscan.ScanOptions{Factory: scanF, Paths: []string{path}, Settle: opencode.DefaultSettle}); err != nil && !errors.Is(err, cli.ErrFindings) {
					b.Fatal(err)
				}
				c1, _ := cpumeter.Process()
				t1 := time.Now()
				fixF, errOut := benchFactory()
				opts := &FixOptions{Factory: fixF, Paths: []string{path}, Yes: true, Settle: opencode.DefaultSettle, Placeholder: "[user interrupted]",
					Apply: func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
						return backup.Apply(ctx, backup.Options{Dir: journal}, info, sets)
					}}
				if err := RunFix(context.Background(), opts); err != nil && !errors.Is(err, cli.ErrFindings) {
					b.Fatalf("fix: %v\n%s", err, errOut)
				}
				c2, _ := cpumeter.Process()
				scanWall, fixWall = scanWall+t1.Sub(t0), fixWall+time.Since(t1)
				scanCPU, fixCPU = scanCPU+c1-c0, fixCPU+c2-c1
				fixed = errOut.String()
			}
			// A fix that skipped work would be fast for nothing: every
			// session with an injected defect must be written.
			var sessions int
			if _, err := fmt.Sscanf(fixed, "fixed %d sessions", &sessions); err != nil || sessions == 0 || sessions > stats.Sessions {
				b.Fatalf("fix wrote no sessions: %q", fixed)
			}
			n := float64(b.N)
			b.ReportMetric(scanWall.Seconds()/n, "scan-s/op")
			b.ReportMetric(fixWall.Seconds()/n, "fix-s/op")
			b.ReportMetric(float64(fixWall)/float64(scanWall), "fix/scan")
			if scanCPU > 0 {
				b.ReportMetric(float64(fixCPU)/float64(scanCPU), "fix-cpu/scan-cpu")
			}
		})
	}
}

// benchFactory is the commands' factory with the real clock, output
// discarded and stderr kept.
func benchFactory() (*cli.Factory, *bytesWriter) {
	ios, _, _, _ := iostreams.Test()
	errOut := &bytesWriter{}
	ios.Out, ios.ErrOut = io.Discard, errOut
	f := cli.New(cli.BuildInfo{Version: "bench"})
	f.IOStreams = ios
	f.Now = time.Now
	return f, errOut
}

type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
func (w *bytesWriter) String() string              { return string(w.b) }

// copyStore replaces dst with a copy of the store at src (a database file
// or a directory), file times kept (a fresh time would make every session
// look in use), and returns the copy's path.
func copyStore(b *testing.B, src, dst string) string {
	b.Helper()
	if err := os.RemoveAll(dst); err != nil {
		b.Fatal(err)
	}
	root := filepath.Dir(src)
	if fi, err := os.Stat(src); err == nil && fi.IsDir() {
		root = src
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if root != src && p != src {
			return nil // only the database of a database store
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, data, fi.Mode().Perm()); err != nil {
			return err
		}
		return os.Chtimes(to, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		b.Fatal(err)
	}
	if root == src {
		return dst
	}
	return filepath.Join(dst, filepath.Base(src))
}

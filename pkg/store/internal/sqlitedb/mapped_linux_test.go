package sqlitedb_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// mappedKiB is how much of the file at path is mapped into this process
// and resident (the Rss of its regions in /proc/self/smaps), in KiB.
func mappedKiB(t *testing.T, path string) int {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kib, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) >= 5 && strings.Contains(fields[0], "-") {
			in = strings.HasSuffix(line, " "+real) // a region's first line
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); ok && in {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			kib += n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return kib
}

// leftKiB is the most of the file a reader may leave mapped and resident
// after a read: the pages that hold the schema and the tables' roots (a
// statement prepared on an idle connection reads them), far less than
// one session of bigSessions (1 MiB); the kernel maps a fault's
// neighbours too (fault-around, 64 KiB by default).
const leftKiB = 256

// A mapped reader drops its map once a connection has read unmapAfter
// bytes through it (here 2 MiB, two sessions of bigSessions), and after a
// List or a health check: the pages a read touched count in the process's
// resident memory while they are mapped, so a scan of every session would
// otherwise hold the whole file on every connection.
func TestMappedReadsLeaveNoMap(t *testing.T) {
	sqlitedb.SetUnmapAfter(t, 2<<20)
	path := bigSessions(t, 6)
	d, err := sqlitedb.OpenMapped(path, noCheck)
	if err != nil {
		t.Fatal(err)
	}
	v := sqlitedb.NewV1(d, store.Info{Shape: store.ShapeSQLite, Path: path})
	defer v.Close()
	ctx := context.Background()
	refs, err := v.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := mappedKiB(t, path); n > leftKiB {
		t.Errorf("after List: %d KiB of the file mapped, want at most %d", n, leftKiB)
	}
	mappedDuring := 0
	sqlitedb.SetAfterPartRow(v, func() { mappedDuring = max(mappedDuring, mappedKiB(t, path)) })
	for i, ref := range refs {
		s, err := v.Load(ctx, ref)
		if err != nil || len(s.Messages) != 1 || len(s.Messages[0].Parts) != 4 {
			t.Fatalf("Load %s: %v", ref.ID, err)
		}
		// Sessions are read one at a time, on the connection the last
		// one gave back: every second one drops the map.
		if n := mappedKiB(t, path); i%2 == 1 && n > leftKiB {
			t.Errorf("after Load %d (%s): %d KiB of the file mapped, want at most %d", i, ref.ID, n, leftKiB)
		}
	}
	if mappedDuring <= leftKiB {
		t.Errorf("%d KiB of the file mapped while a session was read: the reader is not mapped", mappedDuring)
	}
	if _, err := v.Health(ctx, store.HealthOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := mappedKiB(t, path); n > leftKiB {
		t.Errorf("after Health: %d KiB of the file mapped, want at most %d", n, leftKiB)
	}
}

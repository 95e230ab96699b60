package watch_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
	"github.com/sessfix/sessfix/pkg/watch"
)

const (
	fixtures = "../../testdata/sessions/"
	// brokenPart is the signed reasoning part of preflight-blank-text's
	// unfinished assistant message: the writer streams it.
	brokenPart = "prt_cc3e09a66000Jx7Bi7b4qBCpys"
	// settle is 20 times the writer's longest planned pause (streamEvery),
	// so that a loaded machine's scheduling delays do not make a session
	// that is still being written look settled.
	settle = 2 * time.Second
)

func fixture(t *testing.T, name string) *storetest.Fixture {
	t.Helper()
	f, err := storetest.LoadExportFixture(filepath.Join(fixtures, name, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fixableNow loads a session from disk and returns the codes of the
// findings fix would repair.
func fixableNow(t *testing.T, path, id string) []string {
	t.Helper()
	st := storetest.OpenOne(t, path)
	s, err := st.Load(context.Background(), store.SessionRef{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range scan.CheckSession(s, &scan.Options{Settle: time.Millisecond}) {
		if r := scan.Lookup(f.Code); r != nil && r.Fixable && f.Severity >= scan.Warning && f.Code != "SF302" {
			out = append(out, f.Code)
		}
	}
	st.Close()
	return out
}

// hashFiles maps every file under dir, by its path relative to dir, to the
// hash of its content; a missing dir is an empty map.
func hashFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		s := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(s[:])
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// sqliteRows maps every message and part row of a session in an SQLite
// store to the hash of its data column.
func sqliteRows(t *testing.T, dbPath, sid string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	for _, q := range []string{
		`SELECT 'message/' || id, data FROM message WHERE session_id = ?`,
		`SELECT 'part/' || id, data FROM part WHERE session_id = ?`,
	} {
		rows, err := db.Query(q, sid)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			s := sha256.Sum256([]byte(v))
			out[k] = hex.EncodeToString(s[:])
		}
		rows.Close()
	}
	return out
}

// TestLiveRepair: a second process (helper_test.go's writer) streams a
// broken session into a store watch is already watching, next to a healthy
// one: into a sessions/ store file by file, in directories that did not
// exist when watch started; into SQLite row by row in transactions, found
// through time_updated. Watch must not touch the session before the
// writer's last write plus the settle window, must repair it once and leave
// the healthy one alone, and undo must bring back exactly what the writer
// left.
func TestLiveRepair(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		shape store.Shape
		// records hashes what a store of the shape holds of a session.
		records func(t *testing.T, path, sid string) map[string]string
	}{
		{store.ShapeSessions, func(t *testing.T, path, sid string) map[string]string {
			return hashFiles(t, filepath.Join(path, sid))
		}},
		{store.ShapeSQLite, sqliteRows},
	} {
		t.Run(string(tc.shape), func(t *testing.T) {
			t.Parallel()
			broken, healthy := fixture(t, "preflight-blank-text"), fixture(t, "tool-loop-negative")
			path := storetest.Materialize(t, tc.shape, t.TempDir(), healthy)
			staging := storetest.Materialize(t, tc.shape, t.TempDir(), broken)
			sid := broken.ID
			state := t.TempDir()
			p := startWatch(t, state, "--settle", settle.String(), path)

			lastWrite, maxGap := runWriter(t, string(tc.shape), staging, path, sid, brokenPart)
			if maxGap >= settle {
				// The session did settle while being written: watch
				// was right to repair it, and the test proves nothing.
				t.Fatalf("the writer paused %s between two writes, longer than the %s settle window: the machine is too loaded for this test", maxGap, settle)
			}
			rep := p.wait(func(e received) bool { return e.Kind == watch.Repaired && e.Session == sid }, time.Minute, "repaired")
			if early := rep.Time.Add(5 * time.Millisecond).Before(lastWrite.Add(settle)); early {
				t.Errorf("repaired at %s, before the writer's last write %s plus the settle window", rep.Time.Format(time.StampMicro), lastWrite.Format(time.StampMicro))
			}
			if rep.Backup == "" || len(rep.Rules) == 0 {
				t.Fatalf("repaired event without backup or rules: %+v", rep.Event)
			}
			if left := fixableNow(t, path, sid); len(left) > 0 {
				t.Errorf("after the live repair %v remain", left)
			}
			// Stop watch before undo, or it would repair the session again.
			if err := p.stop(syscall.SIGTERM); err != nil {
				t.Errorf("watch exited with %v after SIGTERM, want 0", err)
			}
			if n := len(p.all(watch.Repaired, sid)); n != 1 {
				t.Errorf("%d repairs of %s, want 1", n, sid)
			}
			if n := len(p.all(watch.Repaired, healthy.ID)); n != 0 {
				t.Errorf("the healthy session was repaired %d times", n)
			}
			if out, err := sessfix(t, state, "undo", rep.Backup); err != nil {
				t.Fatalf("undo %s: %v\n%s", rep.Backup, err, out)
			}
			got, want := tc.records(t, path, sid), tc.records(t, staging, sid)
			if len(got) != len(want) {
				t.Errorf("after undo the session has %d records, want %d", len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("after undo %s differs from what the writer left", k)
				}
			}
			if left := fixableNow(t, path, sid); len(left) == 0 {
				t.Error("after undo the session is repaired still")
			}
		})
	}
}

// TestDryRunReportsAndWritesNothing runs watch --dry-run over a broken
// export file.
func TestDryRunReportsAndWritesNothing(t *testing.T) {
	t.Parallel()
	broken := fixture(t, "preflight-blank-text")
	path := storetest.Materialize(t, store.ShapeExport, t.TempDir(), broken)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path, old, old)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	p := startWatch(t, state, "--dry-run", path)
	e := p.wait(func(e received) bool { return e.Kind == watch.WouldRepair }, time.Minute, "would-repair")
	if e.Session != broken.ID || len(e.Rules) == 0 || e.Edits == 0 {
		t.Errorf("would-repair event %+v", e.Event)
	}
	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Error("dry run changed the export file")
	}
	if entries, _ := os.ReadDir(filepath.Join(state, "backups")); len(entries) != 0 {
		t.Errorf("dry run made %d backup runs", len(entries))
	}
}

// TestServiceFilesUseRealFlags parses the command lines of the systemd unit
// and the launchd plist with the built sessfix.
func TestServiceFilesUseRealFlags(t *testing.T) {
	t.Parallel()
	unit, err := os.ReadFile("../../docs/sessfix-watch.service")
	if err != nil {
		t.Fatal(err)
	}
	plist, err := os.ReadFile("../../docs/dev.sessfix.watch.plist")
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]string
	for _, l := range strings.Split(string(unit), "\n") {
		if strings.HasPrefix(l, "ExecStart=") {
			lines = append(lines, strings.Fields(l)[1:])
		}
	}
	prog := regexp.MustCompile(`(?s)<key>ProgramArguments</key>\s*<array>(.*?)</array>`).FindSubmatch(plist)
	if prog == nil {
		t.Fatal("the plist has no ProgramArguments")
	}
	var args []string
	for _, m := range regexp.MustCompile(`<string>([^<]*)</string>`).FindAllSubmatch(prog[1], -1) {
		args = append(args, string(m[1]))
	}
	if len(args) > 1 {
		lines = append(lines, args[1:])
	}
	if len(lines) != 2 {
		t.Fatalf("found %d command lines, want one per file", len(lines))
	}
	for _, l := range lines {
		if len(l) == 0 || l[0] != "watch" {
			t.Errorf("command line %q does not run sessfix watch", l)
			continue
		}
		if out, err := sessfix(t, t.TempDir(), append(l, "--help")...); err != nil {
			t.Errorf("sessfix %s: %v\n%s", strings.Join(l, " "), err, out)
		}
	}
}

//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
)

// TestSalvageDamagedDatabase: real OpenCode 1.18.33 records four sessions
// (long prompts, so the part table spans several pages), and one leaf page
// of the part table is then overwritten, as a torn write or a bad sector
// leaves it: that overwrite is the only edit the test makes. `sessfix scan`
// reports the damage (SF501, exit 1). While a real `opencode serve` holds
// the database, `fix --yes` refuses with exit 4 and changes nothing. With
// OpenCode stopped, `fix --yes` salvages the database; OpenCode then
// starts on the result, `opencode session list` lists the sessions, and a
// session whose rows all survived resumes and the strict mock accepts it.
// `sessfix undo` puts the damaged bytes back.
func TestSalvageDamagedDatabase(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 10*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 3 * time.Minute})
	var ids []string
	for i := range 4 {
		res, err := e.Prompt(ctx, strings.Repeat(string(rune('a'+i))+" long prompt to fill pages ", 150))
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("prompt %d: %v\n%s", i, err, res)
		}
		ids = append(ids, res.SessionID)
	}
	keep := ids[len(ids)-1]
	var keepRows []string
	for _, m := range (dataDir{t, e.DataDir()}).session(keep) {
		keepRows = append(keepRows, m.ID)
		for _, p := range m.Parts {
			keepRows = append(keepRows, p.ID)
		}
	}
	checkpoint(t, e.DBPath())
	rs := &realstore.Store{Dir: e.DataDir(), Path: e.DBPath()}
	rs.DamagePage(t, "part", keepRows...)
	damaged, err := os.ReadFile(e.DBPath())
	if err != nil {
		t.Fatal(err)
	}

	scan := sessfix(t, e, "scan", "--format", "json", e.DataDir())
	if scan.ExitCode != 1 || !strings.Contains(scan.Stdout, `"SF501"`) {
		t.Fatalf("scan does not report the damage\n%s", scan)
	}

	held := refusedWhileServed(t, ctx, e)
	dry := sessfix(t, e, "fix", "--dry-run", e.DataDir())
	if dry.ExitCode != 1 || !strings.Contains(dry.Stdout, "salvageDatabase") || !strings.Contains(dry.Stdout, "; it loses ") {
		t.Fatalf("fix --dry-run does not show the salvage and what it loses\n%s", dry)
	}
	t.Logf("the held database:\n%s\nthe dry run:\n%s", held.Stderr, dry.Stdout)
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	t.Logf("fix --yes:\n%s", fix.Stderr)
	if fix.ExitCode != 0 || !strings.Contains(fix.Stderr, "repaired database") {
		t.Fatalf("fix --yes did not salvage the database\n%s", fix)
	}
	if _, err := os.Stat(e.DBPath() + "-wal"); err == nil {
		t.Log("the salvaged database has a -wal file")
	}

	sessions := openCodeSessions(t, ctx, e)
	t.Logf("opencode session list after the salvage: %d sessions", len(sessions))
	if len(sessions) != len(ids) {
		t.Errorf("opencode lists %d sessions after the salvage, want %d", len(sessions), len(ids))
	}
	resumeAccepted(t, ctx, e, keep)
	undoAfterOpenCode(t, e, backupRuns(t, e), map[string][]byte{"": damaged})
}

// dbFiles reads the database's files that exist, by suffix ("", "-wal",
// "-shm").
func dbFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, suf := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(path + suf)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		files[suf] = b
	}
	return files
}

// refusedWhileServed runs `sessfix fix --yes` while a real `opencode
// serve` holds the database: it must exit 4 and say that nothing was
// changed, and the database and its -wal must hold the bytes they held
// before the server started.
func refusedWhileServed(t *testing.T, ctx context.Context, e *opencodetest.Env) *sfResult {
	t.Helper()
	before := dbFiles(t, e.DBPath())
	srv, err := e.Serve(ctx)
	if err != nil {
		t.Fatalf("opencode serve: %v", err)
	}
	held := sessfix(t, e, "fix", "--yes", e.DataDir())
	srv.Kill()
	if held.ExitCode != 4 || !strings.Contains(held.Stderr, "nothing was changed") {
		t.Fatalf("fix --yes while opencode serve holds the database: exit %d\n%s", held.ExitCode, held)
	}
	after := dbFiles(t, e.DBPath())
	for _, suf := range []string{"", "-wal"} {
		if !bytes.Equal(before[suf], after[suf]) {
			t.Fatalf("the database's %q file changed while opencode serve held it", "opencode.db"+suf)
		}
	}
	return held
}

// openCodeSessions is what `opencode session list --format json` lists:
// the ids, in its order. It fails the test when OpenCode does not start
// or exits with an error.
func openCodeSessions(t *testing.T, ctx context.Context, e *opencodetest.Env) []string {
	t.Helper()
	res, err := e.Run(ctx, "session", "list", "--format", "json")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("opencode session list: %v\n%s", err, res)
	}
	var sessions []struct{ ID string }
	if i := strings.Index(res.Stdout, "["); i >= 0 {
		if err := json.Unmarshal([]byte(res.Stdout[i:]), &sessions); err != nil {
			t.Fatalf("opencode session list: %v\n%s", err, res.Stdout)
		}
	}
	var ids []string
	for _, s := range sessions {
		ids = append(ids, s.ID)
	}
	return ids
}

// resumeAccepted resumes the session with a new prompt and fails the test
// unless OpenCode exits 0 after sending chat requests the strict mock
// accepted.
func resumeAccepted(t *testing.T, ctx context.Context, e *opencodetest.Env, session string) {
	t.Helper()
	e.Mock.Reset()
	resumed, err := e.Resume(ctx, session, "are you there?")
	if err != nil {
		t.Fatal(err)
	}
	chat := e.Mock.ChatRequests()
	if len(chat) == 0 || resumed.ExitCode != 0 {
		t.Fatalf("the resume of %s sent no chat request or failed\n%s", session, resumed)
	}
	for _, r := range chat {
		if r.Verdict != mockanthropic.Accepted {
			t.Errorf("the mock rejected the resumed session %s: %s", session, r.Error)
		}
	}
}

// listRuns lists the ids of the backup runs `sessfix backups` lists.
func listRuns(t *testing.T, e *opencodetest.Env) []string {
	t.Helper()
	var ids []string
	for _, r := range backupsList(t, e) {
		ids = append(ids, r.ID)
	}
	return ids
}

// listedRun is a run as `sessfix backups --format json` lists it.
type listedRun struct {
	ID       string          `json:"run"`
	Database json.RawMessage `json:"database"`
}

func backupsList(t *testing.T, e *opencodetest.Env) []listedRun {
	t.Helper()
	list := sessfix(t, e, "backups", "--format", "json")
	var runs []listedRun
	if err := json.Unmarshal([]byte(list.Stdout), &runs); err != nil || list.ExitCode != 0 {
		t.Fatalf("sessfix backups: %v\n%s", err, list)
	}
	return runs
}

// backupRuns are the ids of the backup runs in the order `sessfix
// backups` lists them: newest first by the time each run's manifest
// records. Sorting the ids would not do: the runs of one fix can share
// their second, and their ids then sort by a random suffix. It fails the
// test when there is none.
func backupRuns(t *testing.T, e *opencodetest.Env) []string {
	t.Helper()
	ids := listRuns(t, e)
	if len(ids) == 0 {
		t.Fatal("no backup run listed")
	}
	return ids
}

// undoAfterOpenCode undoes runs (newest first), among them a database
// repair that OpenCode has written over since (it started on the result
// and resumed a session): plain `sessfix undo` of that run refuses,
// `--force` puts the files back; a run of a session's repair is undone as
// it comes. The database runs are told by what `sessfix backups` says of
// them, not by their order: the runs of one fix can share their second,
// and their ids then sort by a random suffix. want holds the bytes the
// database's files must have again, by suffix ("", "-wal").
func undoAfterOpenCode(t *testing.T, e *opencodetest.Env, runs []string, want map[string][]byte) {
	t.Helper()
	database := map[string]bool{}
	for _, r := range backupsList(t, e) {
		database[r.ID] = len(r.Database) > 0 && string(r.Database) != "null"
	}
	seen := false
	for _, run := range runs {
		undo := sessfix(t, e, "undo", run)
		if database[run] {
			seen = true
			if undo.ExitCode == 0 {
				t.Fatalf("undo of a database OpenCode wrote since did not refuse\n%s", undo)
			}
		}
		if undo.ExitCode != 0 {
			undo = sessfix(t, e, "undo", "--force", run)
		}
		if undo.ExitCode != 0 {
			t.Fatalf("undo:\n%s", undo)
		}
	}
	if !seen {
		t.Fatalf("no database run among %v", runs)
	}
	for suf, b := range want {
		if got, _ := os.ReadFile(e.DBPath() + suf); !bytes.Equal(got, b) {
			t.Errorf("undo did not put the bytes of %s back", filepath.Base(e.DBPath()+suf))
		}
	}
}

// checkpoint folds OpenCode's -wal into the database file, so that the
// pages in the file are the whole database (realstore.DamagePage needs
// that): the last connection's close removes the log.
func checkpoint(t *testing.T, path string) {
	t.Helper()
	db, err := opencodetest.OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
}

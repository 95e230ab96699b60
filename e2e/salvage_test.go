//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
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

	srv, err := e.Serve(ctx)
	if err != nil {
		t.Fatalf("opencode serve: %v", err)
	}
	held := sessfix(t, e, "fix", "--yes", e.DataDir())
	srv.Kill()
	if held.ExitCode != 4 || !strings.Contains(held.Stderr, "nothing was changed") {
		t.Fatalf("fix --yes while opencode serve holds the database: exit %d\n%s", held.ExitCode, held)
	}
	if b, _ := os.ReadFile(e.DBPath()); !bytes.Equal(b, damaged) {
		t.Fatal("fix changed the database opencode serve held")
	}

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

	res, err := e.Run(ctx, "session", "list", "--format", "json")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("opencode session list on the salvaged database: %v\n%s", err, res)
	}
	var sessions []struct{ ID string }
	if i := strings.Index(res.Stdout, "["); i >= 0 {
		_ = json.Unmarshal([]byte(res.Stdout[i:]), &sessions)
	}
	t.Logf("opencode session list after the salvage: %d sessions", len(sessions))
	if len(sessions) != len(ids) {
		t.Errorf("opencode lists %d sessions after the salvage, want %d\n%s", len(sessions), len(ids), res.Stdout)
	}

	e.Mock.Reset()
	resumed, err := e.Resume(ctx, keep, "are you there?")
	if err != nil {
		t.Fatal(err)
	}
	chat := e.Mock.ChatRequests()
	if len(chat) == 0 || resumed.ExitCode != 0 {
		t.Fatalf("the resume on the salvaged database sent no chat request or failed\n%s", resumed)
	}
	for _, r := range chat {
		if r.Verdict != mockanthropic.Accepted {
			t.Errorf("the mock rejected the resumed session: %s", r.Error)
		}
	}

	list := sessfix(t, e, "backups", "--format", "json")
	var runs []struct {
		ID string `json:"run"`
	}
	if err := json.Unmarshal([]byte(list.Stdout), &runs); err != nil || len(runs) == 0 {
		t.Fatalf("no backup run listed (%v)\n%s", err, list)
	}
	// OpenCode wrote the salvaged database since: undo refuses, --force
	// puts the damaged bytes back anyway.
	if refused := sessfix(t, e, "undo", runs[0].ID); refused.ExitCode == 0 {
		t.Fatalf("undo of a database OpenCode wrote since did not refuse\n%s", refused)
	}
	undo := sessfix(t, e, "undo", "--force", runs[0].ID)
	if undo.ExitCode != 0 {
		t.Fatalf("undo:\n%s", undo)
	}
	if b, _ := os.ReadFile(e.DBPath()); !bytes.Equal(b, damaged) {
		t.Error("undo did not put the damaged bytes back")
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

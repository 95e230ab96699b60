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
)

// TestVacuumOnRequest: real OpenCode 1.18.33 records two sessions; the
// database is then made mostly free pages by a table the test fills and
// drops (the free list SQLite keeps after OpenCode deletes sessions; a
// real run would have to write and delete 16 MiB of sessions to get
// there: that table is the only edit the test makes). `sessfix scan`
// reports SF504. A plain `fix --yes` leaves the database alone; while a
// real `opencode serve` holds it, `fix --select SF504 --yes` refuses with
// exit 4 and changes nothing; with OpenCode stopped it vacuums. OpenCode
// then starts on the result, lists both sessions and resumes one, which
// the strict mock accepts; `sessfix undo` puts the original bytes back.
func TestVacuumOnRequest(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 10*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 3 * time.Minute})
	var ids []string
	for i := range 2 {
		res, err := e.Prompt(ctx, "say hello "+string(rune('a'+i)))
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("prompt %d: %v\n%s", i, err, res)
		}
		ids = append(ids, res.SessionID)
	}
	db, err := opencodetest.OpenDB(e.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TABLE filler (b BLOB)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) INSERT INTO filler SELECT randomblob(1048576) FROM n",
		"DROP TABLE filler"} {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			db.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	checkpoint(t, e.DBPath())
	before, err := os.ReadFile(e.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string) {
		t.Helper()
		if b, _ := os.ReadFile(e.DBPath()); !bytes.Equal(b, before) {
			t.Fatalf("%s changed the database", what)
		}
	}

	scan := sessfix(t, e, "scan", "--format", "json", e.DataDir())
	if !strings.Contains(scan.Stdout, `"SF504"`) {
		t.Fatalf("scan does not report the free pages\n%s", scan)
	}
	if plain := sessfix(t, e, "fix", "--yes", e.DataDir()); plain.ExitCode != 0 {
		t.Fatalf("fix --yes: exit %d\n%s", plain.ExitCode, plain)
	}
	same("a plain fix")

	srv, err := e.Serve(ctx)
	if err != nil {
		t.Fatalf("opencode serve: %v", err)
	}
	held := sessfix(t, e, "fix", "--select", "SF504", "--yes", e.DataDir())
	srv.Kill()
	if held.ExitCode != 4 || !strings.Contains(held.Stderr, "nothing was changed") {
		t.Fatalf("fix --select SF504 while opencode serve holds the database: exit %d\n%s", held.ExitCode, held)
	}
	same("fix --select SF504 while opencode serve held the database")
	checkpoint(t, e.DBPath()) // opencode serve left its log
	same("opencode serve")

	vac := sessfix(t, e, "fix", "--select", "SF504", "--yes", e.DataDir())
	if vac.ExitCode != 0 || !strings.Contains(vac.Stderr, "(vacuumDatabase)") {
		t.Fatalf("fix --select SF504 --yes did not vacuum\n%s", vac)
	}
	after, _ := os.ReadFile(e.DBPath())
	t.Logf("the database: %d bytes before the vacuum, %d after", len(before), len(after))
	if len(after)*4 > len(before) {
		t.Errorf("the database is %d bytes after the vacuum, was %d", len(after), len(before))
	}

	res, err := e.Run(ctx, "session", "list", "--format", "json")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("opencode session list on the vacuumed database: %v\n%s", err, res)
	}
	var sessions []struct{ ID string }
	if i := strings.Index(res.Stdout, "["); i >= 0 {
		_ = json.Unmarshal([]byte(res.Stdout[i:]), &sessions)
	}
	if len(sessions) != len(ids) {
		t.Errorf("opencode lists %d sessions after the vacuum, want %d\n%s", len(sessions), len(ids), res.Stdout)
	}
	e.Mock.Reset()
	resumed, err := e.Resume(ctx, ids[0], "are you there?")
	if err != nil {
		t.Fatal(err)
	}
	chat := e.Mock.ChatRequests()
	if len(chat) == 0 || resumed.ExitCode != 0 {
		t.Fatalf("the resume on the vacuumed database sent no chat request or failed\n%s", resumed)
	}
	for _, r := range chat {
		if r.Verdict != mockanthropic.Accepted {
			t.Errorf("the mock rejected the resumed session: %s", r.Error)
		}
	}

	list := sessfix(t, e, "backups", "--format", "json")
	var runs []struct {
		ID       string `json:"run"`
		Database *struct {
			Action string `json:"action"`
		} `json:"database"`
	}
	if err := json.Unmarshal([]byte(list.Stdout), &runs); err != nil || len(runs) != 1 || runs[0].Database == nil || runs[0].Database.Action != "vacuum" {
		t.Fatalf("want one vacuum run listed (%v)\n%s", err, list)
	}
	// OpenCode wrote the vacuumed database since (the resume): --force.
	if undo := sessfix(t, e, "undo", "--force", runs[0].ID); undo.ExitCode != 0 {
		t.Fatalf("undo:\n%s", undo)
	}
	same("undo")
}

//go:build acceptance

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
)

// abandonedAge is how long ago the killed turn is made to look written:
// past opencode.DefaultAbandon (10 minutes).
const abandonedAge = 11 * time.Minute

// TestAbandonedTurnWhileOpenCodeServes: OpenCode 1.18.33 is killed in the
// middle of a bash tool, and a real `opencode serve` then holds the
// database open, as a user's open TUI or server does. The killed turn was
// written 11 minutes ago, past the abandon window: that OpenCode has the
// store open is no sign that this turn is being written. With their
// default flags `sessfix scan` reports the unfinished turn, `fix --dry-run`
// shows its repair and `fix --yes` writes it, none of them holding it back
// as busy; OpenCode then resumes the session and the strict mock accepts
// it. Waiting 11 minutes is what a user does; the test instead moves the
// times the turn's rows record 11 minutes back (their columns and the
// times in their JSON), and that edit is the only one.
func TestAbandonedTurnWhileOpenCodeServes(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 8*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 3 * time.Minute})
	first, err := e.Prompt(ctx, "hello")
	if err != nil || first.ExitCode != 0 {
		t.Fatalf("first prompt: %v\n%s", err, first)
	}
	proc, err := e.StartPrompt("", "run it [[tool:bash sleep 60]]")
	if err != nil {
		t.Fatal(err)
	}
	var sid string
	for sid == "" {
		select {
		case <-ctx.Done():
			proc.Kill()
			t.Fatal("the bash tool never ran")
		case <-proc.Done():
			res, _ := proc.Wait()
			t.Fatalf("opencode exited before the tool ran\n%s", res)
		case <-time.After(100 * time.Millisecond):
		}
		ids, _ := opencodetest.Sessions(e.DataDir())
		for _, id := range ids {
			if id != first.SessionID && runningTool(e, id) {
				sid = id
			}
		}
	}
	if _, err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	ageSession(t, dataDir{t, e.DataDir()}, sid, abandonedAge)

	srv, err := e.Serve(ctx)
	if err != nil {
		t.Fatalf("opencode serve: %v", err)
	}
	defer srv.Kill()

	scan := sessfix(t, e, "scan", "--format", "json", e.DataDir())
	var doc scanDoc
	if err := json.Unmarshal([]byte(scan.Stdout), &doc); err != nil {
		t.Fatalf("scan printed no JSON document: %v\n%s", err, scan)
	}
	var fixable []string
	for _, f := range doc.Findings {
		if f.Session == sid && f.Fixable {
			fixable = append(fixable, f.Code)
		}
	}
	if len(fixable) == 0 || scan.ExitCode != 1 {
		t.Fatalf("scan with OpenCode serving does not report the abandoned turn (exit %d)\n%s", scan.ExitCode, scan)
	}
	dry := sessfix(t, e, "fix", "--dry-run", e.DataDir())
	if !strings.Contains(dry.Stdout+dry.Stderr, sid) || strings.Contains(dry.Stdout+dry.Stderr, "in use") {
		t.Fatalf("fix --dry-run does not show the repair of %s, or holds it back\n%s", sid, dry)
	}
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 || !strings.Contains(fix.Stderr, "fixed 1 session") || strings.Contains(fix.Stdout+fix.Stderr, "in use") {
		t.Fatalf("fix --yes with OpenCode serving did not repair the abandoned turn\n%s", fix)
	}
	srv.Kill()

	e.Mock.Reset()
	res, err := e.Resume(ctx, sid, "are you there?")
	if err != nil {
		t.Fatal(err)
	}
	chat := e.Mock.ChatRequests()
	if len(chat) == 0 || res.ExitCode != 0 {
		t.Fatalf("the resume sent no chat request or failed\n%s", res)
	}
	for _, r := range chat {
		if r.Verdict != mockanthropic.Accepted {
			t.Errorf("the mock rejected the resumed session: %s", r.Error)
		}
	}
}

// runningTool reports whether a session's last assistant message has a
// tool part OpenCode is running.
func runningTool(e *opencodetest.Env, sid string) bool {
	msgs, err := opencodetest.LoadSession(e.DataDir(), sid)
	if err != nil {
		return false
	}
	for _, m := range msgs {
		for _, p := range m.Parts {
			if st, _ := p.Data["state"].(map[string]any); p.Type() == "tool" && st["status"] == "running" {
				return true
			}
		}
	}
	return false
}

// ageSession moves every time the session's rows record (their
// time_created and time_updated columns, and the times in their JSON) back
// by age, as if the session had been written that long ago.
func ageSession(t *testing.T, d dataDir, sid string, age time.Duration) {
	t.Helper()
	ms := age.Milliseconds()
	db := d.db()
	defer db.Close()
	shift := func(col string) string {
		return `CASE WHEN json_type(data, '` + col + `') = 'integer' THEN json_set(data, '` + col + `', json_extract(data, '` + col + `') - ?1) ELSE data END`
	}
	stmts := []string{
		`UPDATE session SET time_created = time_created - ?1, time_updated = time_updated - ?1 WHERE id = ?2`,
		`UPDATE message SET time_created = time_created - ?1, time_updated = time_updated - ?1 WHERE session_id = ?2`,
		`UPDATE part SET time_created = time_created - ?1, time_updated = time_updated - ?1 WHERE session_id = ?2`,
	}
	for _, col := range []string{"$.time.created", "$.time.completed"} {
		stmts = append(stmts, `UPDATE message SET data = `+shift(col)+` WHERE session_id = ?2`)
	}
	for _, col := range []string{"$.time.start", "$.time.end", "$.state.time.start", "$.state.time.end"} {
		stmts = append(stmts, `UPDATE part SET data = `+shift(col)+` WHERE session_id = ?2`)
	}
	for _, q := range stmts {
		if _, err := db.Exec(q, ms, sid); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

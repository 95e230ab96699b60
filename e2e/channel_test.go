//go:build acceptance

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
)

// TestDevChannelRepairHolds: OpenCode's dev channel build (VDev, of
// 2026-09-21) keeps its sessions in opencode-dev.db, with the message and
// part tables of 1.18 and, beside them, an event log (the event table) that
// records every part it writes. Does a repair of message and part rows hold
// there, or does OpenCode rebuild them from its events?
//
// The build is killed where the text block has started (a real kill, as in
// the kill-text-start scenario); its resume is rejected for the whitespace
// text it left. `sessfix fix --yes`, default flags, right after that
// failure, repairs the rows; the next resume is accepted, and the repaired
// part stays repaired while the event log still holds the part as OpenCode
// wrote it: OpenCode reads the rows, not the events (OBSERVED.md).
func TestDevChannelRepairHolds(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 10*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.VDev, Timeout: 3 * time.Minute})
	first, err := e.Prompt(ctx, "hello [[tool:bash echo hi]]")
	if err != nil || first.ExitCode != 0 || first.SessionID == "" {
		t.Fatalf("first prompt: %v\n%s", err, first)
	}
	if got := opencodetest.DBFile(e.DataDir()); filepath.Base(got) != "opencode-dev.db" {
		t.Fatalf("the dev build's database is %s, want opencode-dev.db", got)
	}
	session := first.SessionID
	killAtTextStart(ctx, t, e, session)
	ws := whitespaceTexts(t, e, session)
	if len(ws) != 1 {
		t.Fatalf("the kill left %d whitespace-only text parts, want 1", len(ws))
	}
	rejected := resumeVerdict(ctx, t, e, anthropicCalls, session, "continue")
	if !strings.Contains(rejected, "text content blocks must contain non-whitespace text") {
		t.Fatalf("the resume after the kill was not rejected for the empty text: %q", rejected)
	}
	found, _ := scanStore(t, e, session)
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 || !strings.Contains(fix.Stderr, "backup run") {
		t.Fatalf("fix --yes\n%s", fix)
	}
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, session, "Tell me more."); rej != "" {
		t.Fatalf("after sessfix fix the resume is rejected: %s\n%s", rej, fix)
	}
	if left := whitespaceTexts(t, e, session); len(left) > 0 {
		t.Errorf("after the resume OpenCode brought back whitespace text parts %v", left)
	}
	// The event log still holds the part as OpenCode wrote it: sessfix
	// does not write it, and OpenCode did not replay it over the rows.
	db, err := opencodetest.OpenDB(opencodetest.DBFile(e.DataDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var events int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM event WHERE type LIKE 'message.part.updated%' AND data LIKE '%' || ? || '%'`, ws[0]).Scan(&events); err != nil {
		t.Fatalf("the dev build's event log: %v", err)
	}
	if events == 0 {
		t.Errorf("no event of the dev build records part %s: the event log is not what OBSERVED.md says", ws[0])
	}
	recordWedged(t, wedgedRow{
		Case: "dev-channel-kill-text-start", Test: "TestDevChannelRepairHolds", OpenCode: opencodetest.VDev, Model: e.Model,
		Break: "the dev channel build (opencode-dev.db, with an event log) killed where the answer's text block started; " +
			"a real run, no edit; after the resume the repaired part is still repaired and the event log still holds it as first written",
		Before: rejectedAs(rejected), Scan: codes(codesWithSeverity(found)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
	})
}

// killAtTextStart sends a second prompt to session and kills OpenCode once
// the mock has started the answer's text block and OpenCode has stored its
// text part (as the kill-text-start scenario does on 1.18.33).
func killAtTextStart(ctx context.Context, t *testing.T, e *opencodetest.Env, session string) {
	t.Helper()
	known := map[string]bool{}
	msgs, err := opencodetest.LoadSession(e.DataDir(), session)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		known[m.ID] = true
	}
	pause := e.Mock.Pause(mockanthropic.StageTextStart, mockanthropic.ChatRequest)
	defer pause.Release()
	proc, err := e.StartPrompt(session, "Tell me more about it.")
	if err != nil {
		t.Fatal(err)
	}
	err = proc.KillAt(ctx, pause, func() bool {
		msgs, err := opencodetest.LoadSession(e.DataDir(), session)
		if err != nil {
			return false
		}
		for _, m := range msgs {
			if !known[m.ID] && m.Role() == "assistant" && firstPart(m, "text") != nil {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("kill at the text start: %v", err)
	}
}

// whitespaceTexts are the ids of the session's assistant text parts whose
// text is whitespace only.
func whitespaceTexts(t *testing.T, e *opencodetest.Env, session string) []string {
	t.Helper()
	msgs, err := opencodetest.LoadSession(e.DataDir(), session)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		if m.Role() != "assistant" {
			continue
		}
		for _, p := range m.Parts {
			if p.Type() == "text" && strings.TrimSpace(p.Text()) == "" {
				out = append(out, p.ID)
			}
		}
	}
	return out
}

//go:build acceptance

package e2e

import (
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// TestRecordsOpenCodeCannotServe proves the schema and graph repairs end to
// end on real OpenCode 1.18.33 through the sessfix command: a session with
// keys older versions and other tools leave out (a user message's agent, a
// tool's title and time, a step-finish's reason), a user message's format
// key, and an answer whose parentID names a deleted message cannot be
// opened (GET /session/:id/message answers 400); `sessfix scan` reports
// SF206, SF208 and SF209 there, `sessfix fix --yes` repairs them, and the
// session loads (200), exports and resumes with a request the provider
// accepts.
func TestRecordsOpenCodeCannotServe(t *testing.T) {
	t.Parallel()
	b, c := onBase(t, opencodetest.V1_18)
	e, d := c.e, c.d

	tool, answer := c.assistant(0), c.assistant(1)
	d.exec(`UPDATE message SET data = json_remove(data, '$.agent') WHERE id = ?`, c.user(0).ID)
	d.exec(`UPDATE message SET data = json_set(data, '$.format', json('{"type":"text"}')) WHERE id = ?`, c.user(1).ID)
	d.exec(`UPDATE message SET data = json_set(data, '$.parentID', 'msg_1fed5d000001GoneGoneGone01') WHERE id = ?`, c.assistant(2).ID)
	d.deletePaths(tool.ID, c.part(tool, "tool").ID, "state.title", "state.time")
	d.deletePaths(answer.ID, c.part(answer, "step-finish").ID, "reason")

	if status, body := c.serve(); status != 400 {
		t.Fatalf("GET /session/:id/message on the broken session: %d %s, want 400", status, body)
	}
	codes := func() map[string]int {
		t.Helper()
		fs, _ := scanStore(t, e, b.loop)
		out := map[string]int{}
		for _, f := range fs {
			out[f.Code]++
		}
		return out
	}
	got := codes()
	for code, n := range map[string]int{"SF206": 3, "SF208": 1, "SF209": 1} {
		if got[code] != n {
			t.Errorf("%s: %d findings, want %d (all: %v)", code, got[code], n, got)
		}
	}
	if res := sessfix(t, e, append([]string{"fix", "--yes"}, scanFlags...)...); res.ExitCode != 0 {
		t.Fatalf("fix --yes:\n%s", res)
	}
	got = codes()
	for _, code := range []string{"SF206", "SF207", "SF208", "SF209"} {
		if got[code] != 0 {
			t.Errorf("after the fix: %v", got)
		}
	}
	if status, body := c.serve(); status != 200 {
		t.Fatalf("GET /session/:id/message after the fix: %d %s", status, body)
	}
	ctx := testCtx(t, 4*time.Minute)
	if _, res, err := e.Export(ctx, b.loop); err != nil || res.ExitCode != 0 {
		t.Fatalf("opencode export after the fix: %v\n%s", err, res)
	}
	if v := c.resume("Please continue."); v.State != "accepted" {
		t.Fatalf("resume after the fix: %s", v)
	}
	if agent, _ := d.session(b.loop)[0].Data["agent"].(string); agent == "" {
		t.Error("the user message's agent was not written back")
	}
}

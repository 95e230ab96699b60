//go:build acceptance

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// sf212 runs `sessfix scan --select SF212` on the data dir and returns its
// findings.
func sf212(t *testing.T, e *opencodetest.Env) []finding {
	t.Helper()
	args := append([]string{"scan", "--format", "json", "--select", "SF212"}, scanFlags...)
	res := sessfix(t, e, append(args, e.DataDir())...)
	var doc scanDoc
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("scan JSON: %v\n%s", err, res)
	}
	return doc.Findings
}

// listed says whether `opencode session list`, run in the base's project
// directory, lists the session.
func listed(ctx context.Context, t *testing.T, e *opencodetest.Env, session string) bool {
	t.Helper()
	res, err := e.Run(ctx, "session", "list", "--format", "json")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("opencode session list: %v\n%s", err, res)
	}
	return strings.Contains(res.Stdout, `"`+session+`"`)
}

// fixProject runs `sessfix fix --yes` with its default flags, as a user
// does, and wants it to have made the SF212 repair.
func fixProject(t *testing.T, e *opencodetest.Env) {
	t.Helper()
	if res := sessfix(t, e, "fix", "--yes", e.DataDir()); res.ExitCode != 0 ||
		!strings.Contains(res.Stdout+res.Stderr, "setSessionProject") {
		t.Fatalf("fix --yes:\n%s", res)
	}
}

// TestMissingProject proves SF212 on real OpenCode 1.18.33: a session whose
// project row is gone is reported with the project its directory resolves
// to; OpenCode leaves it out of `opencode session list` and cannot resume
// it; `sessfix fix` sets it to the project the finding names, OpenCode lists
// it and resumes it, and sessfix reports nothing; `sessfix undo` restores
// the row exactly.
func TestMissingProject(t *testing.T) {
	t.Parallel()
	b, c := onBase(t, opencodetest.V1_18)
	e, d := c.e, c.d
	ctx := testCtx(t, 10*time.Minute)
	if got := sf212(t, e); len(got) != 0 || !listed(ctx, t, e, b.loop) {
		t.Fatalf("healthy store: SF212 %+v, listed %v", got, listed(ctx, t, e, b.loop))
	}

	d.exec(`UPDATE session SET project_id = 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9' WHERE id = ?`, b.loop)
	got := sf212(t, e)
	if len(got) != 1 || got[0].Session != b.loop || got[0].Severity != "error" ||
		!strings.HasSuffix(got[0].Message, "cannot resume it; its directory resolves to project global") {
		t.Fatalf("SF212 %+v, want one error on %s naming project global", got, b.loop)
	}
	if listed(ctx, t, e, b.loop) {
		t.Error("OpenCode lists the session whose project row is gone")
	}
	e.Mock.Reset()
	res, err := e.Resume(ctx, b.loop, "Please continue.", "--print-logs", "--log-level", "WARN")
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "FOREIGN KEY constraint failed") {
		t.Fatalf("OpenCode resumed the session SF212 reports:\n%s", res)
	}
	diagnoseLogged(t, e, nil, b.loop, res.Stderr, "FOREIGN KEY constraint failed", "SF212", "setSessionProject")

	// sessfix fix repairs it, undo puts the broken row back byte for byte,
	// and the repair made again resumes.
	before := storeState(t, d)
	fixProject(t, e)
	if got := sf212(t, e); len(got) != 0 || !listed(ctx, t, e, b.loop) {
		t.Fatalf("after sessfix fix: SF212 %+v, listed %v", got, listed(ctx, t, e, b.loop))
	}
	if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 {
		t.Fatalf("undo --last:\n%s", res)
	}
	if storeState(t, d) != before || listed(ctx, t, e, b.loop) {
		t.Fatal("undo did not put the session's row back exactly")
	}
	fixProject(t, e)
	if v := c.resume("Please continue."); v.State != "accepted" {
		t.Fatalf("resume after the repair: %s", v)
	}
	if got := sf212(t, e); len(got) != 0 || !listed(ctx, t, e, b.loop) {
		t.Fatalf("after the resume: SF212 %+v, listed %v", got, listed(ctx, t, e, b.loop))
	}
}

// TestShadowedProject proves SF212's warning on real OpenCode 1.18.33
// (#8661): a second project row for the session's worktree, a copy of the
// real one under another id (what a second OpenCode install, a copied
// database or a rewritten repository leaves), holds the session. OpenCode
// lists the sessions of the project it resolves the directory to, so it
// leaves the session out of `opencode session list`, though it still
// resumes it; sessfix reports it as a warning naming that project; `sessfix
// fix` points the session back, OpenCode lists and resumes it; `sessfix
// undo` restores the store exactly; and the duplicate project row stays:
// sessfix never deletes project rows.
func TestShadowedProject(t *testing.T) {
	t.Parallel()
	b, c := onBase(t, opencodetest.V1_18)
	e, d := c.e, c.d
	ctx := testCtx(t, 10*time.Minute)
	if got := sf212(t, e); len(got) != 0 || !listed(ctx, t, e, b.loop) {
		t.Fatalf("healthy store: SF212 %+v, listed %v", got, listed(ctx, t, e, b.loop))
	}

	// The project the session is on (the base's directory is not a git
	// repository: global), copied column for column under a new id.
	const shadow = "b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0"
	db := d.db()
	var resolved string
	if err := db.QueryRow(`SELECT project_id FROM session WHERE id = ?`, b.loop).Scan(&resolved); err != nil {
		t.Fatal(err)
	}
	var cols []string
	rows, err := db.Query(`SELECT name FROM pragma_table_info('project') WHERE name != 'id' ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var col string
		if err := rows.Scan(&col); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, col)
	}
	if err := rows.Err(); err != nil || len(cols) == 0 {
		t.Fatalf("project columns %v: %v", cols, err)
	}
	rows.Close()
	db.Close()
	list := strings.Join(cols, ", ")
	d.exec(`INSERT INTO project (id, `+list+`) SELECT ?, `+list+` FROM project WHERE id = ?`, shadow, resolved)
	d.exec(`UPDATE session SET project_id = ? WHERE id = ?`, shadow, b.loop)
	shadowed := func(when string) {
		t.Helper()
		got := sf212(t, e)
		if len(got) != 1 || got[0].Session != b.loop || got[0].Severity != "warning" || !got[0].Fixable ||
			!strings.Contains(got[0].Message, "under project "+resolved+", not under this session's project "+shadow) {
			t.Fatalf("%s: SF212 %+v, want one fixable warning on %s naming project %s", when, got, b.loop, resolved)
		}
		if listed(ctx, t, e, b.loop) {
			t.Fatalf("%s: OpenCode lists the session on the duplicate project row", when)
		}
	}
	shadowed("the session on the duplicate row")
	// It still loads and resumes there: only the lists leave it out, and
	// the resume does not move it back.
	if v := c.resume("Please continue."); v.State != "accepted" {
		t.Fatalf("resume on the duplicate row: %s", v)
	}
	shadowed("after a resume on the duplicate row")

	// sessfix fix points it at the resolved project and leaves the project
	// rows alone; undo puts the session row back exactly.
	before, projects := storeState(t, d), tablesState(t, d, "project")
	fixProject(t, e)
	if tablesState(t, d, "project") != projects {
		t.Fatal("sessfix fix changed the project rows")
	}
	if got := sf212(t, e); len(got) != 0 {
		t.Fatalf("after sessfix fix: SF212 %+v", got)
	}
	if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 {
		t.Fatalf("undo --last:\n%s", res)
	}
	if storeState(t, d) != before || tablesState(t, d, "project") != projects {
		t.Fatal("undo did not restore the store exactly")
	}
	shadowed("after sessfix undo")
	fixProject(t, e)
	if v := c.resume("Please continue."); v.State != "accepted" {
		t.Fatalf("resume after the repair: %s", v)
	}
	if got := sf212(t, e); len(got) != 0 || !listed(ctx, t, e, b.loop) {
		t.Fatalf("after the resume: SF212 %+v, listed %v", got, listed(ctx, t, e, b.loop))
	}
	db = d.db()
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM project WHERE id = ?`, shadow).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the duplicate project row after the repair and the resume: %d rows, %v", n, err)
	}
}

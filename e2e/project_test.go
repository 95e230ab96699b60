package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

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
	sf212 := func() []finding {
		t.Helper()
		args := append([]string{"scan", "--format", "json", "--select", "SF212"}, scanFlags...)
		res := sessfix(t, e, append(args, e.DataDir())...)
		var doc scanDoc
		if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
			t.Fatalf("scan JSON: %v\n%s", err, res)
		}
		return doc.Findings
	}
	listed := func() bool {
		t.Helper()
		res, err := e.Run(ctx, "session", "list", "--format", "json")
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("opencode session list: %v\n%s", err, res)
		}
		return strings.Contains(res.Stdout, `"`+b.loop+`"`)
	}
	if got := sf212(); len(got) != 0 || !listed() {
		t.Fatalf("healthy store: SF212 %+v, listed %v", got, listed())
	}

	d.exec(`UPDATE session SET project_id = 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9' WHERE id = ?`, b.loop)
	got := sf212()
	if len(got) != 1 || got[0].Session != b.loop || got[0].Severity != "error" ||
		!strings.HasSuffix(got[0].Message, "cannot resume it; its directory resolves to project global") {
		t.Fatalf("SF212 %+v, want one error on %s naming project global", got, b.loop)
	}
	if listed() {
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

	// sessfix fix repairs it, undo puts the broken row back byte for byte,
	// and the repair made again resumes.
	before := storeState(t, d)
	fix := func() {
		t.Helper()
		if res := sessfix(t, e, "fix", "--yes", e.DataDir()); res.ExitCode != 0 ||
			!strings.Contains(res.Stdout+res.Stderr, "setSessionProject") {
			t.Fatalf("fix --yes:\n%s", res)
		}
	}
	fix()
	if got := sf212(); len(got) != 0 || !listed() {
		t.Fatalf("after sessfix fix: SF212 %+v, listed %v", got, listed())
	}
	if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 {
		t.Fatalf("undo --last:\n%s", res)
	}
	if storeState(t, d) != before || listed() {
		t.Fatal("undo did not put the session's row back exactly")
	}
	fix()
	e.Mock.Reset()
	if res, err := e.Resume(ctx, b.loop, "Please continue."); err != nil || res.ExitCode != 0 || len(e.Mock.ChatRequests()) == 0 {
		t.Fatalf("resume after the repair: %v\n%s", err, res)
	}
	if got := sf212(); len(got) != 0 || !listed() {
		t.Fatalf("after the resume: SF212 %+v, listed %v", got, listed())
	}
}

//go:build acceptance

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/golden"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/pkg/scan"
)

// summaryPending reports a compaction's summary message that OpenCode has
// stored and not finished: no time.completed, no error.
func summaryPending(msgs []opencodetest.Message) (string, bool) {
	for _, m := range msgs {
		_, failed := m.Data["error"]
		if m.Data["summary"] == true && !failed && opencodetest.Get(m.Data, "time.completed") == nil {
			return m.ID, true
		}
	}
	return "", false
}

// scanSession runs `sessfix scan --format json` with extra flags and
// returns its exit code and the findings on the session.
func scanSession(t *testing.T, e *opencodetest.Env, sid string, flags ...string) (int, []finding) {
	t.Helper()
	res := sessfix(t, e, append(append([]string{"scan", "--format", "json"}, flags...), e.DataDir())...)
	var doc scanDoc
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("scan printed no JSON document: %v\n%s", err, res)
	}
	var out []finding
	for _, f := range doc.Findings {
		if f.Session == sid {
			out = append(out, f)
		}
	}
	return res.ExitCode, out
}

// TestKilledCompaction: OpenCode 1.18.33 killed (SIGKILL) while the mock
// holds its compaction request, the way a crash or a closed terminal stops
// a compaction. It leaves the summary message with no time.completed, no
// error and no parts. That is not a failed compaction: scan reports no
// SF304 and nothing above info, with the default settle rules and with
// them off (the unfinished summary is SF301 at info: closing it would make
// the compaction a failed one), and `sessfix fix --yes` changes nothing.
// OpenCode gets out by itself: the next prompt runs the compaction again,
// it completes, and the prompt is answered. The killed summary, no longer
// the newest compaction's, is then an ordinary SF301 warning, which fix
// closes (undo exact) with the session still resuming.
func TestKilledCompaction(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 8*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 3 * time.Minute})
	script := &compactionScript{}
	e.Mock.SetScript(script.answer)
	first, err := e.Prompt(ctx, "hello")
	if err != nil || first.ExitCode != 0 {
		t.Fatalf("first prompt: %v\n%s", err, first)
	}
	sid := first.SessionID
	d := dataDir{t, e.DataDir()}

	// An overflow starts the compaction; kill OpenCode while the mock
	// holds the compaction request, once its summary message is stored.
	script.overflow.Store(true)
	pause := e.Mock.Pause(mockanthropic.StageReceived, isCompactionRequest)
	defer pause.Release()
	proc, err := e.StartPrompt(sid, "go on "+markerOverflow)
	if err != nil {
		t.Fatal(err)
	}
	summary := ""
	err = proc.KillAt(ctx, pause, func() bool {
		msgs, err := opencodetest.LoadSession(e.DataDir(), sid)
		if err != nil {
			return false
		}
		id, ok := summaryPending(msgs)
		summary = id
		return ok
	})
	if err != nil {
		t.Fatal(err)
	}
	pause.Release()
	if golden.Update() {
		saveRecorded(t, d.session(sid), "killed")
	}

	// Scanned as it is, and with the settle rules off: nothing to fail on.
	if code, fs := scanSession(t, e, sid); code != 0 || hasCode(fs, scan.SF304, "") {
		t.Fatalf("scan right after the kill: exit %d, %v", code, fs)
	}
	code, afterKill := scanSession(t, e, sid, "--settle", "0", "--abandon", "0")
	if code != 0 || hasCode(afterKill, scan.SF304, "") {
		t.Fatalf("scan with the settle rules off: exit %d, %v", code, afterKill)
	}
	found := false
	for _, f := range afterKill {
		found = found || f.Code == scan.SF301 && f.MessageID == summary && f.Severity == "info" && !f.Fixable
	}
	if !found {
		t.Fatalf("the killed summary %s is not SF301 at info: %v", summary, afterKill)
	}
	state := storeState(t, d)
	if fix := sessfix(t, e, "fix", "--yes", e.DataDir()); fix.ExitCode != 0 || storeState(t, d) != state {
		t.Fatalf("fix --yes changed a session OpenCode resumes by itself\n%s", fix)
	}

	// OpenCode runs the compaction again, then answers.
	before := len(e.Mock.Requests())
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, sid, "are you there?"); rej != "" {
		t.Fatalf("the resume after the kill is refused: %s", rej)
	}
	compactions, chats := 0, 0
	for _, r := range e.Mock.Requests()[before:] {
		switch {
		case isCompactionRequest(&r):
			compactions++
		case r.Chat:
			chats++
		}
	}
	if compactions != 1 || chats == 0 || !compacted(d.session(sid), true) {
		t.Fatalf("the resume sent %d compaction and %d chat requests; want the compaction run again, then the prompt", compactions, chats)
	}

	// The killed summary is history now: an ordinary unfinished message.
	code, afterResume := scanSession(t, e, sid)
	if code != 1 || hasCode(afterResume, scan.SF304, "") || !hasCode(afterResume, scan.SF301, "") {
		t.Fatalf("scan after the resume: exit %d, %v", code, afterResume)
	}
	state = storeState(t, d)
	if fix := sessfix(t, e, "fix", "--yes", e.DataDir()); fix.ExitCode != 0 {
		t.Fatalf("fix --yes\n%s", fix)
	}
	if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 || storeState(t, d) != state {
		t.Fatalf("undo did not restore the store exactly\n%s", res)
	}
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 || !strings.Contains(fix.Stderr, "fixed 1 session") {
		t.Fatalf("fix --yes after undo\n%s", fix)
	}
	before = len(e.Mock.Requests())
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, sid, "still there?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is refused: %s", rej)
	}
	for _, r := range e.Mock.Requests()[before:] {
		if isCompactionRequest(&r) {
			t.Errorf("after the fix the resume ran a compaction again")
		}
	}
	recordWedged(t, wedgedRow{
		Case: "killed-compaction", Test: "TestKilledCompaction", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: "an overflow makes OpenCode compact, and OpenCode is killed (SIGKILL) while the provider holds the compaction " +
			"request; a real run, no edit: the summary message is left unfinished",
		Before: "accepted: the next prompt runs the compaction again, then is answered",
		Scan:   codes(codesWithSeverity(afterKill)),
		Fix:    "none (after the resume: " + wroteMutations(fix.Stdout+fix.Stderr) + " on the old summary)",
		After:  "accepted",
	})
}

// saveRecorded writes a session as pkg/scan's recorded compaction sessions
// hold them (testdata/compaction-1.18.33-NAME.json).
func saveRecorded(t *testing.T, msgs []opencodetest.Message, name string) {
	t.Helper()
	type row struct {
		ID    string         `json:"id"`
		Data  map[string]any `json:"data"`
		Parts []row          `json:"parts,omitempty"`
	}
	var rows []row
	for _, m := range msgs {
		r := row{ID: m.ID, Data: m.Data}
		for _, p := range m.Parts {
			r.Parts = append(r.Parts, row{ID: p.ID, Data: p.Data})
		}
		rows = append(rows, r)
	}
	b, err := json.MarshalIndent(rows, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	root, err := opencodetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "pkg", "scan", "testdata", "compaction-1.18.33-"+name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

//go:build acceptance

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/pkg/scan"
)

// TestManualCompactionRefused: the manual compaction (the TUI's /compact:
// `opencode serve`'s POST /session/:id/summarize) refused by the provider
// leaves, on OpenCode 1.18.33 and on 1.1.65 alike, what a refused automatic
// one leaves on 1.18.33: a compaction request (`auto: false`) whose summary
// message keeps the error and no finish, so the next prompt runs the
// compaction again and is not answered. scan reports SF304, `sessfix fix
// --yes` gives the compaction up, undo is exact, and the next resume is
// answered, with the history from before the compaction, and no
// compaction request.
func TestManualCompactionRefused(t *testing.T) {
	parallel(t)
	for _, c := range []struct{ version, name string }{
		{opencodetest.V1_18, "refused-manual-compaction"},
		{opencodetest.V1_1, "refused-manual-compaction-1.1"},
	} {
		t.Run(c.version, func(t *testing.T) { manualCompactionRefused(t, c.version, c.name) })
	}
}

func manualCompactionRefused(t *testing.T, version, name string) {
	acquire(t)
	ctx := testCtx(t, 8*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: version, Timeout: 3 * time.Minute})
	script := &compactionScript{}
	e.Mock.SetScript(script.answer)
	first, err := e.Prompt(ctx, "hello")
	if err != nil || first.ExitCode != 0 {
		t.Fatalf("first prompt: %v\n%s", err, first)
	}
	sid := first.SessionID
	d := dataDir{t, e.DataDir()}

	script.refuse.Store(true)
	srv, err := e.Serve(ctx)
	if err != nil {
		t.Fatalf("opencode serve: %v", err)
	}
	provider, model, _ := strings.Cut(e.Model, "/")
	code, body, err := srv.Post(ctx, "/session/"+sid+"/summarize", `{"providerID":"`+provider+`","modelID":"`+model+`"}`)
	srv.Kill()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("POST summarize: %d %s", code, body)
	manual := false
	for _, m := range d.session(sid) {
		for _, p := range m.Parts {
			if p.Type() == "compaction" && p.Data["auto"] == false {
				manual = true
			}
		}
	}
	if !manual || !compacted(d.session(sid), false) {
		t.Fatalf("the refused /compact left no manual compaction request with a failed summary: %v", d.session(sid))
	}
	refused, refusal := 0, ""
	for _, r := range e.Mock.Requests() {
		if isCompactionRequest(&r) && r.Verdict != mockanthropic.Accepted {
			refused++
			refusal = r.Error
		}
	}
	if refused == 0 {
		t.Fatal("the mock saw no refused compaction request")
	}

	// The next prompt runs the compaction again and is not answered.
	before := len(e.Mock.Requests())
	if _, err := e.Resume(ctx, sid, "again?"); err != nil {
		t.Fatal(err)
	}
	for _, r := range e.Mock.Requests()[before:] {
		if r.Chat {
			t.Fatalf("the prompt after a refused /compact was sent as a chat request")
		}
	}

	code, fs := scanSession(t, e, sid)
	if code != 1 || !hasCode(fs, scan.SF304, "") {
		t.Fatalf("scan does not report the refused /compact: exit %d, %v", code, fs)
	}
	state := storeState(t, d)
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
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, sid, "are you there?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is refused: %s", rej)
	}
	withHistory := false
	for _, r := range e.Mock.Requests()[before:] {
		if isCompactionRequest(&r) {
			t.Errorf("after the fix the resume ran the failed compaction again")
		}
		if r.Chat && len(r.Parsed.Messages) > 0 {
			b, _ := json.Marshal(r.Parsed.Messages[0])
			withHistory = withHistory || strings.Contains(string(b), `"hello`)
		}
	}
	if !withHistory {
		t.Error("after the fix the resume's request does not start with the history from before the compaction")
	}
	recordWedged(t, wedgedRow{
		Case: name, Test: "TestManualCompactionRefused", OpenCode: version, Model: e.Model,
		Break: "/compact (opencode serve's POST /session/:id/summarize) refused by the provider with an error OpenCode does not " +
			"take for an overflow; a real run, no edit; the resume after the fix sends the history from before the compaction",
		Before: "stuck: only the compaction request is sent, " + rejectedAs(refusal), Scan: codes(codesWithSeverity(fs)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
	})
}

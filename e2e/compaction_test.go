//go:build acceptance

package e2e

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/pkg/scan"
)

// markerOverflow makes the mock answer an agent request whose prompt
// carries it with a context overflow, once per compactionScript.overflow.
const markerOverflow = "[[overflow]]"

// compactionRefusal is Anthropic's text for a request whose input and
// max_tokens exceed the context window, which OpenCode 1.18.33 does not
// recognise as an overflow: it stores it as an APIError.
const compactionRefusal = "input length and `max_tokens` exceed context limit: 187000 + 32000 > 200000, decrease input length or `max_tokens` and try again"

// compactionScript answers the next agent request carrying markerOverflow
// (when overflow is set) with "prompt is too long", which makes OpenCode
// 1.18.33 compact the session; OpenCode's compaction requests (no tools,
// the summarization agent's system prompt) are refused with
// compactionRefusal while refuse is set. Everything else is DefaultScript's.
type compactionScript struct{ overflow, refuse atomic.Bool }

func isCompactionRequest(r *mockanthropic.Request) bool {
	if r.Parsed == nil || len(r.Parsed.Tools) != 0 {
		return false
	}
	// 1.18.33: the summarization agent's system prompt over the history as
	// one text; 1.1.65: the history as it is, then its summary prompt.
	return strings.Contains(string(r.Parsed.System), "context summarization agent") ||
		strings.Contains(r.Parsed.LastUserText(), "Provide a detailed prompt for continuing our conversation above")
}

func (c *compactionScript) answer(r *mockanthropic.Request) mockanthropic.Turn {
	switch {
	case r.Chat && strings.Contains(r.Parsed.LastUserText(), markerOverflow) && c.overflow.CompareAndSwap(true, false):
		return mockanthropic.Turn{Error: &mockanthropic.APIError{Status: 400, Type: "invalid_request_error", Message: "prompt is too long: 215000 tokens > 200000 maximum"}}
	case isCompactionRequest(r) && c.refuse.Load():
		return mockanthropic.Turn{Error: &mockanthropic.APIError{Status: 400, Type: "invalid_request_error", Message: compactionRefusal}}
	}
	return mockanthropic.DefaultScript(r)
}

// TestFailedCompaction: on OpenCode 1.18.33 a context overflow starts an
// automatic compaction (a user message with a `compaction` part, answered
// by a summary message). A completed one scans clean. When the provider
// refuses the compaction request with an error OpenCode does not take for
// an overflow, the summary message keeps the error and no finish, and every
// later prompt runs the compaction again first: the resume is refused and
// no chat request is sent, the session is stuck. scan reports SF304 at
// error level; `sessfix fix --yes` with default flags gives the compaction
// up the way OpenCode does (finish "error"), undo restores the store
// exactly, and after the fix the next resume is answered, the provider
// still refusing compaction requests.
func TestFailedCompaction(t *testing.T) {
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

	// A compaction that completes: scanned clean.
	script.overflow.Store(true)
	// `opencode run` exits 1 here: it prints the overflow as an error
	// event, then compacts and answers.
	if _, err := e.Resume(ctx, sid, "go on "+markerOverflow); err != nil {
		t.Fatal(err)
	}
	if !compacted(d.session(sid), true) {
		t.Fatal("the overflow did not make OpenCode compact the session")
	}
	if res := sessfix(t, e, "scan", "--fail-on", "warning", e.DataDir()); res.ExitCode != 0 || strings.Contains(res.Stdout, scan.SF304) {
		t.Fatalf("a completed compaction does not scan clean\n%s", res)
	}

	// A compaction the provider refuses.
	script.overflow.Store(true)
	script.refuse.Store(true)
	if _, err := e.Resume(ctx, sid, "more "+markerOverflow); err != nil {
		t.Fatal(err)
	}
	if !compacted(d.session(sid), false) {
		t.Fatal("the refused compaction left no failed summary message")
	}
	before := len(e.Mock.Requests())
	if _, err := e.Resume(ctx, sid, "again?"); err != nil {
		t.Fatal(err)
	}
	chats, refused, refusal := 0, 0, ""
	for _, r := range e.Mock.Requests()[before:] {
		if r.Chat {
			chats++
		}
		if isCompactionRequest(&r) && r.Verdict != mockanthropic.Accepted {
			refused++
			if refusal == "" {
				refusal = r.Error
			}
		}
	}
	if chats != 0 || refused == 0 {
		t.Fatalf("the resume after a refused compaction sent %d chat requests and %d refused compaction requests; want the compaction run again and no chat", chats, refused)
	}

	res := sessfix(t, e, "scan", "--format", "json", e.DataDir())
	var doc scanDoc
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("scan printed no JSON document: %v\n%s", err, res)
	}
	found := false
	var ofSession []finding
	for _, f := range doc.Findings {
		found = found || f.Session == sid && f.Code == scan.SF304 && f.Fixable
		if f.Session == sid {
			ofSession = append(ofSession, f)
		}
	}
	if !found || res.ExitCode != 1 {
		t.Fatalf("scan does not report the failed compaction (exit %d)\n%s", res.ExitCode, res)
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
	for _, r := range e.Mock.Requests()[before:] {
		if isCompactionRequest(&r) {
			t.Errorf("after the fix the resume ran the failed compaction again")
		}
	}
	recordWedged(t, wedgedRow{
		Case: "refused-compaction", Test: "TestFailedCompaction", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: "an overflow makes OpenCode compact, and the provider refuses the compaction request with an error OpenCode does not " +
			"take for an overflow; a real run, no edit: OpenCode then runs the compaction again before every prompt and sends no chat request",
		Before: "stuck: only the compaction request is sent, " + rejectedAs(refusal), Scan: codes(codesWithSeverity(ofSession)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
	})
}

// compacted reports whether the session's newest compaction request has a
// summary message that finished (done) or one that failed (!done).
func compacted(msgs []opencodetest.Message, done bool) bool {
	req := ""
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type() == "compaction" {
				req = m.ID
			}
		}
	}
	for _, m := range msgs {
		if req == "" || m.Data["summary"] != true || m.ID < req {
			continue
		}
		_, failed := m.Data["error"]
		finish, _ := m.Data["finish"].(string)
		if done && finish != "" && !failed || !done && finish == "" && failed {
			return true
		}
	}
	return false
}

package fix

import (
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// More ids, after msgA3 (recover_test.go), in the same order.
const (
	msgU4      = "msg_a00000000007AAAAAAAAAAAAAA"
	msgA4      = "msg_a00000000008AAAAAAAAAAAAAA"
	prtSummary = "prt_a00000000007AAAAAAAAAAAAAA"
)

// refusedCompaction is the error OpenCode 1.18.33 stores on a compaction's
// summary message when the provider refuses the compaction request with a
// context-window text it does not recognise as an overflow.
const refusedCompaction = `"error":{"name":"APIError","data":{"message":"input length and ` + "`max_tokens`" + ` exceed context limit: 187000 + 32000 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again","statusCode":400,"isRetryable":false}}`

// compactionSession is the session OpenCode 1.18.33 leaves when a request
// overflows (an empty assistant message), its automatic compaction is
// refused (summary message with the error, no finish), and the next prompt
// runs the compaction again and is refused again. last, when set,
// replaces the newest summary message's time, error and finish.
func compactionSession(t *testing.T, last string) *store.Session {
	b := newSB(t, store.ShapeSQLite)
	user := func(id, pid, text string, created string) {
		u := b.msg(id, "user", `{"role":"user","time":{"created":`+created+`},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`)
		b.part(u, pid, text)
	}
	user(msgU1, prt1, `{"type":"text","text":"hello"}`, "1763726399000")
	a := b.msg(msgA1, "assistant", `{"role":"assistant","parentID":"`+msgU1+`","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","agent":"build","time":{"created":1763726400000,"completed":1763726401000},"finish":"stop"}`)
	b.part(a, prt2, `{"type":"text","text":"hi"}`)
	user(msgU2, prt3, `{"type":"text","text":"go on"}`, "1763726402000")
	b.msg(msgA2, "assistant", `{"role":"assistant","parentID":"`+msgU2+`","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","agent":"build","time":{"created":1763726403000,"completed":1763726403100}}`)
	user(msgU3, prt4, `{"type":"compaction","auto":true,"overflow":true}`, "1763726404000")
	b.msg(msgA3, "assistant", `{"role":"assistant","parentID":"`+msgU3+`","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"compaction","agent":"compaction","summary":true,"time":{"created":1763726405000,"completed":1763726405100},`+refusedCompaction+`}`)
	user(msgU4, prt5, `{"type":"text","text":"again?"}`, "1763726406000")
	if last == "" {
		last = `"time":{"created":1763726407000,"completed":1763726407100},` + refusedCompaction
	}
	b.msg(msgA4, "assistant", `{"role":"assistant","parentID":"`+msgU4+`","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"compaction","agent":"compaction","summary":true,`+last+`}`)
	return b.complete().s
}

func TestPlanSF304FinishesTheFailedCompaction(t *testing.T) {
	s := compactionSession(t, "")
	f := fs0(scan.CheckSession(s, scanOpts()), "SF304")
	if f.MessageID != msgA4 || f.Severity != scan.Error || f.Fix != "finishFailedCompaction" {
		t.Fatalf("SF304 should report the newest failed summary at error level with its fix: %+v", f)
	}
	fixed := fixAndRecheck(t, s, "give-up")
	m := fixed.Message(msgA4)
	if m.Get("finish").String() != opencode.CompactionFinishError || opencode.ErrorName(m) != "APIError" {
		t.Errorf("after the repair: %s", m.Raw)
	}
	// One edit: the newest summary message; the compaction request, the
	// older failed summary and every other message stay.
	p, err := Plan(s, scan.CheckSession(s, scanOpts()), planOpts())
	if err != nil {
		t.Fatal(err)
	}
	if eds := p.Changes.Edits; len(eds) != 1 || eds[0].ID != msgA4 || eds[0].Mutation != "finishFailedCompaction" {
		t.Errorf("edits %+v, want finishFailedCompaction of %s only", eds, msgA4)
	}
	if opencode.FailedCompaction(fixed) != nil {
		t.Error("the compaction is still pending after the repair")
	}
}

// A compaction OpenCode is still writing (no error yet) is not a failed
// one; a retryable error is a warning.
func TestSF304InProgressAndRetryable(t *testing.T) {
	s := compactionSession(t, `"time":{"created":1763726407000}`)
	if f := fs0(scan.CheckSession(s, scanOpts()), "SF304"); f.Code != "" {
		t.Errorf("a compaction in progress is reported: %+v", f)
	}
	s = compactionSession(t, `"time":{"created":1763726407000,"completed":1763726407100},"error":{"name":"APIError","data":{"message":"Overloaded","statusCode":529,"isRetryable":true}}`)
	if f := fs0(scan.CheckSession(s, scanOpts()), "SF304"); f.Severity != scan.Warning {
		t.Errorf("a retryable failure: %+v, want a warning", f)
	}
	// Given up by OpenCode itself (an overflow of the compaction request).
	s = compactionSession(t, `"time":{"created":1763726407000,"completed":1763726407100},"finish":"error","error":{"name":"ContextOverflowError","data":{"message":"Conversation history too large to compact - exceeds model context limit"}}`)
	if f := fs0(scan.CheckSession(s, scanOpts()), "SF304"); f.Code != "" {
		t.Errorf("a compaction OpenCode gave up is reported: %+v", f)
	}
}

// A completed compaction (its summary finished) followed by more turns is
// healthy.
func TestSF304CompletedCompactionIsClean(t *testing.T) {
	s := compactionSession(t, `"time":{"created":1763726407000,"completed":1763726407100},"finish":"stop"`)
	b := &sb{t: t, s: s}
	b.part(s.Message(msgA4), prtSummary, `{"type":"text","text":"summary of the work"}`)
	b.complete()
	if f := fs0(scan.CheckSession(s, scanOpts()), "SF304"); f.Code != "" {
		t.Errorf("a completed compaction is reported: %+v", f)
	}
}

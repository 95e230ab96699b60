package fix

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

const lengthAsst = `{"role":"assistant","parentID":"` + msgU1 + `","providerID":"openai","modelID":"gpt-5.2","time":{"created":1763726400000,"completed":1763726401000},"finish":"length"}`

// The call OpenCode 1.18.33 leaves when the output limit cuts it off (OpenCode
// issue #13102): closed with the abort text and the input it had.
func TestMarkToolCutOffGolden(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	a := b.msg(msgA1, "assistant", lengthAsst)
	p := b.part(a, prt2, `{"type":"tool","callID":"call_1","tool":"write","state":{"status":"error","input":{},"error":"Tool execution aborted","time":{"start":5,"end":6}}}`)
	ed := onlyEdit(t)(markToolCutOff(a, p, testEnv()))
	want := `{
  "id": "prt_a00000000002AAAAAAAAAAAAAA",
  "sessionID": "ses_7f0000000000AAAAAAAAAAAAAA",
  "messageID": "msg_a00000000002AAAAAAAAAAAAAA",
  "type": "tool",
  "callID": "call_1",
  "tool": "write",
  "state": {
    "status": "error",
    "input": {},
    "error": "Tool execution aborted: the model's output hit its length limit (finish \"length\") before this call's input was complete, so the call was not run; write smaller calls (split a large file or patch into several)",
    "time": {
      "start": 5,
      "end": 1795262400000
    },
    "metadata": {
      "interrupted": true
    }
  }
}`
	if string(ed.After) != want {
		t.Errorf("got\n%s\nwant\n%s", ed.After, want)
	}
	// Marked once: the rewritten call is no longer a cut-off one.
	np, err := store.NewPart(store.Record{ID: p.ID, Raw: ed.After}, a.ID, sesID)
	if err != nil {
		t.Fatal(err)
	}
	a.Parts[0] = np
	if eds, err := markToolCutOff(a, np, testEnv()); err != nil || len(eds) != 0 {
		t.Errorf("a call already marked must not change again: %v %v", eds, err)
	}
}

// A half-written input (text, not a JSON object) becomes {} and its text is
// kept in the tool's metadata.
func TestMarkToolCutOffStringInputSQLite(t *testing.T) {
	b := newSB(t, store.ShapeSQLite)
	a := b.msg(msgA1, "assistant", lengthAsst)
	p := b.part(a, prt2, `{"type":"tool","callID":"call_1","tool":"patch","state":{"status":"pending","input":"{\"patchText\":\"*** Begin Patch\\n+let","raw":""}}`)
	ed := onlyEdit(t)(markToolCutOff(a, p, testEnv()))
	want := `{"type":"tool","callID":"call_1","tool":"patch","state":{"status":"error","input":{},"raw":"","error":"` +
		strings.ReplaceAll(ToolCutOffError, `"`, `\"`) +
		`","metadata":{"interrupted":true,"truncatedInput":"{\"patchText\":\"*** Begin Patch\\n+let"},"time":{"start":1795262400000,"end":1795262400000}}}`
	if string(ed.After) != want {
		t.Errorf("got  %s\nwant %s", ed.After, want)
	}
}

// Calls on a step that did not end with finish "length", and completed
// calls, are not the output limit's doing and stay as they are.
func TestMarkToolCutOffLeavesOtherCalls(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	a := b.msg(msgA1, "assistant", strings.Replace(lengthAsst, `"length"`, `"tool-calls"`, 1))
	aborted := b.part(a, prt2, `{"type":"tool","callID":"call_1","tool":"bash","state":{"status":"error","input":{},"error":"Tool execution aborted","time":{"start":5,"end":6}}}`)
	done := b.part(a, prt3, `{"type":"tool","callID":"call_2","tool":"bash","state":{"status":"completed","input":{},"output":"","title":"","metadata":{},"time":{"start":5,"end":6}}}`)
	for _, p := range []*store.Part{aborted, done} {
		if eds, err := markToolCutOff(a, p, testEnv()); err != nil || len(eds) != 0 {
			t.Errorf("part %s must not change: %v %v", p.ID, eds, err)
		}
	}
	// A step whose step-finish says "length" is cut off even when the
	// message's own finish is another step's.
	b2 := newSB(t, store.ShapeSessions)
	a2 := b2.msg(msgA1, "assistant", strings.Replace(lengthAsst, `"length"`, `"stop"`, 1))
	b2.part(a2, prt1, `{"type":"step-start"}`)
	cut := b2.part(a2, prt2, `{"type":"tool","callID":"call_1","tool":"write","state":{"status":"error","input":{},"error":"Tool execution aborted","time":{"start":5,"end":6}}}`)
	b2.part(a2, prt3, `{"type":"step-finish","reason":"length"}`)
	b2.part(a2, prt4, `{"type":"step-start"}`)
	other := b2.part(a2, prt5, `{"type":"tool","callID":"call_2","tool":"bash","state":{"status":"error","input":{},"error":"Tool execution aborted","time":{"start":5,"end":6}}}`)
	b2.part(a2, prt6, `{"type":"step-finish","reason":"tool-calls"}`)
	if eds, _ := markToolCutOff(a2, cut, testEnv()); len(eds) != 1 {
		t.Errorf("the call of the step cut off by length must be marked, got %d edits", len(eds))
	}
	if eds, _ := markToolCutOff(a2, other, testEnv()); len(eds) != 0 {
		t.Errorf("the call of the next step must not change, got %d edits", len(eds))
	}
}

// cutOffSession is a turn whose write call the output limit cut off, then
// the user's "continue"; failed, when set, is the provider error of a
// further failed attempt.
func cutOffSession(t *testing.T, failed string) *store.Session {
	b := newSB(t, store.ShapeSQLite)
	u := b.msg(msgU1, "user", `{"role":"user","time":{"created":1763726399000},"agent":"build","model":{"providerID":"openai","modelID":"gpt-5.2"}}`)
	b.part(u, prt1, `{"type":"text","text":"write the report"}`)
	a := b.msg(msgA1, "assistant", lengthAsst)
	b.part(a, prt2, `{"type":"step-start"}`)
	b.part(a, prt3, `{"type":"tool","callID":"call_1","tool":"write","state":{"status":"error","input":{},"error":"Tool execution aborted","time":{"start":1763726400500,"end":1763726400900}}}`)
	b.part(a, prt4, `{"type":"step-finish","reason":"length","cost":0,"tokens":{"input":1,"output":32000,"reasoning":0,"cache":{"read":0,"write":0}}}`)
	if failed != "" {
		u2 := b.msg(msgU2, "user", `{"role":"user","time":{"created":1763726402000},"agent":"build","model":{"providerID":"openai","modelID":"gpt-5.2"}}`)
		b.part(u2, prt5, `{"type":"text","text":"continue"}`)
		b.msg(msgA2, "assistant", `{"role":"assistant","parentID":"`+msgU2+`","providerID":"openai","modelID":"gpt-5.2","time":{"created":1763726403000,"completed":1763726403100},"error":{"name":"APIError","data":{"message":`+jsonString(failed)+`,"isRetryable":false}}}`)
	}
	return b.complete().s
}

func jsonString(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// fixAndRecheck plans the session's findings, checks the plan in memory and
// returns the repaired session.
func fixAndRecheck(t *testing.T, s *store.Session, wantStrategy string) *store.Session {
	t.Helper()
	opts := planOpts()
	before := scan.CheckSession(s, scanOpts())
	p, err := Plan(s, before, opts)
	if err != nil || p.Empty() {
		t.Fatalf("plan: %v, empty %v; findings %v; unfixed %+v", err, p.Empty(), codes(before), p.Unfixed)
	}
	strategies := map[string]bool{}
	for _, r := range p.Fixed {
		strategies[r.Strategy] = true
	}
	if !strategies[wantStrategy] {
		t.Errorf("strategies %v, want %s", strategies, wantStrategy)
	}
	fixed, err := ApplyInMemory(s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	after := scan.CheckSession(fixed, scanOpts())
	if nf := newFindings(before, after); len(nf) > 0 {
		t.Errorf("new findings: %v", codes(nf))
	}
	for _, f := range after {
		if f.Severity >= scan.Warning {
			t.Errorf("left after the repair: %s %s", f.Code, f.Message)
		}
	}
	again, err := Plan(fixed, after, opts)
	if err != nil || !again.Empty() {
		t.Errorf("second plan: %v %+v", err, again)
	}
	return fixed
}

func TestPlanSF303MarksTheCallCutOff(t *testing.T) {
	s := cutOffSession(t, "")
	if f := fs0(scan.CheckSession(s, scanOpts()), "SF303"); f.Code == "" || f.PartID != prt3 || f.Fix != "markToolCutOff" {
		t.Fatalf("SF303 should report the cut-off call with its fix: %+v", f)
	}
	fixed := fixAndRecheck(t, s, "cut-off")
	if got := fixed.Message(msgA1).Parts[1].Get("state.error").String(); got != ToolCutOffError {
		t.Errorf("error after the repair %q", got)
	}
}

// Recovery from the stored error: the request failed on the half-written
// call (OpenCode issue #36766); every cut-off call before the failed
// attempt is marked, and the stored error then reads as repaired.
func TestStoredToolInputErrorMarksCutOffCalls(t *testing.T) {
	s := cutOffSession(t, "Invalid JSON input for openai-responses tool call patch")
	f := fs0(scan.CheckSession(s, scanOpts()), "SF302")
	if f.Severity != scan.Error || f.ErrorType != string(opencode.ErrorToolInputTruncated) {
		t.Fatalf("SF302 should classify the stored error as tool_input_truncated: %+v", f)
	}
	// The stored error alone, without SF303's finding, plans the repair.
	p, err := Plan(s, []scan.Finding{f}, planOpts())
	if err != nil || len(p.Fixed) != 1 || p.Fixed[0].Strategy != "cut-off" {
		t.Fatalf("plan from the stored error: %v %+v unfixed %+v", err, p.Fixed, p.Unfixed)
	}
	// It changes the cut-off call and no other part of its message.
	if eds := p.Changes.Edits; len(eds) != 1 || eds[0].ID != prt3 || eds[0].Mutation != "markToolCutOff" {
		var got []string
		for _, ed := range eds {
			got = append(got, ed.Mutation+" "+ed.ID)
		}
		t.Fatalf("plan from the stored error: %v, want markToolCutOff of %s only", got, prt3)
	}
	fixed := fixAndRecheck(t, s, "cut-off")
	if got := fixed.Message(msgA1).Parts[1].Get("state.error").String(); got != ToolCutOffError {
		t.Errorf("error after the repair %q", got)
	}
	if g := fs0(scan.CheckSession(fixed, scanOpts()), "SF302"); g.Severity != scan.Info {
		t.Errorf("SF302 after the repair: %s %q", g.Severity, g.Message)
	}
}

// A call still pending on a length-cut turn is SF105's and SF303's: the plan
// ends with the call marked cut off, whichever rule's repair runs first.
func TestPendingCutOffCallIsMarkedCutOff(t *testing.T) {
	b := newSB(t, store.ShapeStorage)
	u := b.msg(msgU1, "user", `{"role":"user","time":{"created":1763726399000},"agent":"build","model":{"providerID":"openai","modelID":"gpt-5.2"}}`)
	b.part(u, prt1, `{"type":"text","text":"write the report"}`)
	a := b.msg(msgA1, "assistant", lengthAsst)
	b.part(a, prt2, `{"type":"step-start"}`)
	b.part(a, prt3, `{"type":"tool","callID":"call_1","tool":"write","state":{"status":"pending","input":{},"raw":""}}`)
	s := b.complete().s
	before := scan.CheckSession(s, scanOpts())
	if fs0(before, "SF105").Code == "" || fs0(before, "SF303").Code == "" {
		t.Fatalf("want SF105 and SF303, got %v", codes(before))
	}
	fixed := fixAndRecheck(t, s, "cut-off")
	if got := fixed.Message(msgA1).Parts[1].Get("state.error").String(); got != ToolCutOffError {
		t.Errorf("error after the repair %q", got)
	}
}

package scan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

func TestFoundType(t *testing.T) {
	for text, want := range map[string]string{
		"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When":                                                    "tool_use",
		"messages.5.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `text`.": "text",
		"messages.5.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found text.":       "text",
		"messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.":                                                       "",
		"messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1.":                                                               "",
		"messages.1.content.0: Invalid `signature` in `thinking` block":                                                                                        "",
	} {
		if got := opencode.FoundType(text); got != want {
			t.Errorf("opencode.FoundType(%q) = %q, want %q", text, got, want)
		}
	}
}

// recoverySession is a tool loop (a1), an answer (a2), and the failed
// attempt (u2, f) at times 100–102, every earlier record dated before it.
func recoverySession(a1, a2 *store.Message, errText string) *store.Session {
	f := testMessage("f", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":101,"completed":102},"error":{"name":"APIError","data":{"message":`+fmt.Sprintf("%q", errText)+`}}}`)
	u2 := user("u2", "continue")
	return session(store.ShapeSQLite, user("u1", "list files"), a1, a2, u2, f)
}

const (
	signedAt  = `{"type":"reasoning","text":"use ls","time":{"start":10,"end":11},` + sig + `}`
	asstTools = `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"tool-calls"}`
)

// Resolved calls a stored error history only on evidence in the records
// that the message it points at changed after the attempt, and no longer
// shows what the error describes.
func TestResolvedNeedsEvidenceFromTheRecords(t *testing.T) {
	const sigErr = "messages.1.content.0: Invalid `signature` in `thinking` block"
	answer := testMessage("a2", "assistant", asstBody, `{"type":"step-start"}`, `{"type":"text","text":"a b","time":{"start":20,"end":21}}`)
	loop := func(parts ...string) *store.Message {
		return testMessage("a1", "assistant", asstTools, append([]string{`{"type":"step-start"}`}, parts...)...)
	}
	excluded := testMessage("a1", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"error":{"name":"UnknownError","data":{"message":"excluded by sessfix: the provider rejected it"}}}`,
		`{"type":"step-start"}`, signedAt, toolDone)
	for _, c := range []struct {
		name string
		a1   *store.Message
		why  string // "" when not resolved
	}{
		{"unchanged", loop(signedAt, toolDone), ""},
		{"a later time on a message that still shows it", loop(`{"type":"reasoning","text":"use ls","time":{"start":10,"end":500},`+sig+`}`, toolDone), ""},
		{"thinking removed", loop(toolDone), "thinking has been removed since"},
		{"excluded", excluded, "excluded that message"},
	} {
		s := recoverySession(c.a1, answer, sigErr)
		r := opencode.ReadError(s, sigErr, s.Message("f"))
		if r.TargetID != "a1" {
			t.Fatalf("%s: %s maps to %q (%v), want a1", c.name, r.Index, r.TargetID, r.MapErr)
		}
		why, ok := Resolved(r, s, nil, nil)
		if ok != (c.why != "") || !strings.Contains(why, c.why) {
			t.Errorf("%s: Resolved = %q, %v; want %q", c.name, why, ok, c.why)
		}
	}

	// An empty-content error on the answer: content alone is no evidence
	// (the checks may not see what the provider saw); a synthetic part or a
	// later time inside the records is, a compaction time is not.
	const emptyErr = "messages.3: all messages must have non-empty content except for the optional final assistant message"
	for _, c := range []struct {
		name  string
		parts []string
		why   string
	}{
		{"still blank", []string{`{"type":"text","text":" "}`}, ""},
		{"text without evidence", []string{`{"type":"text","text":"x","time":{"start":20,"end":21}}`}, ""},
		{"compacted after", []string{`{"type":"text","text":"x"}`, `{"type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{},"output":"","time":{"start":1,"end":2,"compacted":500}}}`}, ""},
		{"synthetic placeholder", []string{`{"type":"text","text":"[user interrupted]","synthetic":true}`}, "a synthetic text part"},
		{"written after", []string{`{"type":"text","text":"x","time":{"start":20,"end":500}}`}, "time.end is later than the attempt"},
	} {
		a2 := testMessage("a2", "assistant", asstBody, append([]string{`{"type":"step-start"}`}, c.parts...)...)
		s := recoverySession(loop(signedAt, toolDone), a2, emptyErr)
		r := &opencode.Recovery{Text: emptyErr, Type: opencode.ErrorEmptyContent, Defect: opencode.DefectEmpty, Index: "messages.3", Failed: s.Message("f"), TargetID: "a2"}
		why, ok := Resolved(r, s, nil, nil)
		if ok != (c.why != "") || !strings.Contains(why, c.why) {
			t.Errorf("%s: Resolved = %q, %v; want %q", c.name, why, ok, c.why)
		}
	}

	// A block-order error says what it found: once another block is there
	// (the thinking moved first), the message changed.
	const orderErr = "messages.1.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `tool_use`."
	for _, c := range []struct {
		name string
		a1   *store.Message
		why  string
	}{
		{"tool_use still first", loop(toolDone, signedAt), ""},
		{"thinking moved first", loop(signedAt, toolDone), "no longer the `tool_use` block"},
	} {
		s := recoverySession(c.a1, answer, orderErr)
		r := opencode.ReadError(s, orderErr, s.Message("f"))
		why, ok := Resolved(r, s, nil, nil)
		if ok != (c.why != "") || !strings.Contains(why, c.why) {
			t.Errorf("%s: Resolved = %q, %v; want %q", c.name, why, ok, c.why)
		}
	}

	// A pasted error that names no message is never known to be history.
	s := recoverySession(loop(signedAt, toolDone), answer, "x")
	if why, ok := Resolved(opencode.ReadError(s, "messages: text content blocks must contain non-whitespace text", nil), s, nil, nil); ok {
		t.Errorf("a pasted error that names no message is history: %q", why)
	}
}

// GitHub Copilot's invalid_signature names the first thinking block its
// upstream cannot verify (OpenCode #11546): the finding lists the named
// message and every later one that still sends a signature, not the ones
// before it, which passed.
func TestCopilotSignatureShowsFromTheNamedMessage(t *testing.T) {
	const body = `{"role":"assistant","providerID":"github-copilot","modelID":"claude-sonnet-4.5","time":{"created":2,"completed":3},"finish":"stop"}`
	turn := func(id string) *store.Message {
		return testMessage(id, "assistant", body, `{"type":"reasoning","text":"think","time":{"start":2,"end":3},`+sig+`}`, `{"type":"text","text":"ok","time":{"start":2,"end":3}}`)
	}
	const text = "messages.3.content.0: Invalid `signature` in `thinking` block"
	f := testMessage("f", "assistant", `{"role":"assistant","providerID":"github-copilot","modelID":"claude-sonnet-4.5","time":{"created":101,"completed":102},"error":{"name":"APIError","data":{"message":`+fmt.Sprintf("%q", text)+`}}}`)
	s := session(store.ShapeSQLite, user("u1", "one"), turn("a1"), user("u2", "two"), turn("a2"), user("u3", "three"), turn("a3"), user("u4", "four"), f)
	r := opencode.ReadError(s, text, s.Message("f"))
	if r.Defect != opencode.DefectCopilotSignature || r.TargetID != "a2" {
		t.Fatalf("defect %v, target %q (%v); want the Copilot defect on a2", r.Defect, r.TargetID, r.MapErr)
	}
	var got []string
	for _, m := range r.Showing(s, "f") {
		got = append(got, m.ID)
	}
	if strings.Join(got, " ") != "a2 a3" {
		t.Errorf("shows %v, want a2 a3", got)
	}
	var found bool
	for _, g := range CheckSession(s, &Options{}) {
		if g.Code == SF302 {
			found = true
			if g.Severity != Error || !strings.Contains(g.Message, "2 messages") || g.Fix == "" {
				t.Errorf("SF302: %s %q fix %q", g.Severity, g.Message, g.Fix)
			}
		}
	}
	if !found {
		t.Error("no SF302 on the stored Copilot error")
	}
}

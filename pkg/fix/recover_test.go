package fix

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

const (
	msgU3 = "msg_a00000000005AAAAAAAAAAAAAA"
	msgA3 = "msg_a00000000006AAAAAAAAAAAAAA"
)

const orderError = "messages.5.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `text`."

// failedResume: a tool loop, then an assistant turn with thinking after its
// text, then the failed attempt OpenCode stores (a "continue" user message
// and an assistant message carrying the provider's error).
func failedResume(t *testing.T, shape store.Shape) *sb {
	b := newSB(t, shape)
	asst := func(id, extra string) string {
		return `{"role":"assistant","parentID":"` + msgU1 + `","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3}` + extra + `}`
	}
	u1 := b.msg(msgU1, "user", `{"role":"user","time":{"created":1}}`)
	b.part(u1, "prt_b00000000001AAAAAAAAAAAAAA", `{"type":"text","text":"list files"}`)
	a1 := b.msg(msgA1, "assistant", asst(msgA1, `,"finish":"stop"`))
	b.part(a1, "prt_b00000000002AAAAAAAAAAAAAA", `{"type":"step-start"}`)
	b.part(a1, "prt_b00000000003AAAAAAAAAAAAAA", `{"type":"reasoning","text":"use ls",`+signedMeta+`}`)
	b.part(a1, "prt_b00000000004AAAAAAAAAAAAAA", `{"type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{},"output":"a b","time":{"start":1,"end":2}}}`)
	b.part(a1, "prt_b00000000005AAAAAAAAAAAAAA", `{"type":"step-start"}`)
	b.part(a1, "prt_b00000000006AAAAAAAAAAAAAA", `{"type":"reasoning","text":"summarise",`+signedMeta+`}`)
	b.part(a1, "prt_b00000000007AAAAAAAAAAAAAA", `{"type":"text","text":"a and b"}`)
	u2 := b.msg(msgU2, "user", `{"role":"user","time":{"created":4}}`)
	b.part(u2, "prt_b00000000008AAAAAAAAAAAAAA", `{"type":"text","text":"next"}`)
	a2 := b.msg(msgA2, "assistant", asst(msgA2, `,"finish":"stop"`))
	b.part(a2, "prt_b00000000009AAAAAAAAAAAAAA", `{"type":"step-start"}`)
	b.part(a2, "prt_b0000000000aAAAAAAAAAAAAAA", `{"type":"text","text":"answer"}`)
	b.part(a2, "prt_b0000000000bAAAAAAAAAAAAAA", `{"type":"reasoning","text":"late thought",`+signedMeta+`}`)
	u3 := b.msg(msgU3, "user", `{"role":"user","time":{"created":5}}`)
	b.part(u3, "prt_b0000000000cAAAAAAAAAAAAAA", `{"type":"text","text":"continue"}`)
	a3 := b.msg(msgA3, "assistant", asst(msgA3, `,"error":{"name":"APIError","data":{"message":"`+strings.ReplaceAll(orderError, `"`, `\"`)+`"}}`))
	b.part(a3, "prt_b0000000000dAAAAAAAAAAAAAA", `{"type":"step-start"}`)
	return b.complete()
}

func TestProviderMessagesMirrorsOpenCode(t *testing.T) {
	b := failedResume(t, store.ShapeSessions)
	got := ProviderMessages(b.s, MapOptions{})
	want := []ProviderMessage{
		{"user", []string{msgU1}},
		{"assistant", []string{msgA1}}, // step 1: thinking + tool call
		{"user", []string{msgA1}},      // its tool results
		{"assistant", []string{msgA1}}, // step 2
		{"user", []string{msgU2}},
		{"assistant", []string{msgA2}},
		{"user", []string{msgU3}}, // the errored A3 is skipped
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].Role != want[i].Role || strings.Join(got[i].Sources, ",") != strings.Join(want[i].Sources, ",") {
			t.Errorf("messages.%d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if id, err := MapProviderIndex(b.s, 5, MapOptions{}); err != nil || id != msgA2 {
		t.Errorf("messages.5 = %q, %v; want %s", id, err, msgA2)
	}
	if _, err := MapProviderIndex(b.s, 7, MapOptions{}); err == nil {
		t.Error("an index past the end must not map")
	}
}

func TestProviderMessagesRefusesMergedEntries(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	u := b.msg(msgU1, "user", `{"role":"user"}`)
	b.part(u, prt1, `{"type":"text","text":"go"}`)
	a := b.msg(msgA1, "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3}}`)
	b.part(a, prt2, `{"type":"tool","state":{"status":"completed"}}`)
	u2 := b.msg(msgU2, "user", `{"role":"user"}`)
	b.part(u2, prt3, `{"type":"text","text":"and?"}`)
	// Tool results of A1 and the text of U2 form one user entry.
	_, err := MapProviderIndex(b.s, 2, MapOptions{})
	if err == nil || !strings.Contains(err.Error(), "combines") {
		t.Errorf("merged entry mapped: %v", err)
	}
	// Empty text and ignored text do not count; a message with nothing else
	// is skipped.
	u3 := b.msg(msgU3, "user", `{"role":"user"}`)
	b.part(u3, prt4, `{"type":"text","text":""}`)
	b.part(u3, prt5, `{"type":"text","text":"x","ignored":true}`)
	if n := len(ProviderMessages(b.s, MapOptions{})); n != 3 {
		t.Errorf("got %d entries, want 3 (the empty user message skipped)", n)
	}
}

func TestPlanFromErrorMovesThinkingOnTheMappedMessage(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeSessions, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			b := failedResume(t, shape)
			p, err := PlanFromError(b.s, orderError, planOpts())
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Changes.Edits) != 1 {
				t.Fatalf("want one edit, got\n%s\nunfixed %+v notes %v", editSummary(p), p.Unfixed, p.Notes)
			}
			e := p.Changes.Edits[0]
			if e.Op != store.OpRekey || e.ID != "prt_b0000000000bAAAAAAAAAAAAAA" || e.MessageID != msgA2 {
				t.Errorf("edit %s %s on %s", e.Op, e.ID, e.MessageID)
			}
			// The failed attempt is left alone.
			for _, e := range p.Changes.Edits {
				if e.ID == msgU3 || e.ID == msgA3 || e.MessageID == msgA3 || e.MessageID == msgU3 {
					t.Errorf("the failed attempt was edited: %+v", e)
				}
			}
			fixed, err := ApplyInMemory(b.s, p.Changes)
			if err != nil {
				t.Fatal(err)
			}
			again, err := PlanFromError(fixed, orderError, planOpts())
			if err != nil || !again.Empty() {
				t.Errorf("second run plans %v, %v", again, err)
			}
		})
	}
}

func TestPlanStoredErrorSF302(t *testing.T) {
	b := failedResume(t, store.ShapeStorage)
	f := scan.Finding{Code: "SF302", SessionID: sesID, MessageID: msgA3}
	opts := planOpts()
	opts.Check = func(s *store.Session) []scan.Finding {
		return append([]scan.Finding{f}, scan.CheckSession(s, scanOpts())...)
	}
	fs := opts.Check(b.s)
	p, err := Plan(b.s, fs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if p.Empty() {
		t.Fatalf("nothing planned; unfixed %+v notes %v", p.Unfixed, p.Notes)
	}
	mapped := false
	for _, r := range p.Fixed {
		mapped = mapped || r.Finding.Code == "SF302" && r.Finding.MessageID == msgA2
	}
	if !mapped {
		t.Errorf("the repair of SF302 should name the mapped message %s: %+v", msgA2, p.Fixed)
	}
	fixed, _ := ApplyInMemory(b.s, p.Changes)
	again, err := Plan(fixed, opts.Check(fixed), opts)
	if err != nil || !again.Empty() {
		t.Fatalf("second plan: %v\n%s", err, editSummary(again))
	}
	if len(again.Notes) != 1 || !strings.Contains(again.Notes[0], "is no longer the `text` block") || !strings.HasSuffix(again.Notes[0], "nothing to do") {
		t.Errorf("second plan should say the message is repaired: %v", again.Notes)
	}
}

func TestPlanFromErrorChangesNothingWhenUnmappable(t *testing.T) {
	b := failedResume(t, store.ShapeSessions)
	for _, text := range []string{
		"messages.40: all messages must have non-empty content except for the optional final assistant message",
		"messages: text content blocks must be non-empty",
		"something unrelated happened",
		"This model does not support assistant message prefill. The conversation must end with a user message.",
	} {
		p, err := PlanFromError(b.s, text, planOpts())
		if err != nil {
			t.Fatal(err)
		}
		if !p.Empty() || len(p.Unfixed) != 1 || !strings.Contains(p.Unfixed[0].Reason, "nothing changed") {
			t.Errorf("%q: plan %+v", text, p.Unfixed)
		}
	}
}

func TestMappingCountsSessfixExclusionsAsOfTheError(t *testing.T) {
	b := failedResume(t, store.ShapeSessions)
	a2 := b.s.Message(msgA2)
	eds, _ := excludeMessage(b.s, a2, "test", testEnv())
	fixed, _ := ApplyInMemory(b.s, &store.ChangeSet{Edits: eds})
	if id, err := MapProviderIndex(fixed, 5, MapOptions{AsOfError: true, Until: msgA3}); err != nil || id != msgA2 {
		t.Errorf("as of the error, messages.5 = %q, %v; want %s", id, err, msgA2)
	}
	if _, err := MapProviderIndex(fixed, 5, MapOptions{}); err == nil {
		t.Error("now, the excluded message is not sent and messages.5 is past the end")
	}
}

// When error-driven recovery excludes the message an error points at, the
// exclusion says why (OpenCode shows it on the message), and the excluded
// message is never read back as a failed attempt of its own.
func TestErrorDrivenExclusionSaysWhy(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	u := b.msg(msgU1, "user", `{"role":"user","time":{"created":1}}`)
	b.part(u, prt1, `{"type":"text","text":"list files"}`)
	a := b.msg(msgA1, "assistant", `{"role":"assistant","parentID":"`+msgU1+`","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"tool-calls"}`)
	b.part(a, prt2, `{"type":"step-start"}`)
	b.part(a, prt3, `{"type":"reasoning","text":"use ls",`+signedMeta+`}`)
	b.part(a, prt4, `{"type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{},"output":"a b","time":{"start":2,"end":3}}}`)
	// The final tool-loop message: stripping its thinking is refused, so
	// the repair is exclusion.
	const text = "messages.1.content.0: Invalid `signature` in `thinking` block"
	p, err := PlanFromError(b.s, text, planOpts())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Mutation != "excludeMessage" {
		t.Fatalf("plan\n%s\nunfixed %+v", editSummary(p), p.Unfixed)
	}
	fixed, err := ApplyInMemory(b.s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	got := fixed.Message(msgA1).Get("error.data.message").String()
	if want := sent.ExcludedPrefix + "the provider rejected it: invalid_signature at messages.1.content.0"; got != want {
		t.Errorf("exclusion reads %q, want %q", got, want)
	}
	if m := opencode.LastFailedAttempt(fixed); m != nil {
		t.Errorf("sessfix's exclusion of %s is read as a failed attempt", m.ID)
	}
	for _, f := range scan.CheckSession(fixed, scanOpts()) {
		if f.Code == "SF302" {
			t.Errorf("SF302 on sessfix's own exclusion: %s", f.Message)
		}
	}
	if _, err := excludeMessage(b.s, b.s.Message(msgA1), " ", testEnv()); err == nil {
		t.Error("an exclusion without a reason was planned")
	}
}

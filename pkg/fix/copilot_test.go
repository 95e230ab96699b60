package fix

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// copilotSession is a session on GitHub Copilot's Claude: two turns whose
// thinking carries the signature Copilot's Messages API returned
// (metadata.anthropic.signature, as @ai-sdk/anthropic stores it), then an
// attempt that failed with errText (none when ""). The part ids: prt2 and
// prt4 are the two turns' thinking, prt3 and prt5 their text.
func copilotSession(t *testing.T, errText string) *store.Session {
	t.Helper()
	const (
		p7 = "prt_a00000000007AAAAAAAAAAAAAA"
		p8 = "prt_a00000000008AAAAAAAAAAAAAA"
	)
	model := `"providerID":"github-copilot","modelID":"claude-sonnet-4.5"`
	b := newSB(t, store.ShapeSQLite)
	u := b.msg(msgU1, "user", `{"role":"user","time":{"created":1},"model":{`+model+`}}`)
	b.part(u, prt1, `{"type":"text","text":"list files"}`)
	a := b.msg(msgA1, "assistant", `{"role":"assistant","parentID":"`+msgU1+`",`+model+`,"time":{"created":2,"completed":3},"finish":"stop"}`)
	b.part(a, prt2, `{"type":"reasoning","text":"use ls",`+signedMeta+`}`)
	b.part(a, prt3, `{"type":"text","text":"a b"}`)
	u2 := b.msg(msgU2, "user", `{"role":"user","time":{"created":4},"model":{`+model+`}}`)
	b.part(u2, p7, `{"type":"text","text":"and now?"}`)
	a2 := b.msg(msgA2, "assistant", `{"role":"assistant","parentID":"`+msgU2+`",`+model+`,"time":{"created":5,"completed":6},"finish":"stop"}`)
	b.part(a2, prt4, `{"type":"reasoning","text":"read them",`+signedMeta+`}`)
	b.part(a2, prt5, `{"type":"text","text":"done"}`)
	u3 := b.msg(msgU3, "user", `{"role":"user","time":{"created":7},"model":{`+model+`}}`)
	b.part(u3, p8, `{"type":"text","text":"go on"}`)
	if errText != "" {
		b.msg(msgA3, "assistant", `{"role":"assistant","parentID":"`+msgU3+`",`+model+`,"time":{"created":8,"completed":9},"error":{"name":"APIError","data":{"message":`+jsonString(errText)+`,"statusCode":400,"isRetryable":false}}}`)
	}
	return b.complete().s
}

// The texts users report from GitHub Copilot after a switch of Claude
// model or account (OpenCode #11546, copilot-api #63): Copilot names the
// first thinking block its upstream cannot verify, in the Messages API's
// index. The repair removes the signed thinking from that message on: the
// turns before it passed and keep theirs.
func TestCopilotSignatureError(t *testing.T) {
	for _, tc := range []struct {
		text    string
		deleted []string
	}{
		{"messages.3.content.0: Invalid `signature` in `thinking` block", []string{prt4}},
		{"messages.1.content.0: Invalid signature in thinking block", []string{prt2, prt4}},
		// An index past the request: every signed message is repaired.
		{"messages.9.content.0: Invalid `signature` in `thinking` block", []string{prt2, prt4}},
		{`Request Failed: 400 {"message":"messages.3.content.0: Invalid ` + "`signature`" + ` in ` + "`thinking`" + ` block"}`, []string{prt4}},
	} {
		for _, stored := range []bool{true, false} {
			var s *store.Session
			var p *SessionPlan
			var err error
			if stored {
				s = copilotSession(t, tc.text)
				p, err = Plan(s, scan.CheckSession(s, scanOpts()), planOpts())
			} else {
				s = copilotSession(t, "")
				p, err = PlanFromError(s, tc.text, planOpts())
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range p.Changes.Edits {
				if e.Op != store.OpDelete || e.Mutation != "stripThinkingParts" {
					t.Errorf("%q (stored %v): unexpected edit %s %s %s", tc.text, stored, e.Op, e.ID, e.Mutation)
					continue
				}
				got = append(got, e.ID)
			}
			if strings.Join(got, " ") != strings.Join(tc.deleted, " ") {
				t.Errorf("%q (stored %v): deleted %v, want %v\n%s unfixed %+v", tc.text, stored, got, tc.deleted, editSummary(p), p.Unfixed)
			}
			fixed, err := ApplyInMemory(s, p.Changes)
			if err != nil {
				t.Fatal(err)
			}
			if stored {
				f := fs0(scan.CheckSession(fixed, scanOpts()), "SF302")
				if f.Severity != scan.Info {
					t.Errorf("%q: after the repair SF302 is %s %q", tc.text, f.Severity, f.Message)
				}
			}
		}
	}
}

// A signature kept for Copilot's Chat Completions API (OpenCode 1.1:
// metadata.copilot.reasoningOpaque, on the reasoning and the text of the
// turn) is dropped from each part; the parts and their text stay.
func TestCopilotOpaqueDropped(t *testing.T) {
	b := newSB(t, store.ShapeSQLite)
	a := b.msg(msgA1, "assistant", `{"role":"assistant","providerID":"github-copilot","modelID":"claude-sonnet-4.5"}`)
	b.part(a, prt2, `{"type":"reasoning","text":"use ls","metadata":{"copilot":{"reasoningOpaque":"op-1"}}}`)
	b.part(a, prt3, `{"type":"text","text":"a b","metadata":{"copilot":{"reasoningOpaque":"op-1"}}}`)
	if !opencode.DefectCopilotSignature.Shows(b.s, a) {
		t.Fatal("the opaque signature is not seen")
	}
	eds, err := dropCopilotSignatures(b.s, a)
	if err != nil || len(eds) != 2 {
		t.Fatalf("edits %v, %v", eds, err)
	}
	for _, e := range eds {
		if e.Op != store.OpUpdate || strings.Contains(string(e.After), "reasoningOpaque") || !strings.Contains(string(e.After), `"text"`) {
			t.Errorf("edit %s %s: %s", e.Op, e.ID, e.After)
		}
	}
}

package fix

import (
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// foreignEncryptedSession holds two turns whose reasoning keeps encrypted
// content under the provider's namespace, then a failed attempt with the
// provider's error for content issued to another caller.
func foreignEncryptedSession(t *testing.T, provider, model, ns, errText string) *store.Session {
	b := newSB(t, store.ShapeStorage)
	userFields := func(created string) string {
		return `{"role":"user","time":{"created":` + created + `},"agent":"build","model":{"providerID":"` + provider + `","modelID":"` + model + `"}}`
	}
	asst := func(parent, created, extra string) string {
		return `{"role":"assistant","parentID":"` + parent + `","providerID":"` + provider + `","modelID":"` + model +
			`","time":{"created":` + created + `,"completed":` + created + `5}` + extra + `}`
	}
	reasoning := func(blob string) string {
		return `{"type":"reasoning","text":"plan","time":{"start":1,"end":2},"metadata":{"` + ns + `":{"reasoningEncryptedContent":"` + blob + `"}}}`
	}
	u1 := b.msg(msgU1, "user", userFields("1763726400000"))
	b.part(u1, prt1, `{"type":"text","text":"first"}`)
	a1 := b.msg(msgA1, "assistant", asst(msgU1, "1763726401000", `,"finish":"stop"`))
	b.part(a1, prt2, reasoning("blob-one"))
	b.part(a1, prt3, `{"type":"text","text":"one"}`)
	u2 := b.msg(msgU2, "user", userFields("1763726402000"))
	b.part(u2, prt4, `{"type":"text","text":"second"}`)
	a2 := b.msg(msgA2, "assistant", asst(msgU2, "1763726403000", `,"finish":"stop"`))
	b.part(a2, prt5, reasoning("blob-two"))
	b.part(a2, prt6, `{"type":"text","text":"two"}`)
	const (
		msgU3 = "msg_a00000000005AAAAAAAAAAAAAA"
		msgA3 = "msg_a00000000006AAAAAAAAAAAAAA"
		prt7  = "prt_a00000000007AAAAAAAAAAAAAA"
	)
	u3 := b.msg(msgU3, "user", userFields("1763726404000"))
	b.part(u3, prt7, `{"type":"text","text":"third"}`)
	b.msg(msgA3, "assistant", asst(msgU3, "1763726405000", `,"error":{"name":"APIError","data":{"message":`+jsonString(errText)+`,"isRetryable":false}}`))
	return b.complete().s
}

// Encrypted reasoning issued to another caller is refused on every turn:
// the stored error (xAI's, OpenCode Zen's, OpenAI's) strips the encrypted
// content from every reasoning part before the attempt, in one plan.
func TestForeignEncryptedReasoningStrippedSessionWide(t *testing.T) {
	cases := []struct{ name, provider, model, ns, text string }{
		{"xai", "xai", "grok-4", "xai", "Could not decrypt the provided encrypted_content. Ensure the value is the unmodified encrypted_content from a previous response."},
		{"zen", "opencode", "gpt-5.2-codex", "openai", "Error from provider (Console): Upstream request failed: [invalid_request_error] reasoning `encrypted_content` was not issued to this caller"},
		{"openai", "openai", "gpt-5.2", "openai", "The encrypted content for item rs_0a1b2c could not be verified."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := foreignEncryptedSession(t, c.provider, c.model, c.ns, c.text)
			f := fs0(scan.CheckSession(s, scanOpts()), "SF302")
			if f.Severity != scan.Error || f.ErrorType != string(opencode.ErrorEncryptedContentInvalid) {
				t.Fatalf("SF302 should classify the stored error as encrypted_content_invalid: %+v", f)
			}
			fixed := fixAndRecheck(t, s, "drop-encrypted")
			for _, id := range []string{msgA1, msgA2} {
				for _, p := range fixed.Message(id).Parts {
					if opencode.HasEncryptedReasoning(p) {
						t.Errorf("message %s part %s still carries encrypted content", id, p.ID)
					}
					if p.Type == "reasoning" && p.Get("text").String() != "plan" {
						t.Errorf("the reasoning text must stay: %s", p.Raw)
					}
				}
			}
			if g := fs0(scan.CheckSession(fixed, scanOpts()), "SF302"); g.Severity != scan.Info {
				t.Errorf("SF302 after the repair: %s %q", g.Severity, g.Message)
			}
			if c.provider != "openai" {
				return
			}
			// What OpenCode then sends (Responses, store false): the reasoning
			// is left out, not sent without its content.
			if n := reasoningItems(s); n != 2 {
				t.Fatalf("before the repair %d reasoning items are sent, want 2", n)
			}
			if n := reasoningItems(fixed); n != 0 {
				t.Errorf("after the repair %d reasoning items are still sent", n)
			}
		})
	}
}

func reasoningItems(s *store.Session) int {
	n := 0
	for _, m := range sent.Build(s, sent.Options{NextPrompt: true}).Messages {
		if m.Role == "reasoning" {
			n++
		}
	}
	return n
}

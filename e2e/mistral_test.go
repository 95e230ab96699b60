//go:build acceptance

package e2e

import (
	"slices"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
	"github.com/sessfix/sessfix/pkg/sent"
)

// TestMistralCallIDs is what real OpenCode 1.18.33 sends a Mistral model
// of an OpenAI-compatible provider after Anthropic's tool calls, and what
// sessfix predicts and repairs (OBSERVED.md, "Mistral: tool call ids"):
// for devstral OpenCode rewrites the stored callIDs into Mistral's form
// and the request is accepted; for magistral it sends them as they are
// and Mistral refuses (OpenCode stores "Bad Request: " and Mistral's
// message); `sessfix scan` then reports SF165 with the mock's
// exact text, `sessfix fix --yes` re-keys the calls, and the next request
// carries the new ids, each call's result with its call's.
func TestMistralCallIDs(t *testing.T) {
	parallel(t)
	acquire(t)
	fc := &familyCase{store: "opencode-1.18.33", opts: opencodetest.Options{Providers: []string{"mistralcompat"}}}
	c := newFamRun(t, fc)
	var stored []string
	for _, m := range c.msgs {
		for _, p := range m.Parts {
			if p.Type() == "tool" {
				id, _ := p.Data["callID"].(string)
				stored = append(stored, id)
			}
		}
	}
	if len(stored) == 0 || sent.ValidMistralCallID(stored[0]) {
		t.Fatalf("the recorded session's call ids %v are not another provider's", stored)
	}
	lastIDs := func() []string {
		t.Helper()
		reqs := c.e.OpenAI.AgentRequests()
		if len(reqs) == 0 {
			t.Fatal("no request reached the openai-compatible mock")
		}
		var ids []string
		for _, m := range reqs[len(reqs)-1].Parsed.Completions.Messages {
			for _, tc := range m.ToolCalls {
				ids = append(ids, tc.ID)
			}
			if m.Role == "tool" && !slices.Contains(ids, m.ToolCallID) {
				t.Errorf("tool_call_id %s answers no call sent before it", m.ToolCallID)
			}
		}
		return ids
	}

	// devstral: OpenCode rewrites the ids (letters and digits, the first
	// nine, zero-padded), so Mistral accepts them.
	if v := c.resume("continue", []string{"--model", opencodetest.DevstralModel}); v.State != "accepted" {
		t.Fatalf("devstral resume: %s", v)
	}
	for i, id := range lastIDs()[:len(stored)] {
		if want := sent.MistralCallID(stored[i]); id != want {
			t.Errorf("devstral got call id %s for stored %s; want opencode's rewrite %s", id, stored[i], want)
		}
	}
	c.msgs = c.d.session(c.session)
	if fs, res := scanStore(t, c.e, c.session); slices.ContainsFunc(fs, func(f finding) bool { return f.Code == "SF165" }) {
		t.Errorf("SF165 on a session resumed on devstral, whose ids opencode rewrites\n%s", res)
	}

	// magistral: OpenCode sends the stored ids as they are.
	before := c.resume("continue", []string{"--model", opencodetest.MagistralModel})
	want := mockopenai.MsgMistralCallID(stored[0])
	if before.State != "rejected" || before.Error != want {
		t.Fatalf("magistral resume: %s; want rejected with %q", before, want)
	}
	if got := lastIDs()[:len(stored)]; !slices.Equal(got, stored) {
		t.Errorf("magistral got call ids %v; want the stored ones %v", got, stored)
	}
	// Mistral's flat error body is not the OpenAI-compatible package's
	// error shape: OpenCode stores the status text, then the body's message.
	if got := c.storedError(); got != "Bad Request: "+want {
		t.Errorf("opencode stored %q for the mock's %q", got, want)
	}
	fs, res := scanStore(t, c.e, c.session)
	i := slices.IndexFunc(fs, func(f finding) bool { return f.Code == "SF165" })
	if i < 0 || fs[i].ProviderError != want || fs[i].Severity != "error" || fs[i].Fix != "rekeyCallIDs" {
		t.Fatalf("no SF165 predicting %q\n%s", want, res)
	}

	if res := sessfix(t, c.e, "fix", "--yes", "--session", c.session); res.ExitCode != 0 {
		t.Fatalf("fix\n%s", res)
	}
	if v := c.resume("continue", []string{"--model", opencodetest.MagistralModel}); v.State != "accepted" {
		t.Fatalf("after the fix the magistral resume: %s", v)
	}
	var rekeyed []string
	for _, m := range c.d.session(c.session) {
		for _, p := range m.Parts {
			if p.Type() == "tool" {
				id, _ := p.Data["callID"].(string)
				rekeyed = append(rekeyed, id)
			}
		}
	}
	sentIDs := lastIDs()
	for i, id := range rekeyed[:len(stored)] {
		if !sent.ValidMistralCallID(id) || id == stored[i] || i >= len(sentIDs) || sentIDs[i] != id {
			t.Errorf("call %d: stored %s, re-keyed %s, sent %v", i, stored[i], id, sentIDs)
		}
	}
	t.Logf("stored call ids %v; devstral got opencode's rewrite; magistral got them as they are and refused with %q; re-keyed to %v", stored, want, rekeyed[:len(stored)])
}

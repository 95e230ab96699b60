package opencode

import (
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

func TestPartClasses(t *testing.T) {
	cases := []struct {
		body                    string
		content, thinking, meta bool
		signed                  bool
	}{
		{`{"type":"text","text":"hi"}`, true, false, false, false},
		{`{"type":"text","text":" \n"}`, false, false, false, false},
		{`{"type":"text","text":""}`, false, false, false, false},
		{`{"type":"text","text":"hi","ignored":true}`, false, false, false, false},
		{`{"type":"tool","state":{"status":"completed"}}`, true, false, false, false},
		{`{"type":"compaction","auto":true}`, true, false, false, false},
		{`{"type":"tool_use","id":"toolu_1"}`, true, false, false, false},
		{`{"type":"step-start"}`, false, false, true, false},
		{`{"type":"retry","attempt":1}`, false, false, true, false},
		{`{"type":"reasoning","text":"","metadata":{"anthropic":{"signature":"Eq1"}}}`, false, true, false, true},
		{`{"type":"reasoning","text":"x","metadata":{"anthropic":{"redactedData":"Em1"}}}`, false, true, false, true},
		{`{"type":"reasoning","text":"x","metadata":{"bedrock":{"signature":"Eq1"}}}`, false, true, false, true},
		{`{"type":"reasoning","text":"x"}`, false, true, false, false},
		{`{"type":"reasoning","text":"x","metadata":{"anthropic":{"signature":""}}}`, false, true, false, false},
		{`{"type":"thinking","thinking":"x","signature":"Eq1"}`, false, true, false, true},
		{`{"type":"redacted_thinking","data":"Em1"}`, false, true, false, true},
	}
	for _, c := range cases {
		m := testMessage("m", "assistant", `{"role":"assistant"}`, c.body)
		p := m.Parts[0]
		if IsContentPart(p) != c.content || IsThinkingPart(p) != c.thinking || IsMetaPart(p) != c.meta || IsSigned(p) != c.signed {
			t.Errorf("%s: content=%v thinking=%v meta=%v signed=%v", c.body, IsContentPart(p), IsThinkingPart(p), IsMetaPart(p), IsSigned(p))
		}
	}
}

func TestFirstNonMeta(t *testing.T) {
	m := testMessage("m", "assistant", `{"role":"assistant"}`, `{"type":"step-start"}`, `{"type":"reasoning","text":"a"}`, `{"type":"text","text":"b"}`)
	if p := FirstNonMeta(m); p == nil || p.Type != "reasoning" {
		t.Fatalf("FirstNonMeta = %v, want the reasoning part", p)
	}
	if p := FirstNonMeta(testMessage("m", "assistant", `{}`, `{"type":"step-start"}`)); p != nil {
		t.Fatalf("FirstNonMeta of a meta-only message = %v", p.Type)
	}
}

func TestSkippedByOpenCode(t *testing.T) {
	aborted := `{"role":"assistant","error":{"name":"MessageAbortedError"}}`
	cases := []struct {
		m    *store.Message
		want bool
	}{
		{testMessage("m", "user", `{"role":"user"}`), true},
		{testMessage("m", "assistant", `{"role":"assistant"}`, `{"type":"step-start"}`), false},
		{testMessage("m", "assistant", `{"role":"assistant","error":{"name":"APIError"}}`, `{"type":"text","text":"x"}`), true},
		{testMessage("m", "assistant", aborted, `{"type":"step-start"}`, `{"type":"reasoning","text":"x"}`), true},
		{testMessage("m", "assistant", aborted, `{"type":"step-start"}`, `{"type":"text","text":""}`), false},
	}
	for i, c := range cases {
		if got := SkippedByOpenCode(c.m); got != c.want {
			t.Errorf("case %d: SkippedByOpenCode = %v, want %v", i, got, c.want)
		}
	}
}

func TestHistoryAfterCompaction(t *testing.T) {
	old := testMessage("m1", "user", `{"role":"user"}`, `{"type":"text","text":"old"}`)
	oldA := testMessage("m2", "assistant", `{"role":"assistant","parentID":"m1"}`, `{"type":"text","text":"old answer"}`)
	comp := testMessage("m3", "user", `{"role":"user"}`, `{"type":"compaction","auto":true}`)
	sum := testMessage("m4", "assistant", `{"role":"assistant","parentID":"m3","summary":true,"finish":"stop"}`, `{"type":"text","text":"summary"}`)
	next := testMessage("m5", "user", `{"role":"user"}`, `{"type":"text","text":"new"}`)
	s := &store.Session{Messages: []*store.Message{old, oldA, comp, sum, next}}
	h := History(s)
	for id, want := range map[string]bool{"m1": false, "m2": false, "m3": true, "m4": true, "m5": true} {
		if h[id] != want {
			t.Errorf("History[%s] = %v, want %v", id, h[id], want)
		}
	}
	// An unfinished summary does not complete the compaction.
	unfinished := testMessage("m4", "assistant", `{"role":"assistant","parentID":"m3","summary":true}`, `{"type":"text","text":"sum"}`)
	s.Messages[3] = unfinished
	if !History(s)["m1"] {
		t.Error("an unfinished compaction hid earlier messages")
	}
	// tail_start_id keeps messages from the tail on.
	comp2 := testMessage("m3", "user", `{"role":"user"}`, `{"type":"compaction","auto":true,"tail_start_id":"m2"}`)
	s.Messages[2], s.Messages[3] = comp2, sum
	h = History(s)
	if h["m1"] || !h["m2"] {
		t.Errorf("tail_start_id: History = %v, want m2 kept and m1 dropped", h)
	}
	// OpenCode 1.1 (a storage/ tree) keeps no tail: the compaction cuts there.
	s.Store.Shape = store.ShapeStorage
	h = History(s)
	if h["m1"] || h["m2"] || !h["m3"] {
		t.Errorf("1.1 compaction: History = %v, want it to start at m3", h)
	}
}

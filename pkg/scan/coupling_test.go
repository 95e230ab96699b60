package scan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestCouplingContract holds every rule to Coupling's contract: on every
// rule fixture, in every shape, each change to one message's parts that
// leaves the coupling the same (a part removed or re-keyed, a text blanked or filled, a
// thinking part unsigned or signed, a tool left running or finished) leaves
// every finding outside the message's group as it was.
func TestCouplingContract(t *testing.T) {
	changes, holds := 0, 0
	for _, c := range storetest.Cases(t, fixtureRoot) {
		for _, shape := range c.Shapes {
			t.Run(c.Name+"/"+string(shape), func(t *testing.T) {
				st := c.Open(t, shape, t.TempDir())
				refs, err := st.List(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, ref := range refs {
					s, err := st.Load(context.Background(), ref)
					if err != nil {
						continue // SF201's business
					}
					now := s.LastModified().Add(c.Idle)
					opts := &Options{Now: func() time.Time { return now }}
					before, coupling := CheckSessionCoupling(s, opts)
					coup := coupling()
					for mi, m := range s.Messages {
						for _, changed := range partChanges(t, s, mi) {
							changes++
							after, c2 := CheckSessionCoupling(changed, opts)
							if !c2().Same(coup) {
								continue
							}
							holds++
							group := coup.Group(m.ID)
							outside := func(fs []Finding) []string {
								var out []string
								for _, f := range fs {
									if f.MessageID == "" && f.PartID != "" && slices.ContainsFunc(m.Parts, func(p *store.Part) bool { return p.ID == f.PartID }) {
										continue
									}
									if f.MessageID == "" || coup.Group(f.MessageID) != group {
										out = append(out, fmt.Sprintf("%s %s %s %s", f.Code, f.MessageID, f.PartID, f.Location))
									}
								}
								slices.Sort(out)
								return out
							}
							if a, b := outside(before), outside(after); !slices.Equal(a, b) {
								t.Errorf("session %s, a change to message %s with the same coupling changed findings outside its group:\nbefore %v\nafter  %v",
									s.ID, m.ID, a, b)
							}
						}
					}
				}
			})
		}
	}
	// The contract is about changes that keep the coupling: most must.
	if holds < changes/2 {
		t.Errorf("only %d of %d changes kept the coupling", holds, changes)
	}
	t.Logf("%d changes, %d with the same coupling", changes, holds)
}

// partChanges returns copies of s, each with one change to a part of
// message mi.
func partChanges(t *testing.T, s *store.Session, mi int) []*store.Session {
	m := s.Messages[mi]
	var out []*store.Session
	with := func(parts []*store.Part) {
		c := *s
		c.Messages = slices.Clone(s.Messages)
		cm := *m
		cm.Parts = parts
		c.Messages[mi] = &cm
		out = append(out, &c)
	}
	set := func(j int, path string, v any) {
		p := m.Parts[j]
		raw, err := sjson.SetBytes(slices.Clone(p.Raw), path, v)
		if err != nil {
			t.Fatal(err)
		}
		rec := p.Record
		rec.Raw = raw
		np, err := store.NewPart(rec, m.ID, p.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		parts := slices.Clone(m.Parts)
		parts[j] = np
		with(parts)
	}
	for j, p := range m.Parts {
		with(slices.Delete(slices.Clone(m.Parts), j, j+1))
		// Re-keyed (SF211's repair): another message may share its id.
		rec := p.Record
		rec.ID = p.ID[:len(p.ID)-1] + map[bool]string{true: "Y", false: "Z"}[strings.HasSuffix(p.ID, "Z")]
		if raw, err := sjson.SetBytes(slices.Clone(p.Raw), "id", rec.ID); err == nil && gjsonHas(p.Raw, "id") {
			rec.Raw = raw
		}
		np, err := store.NewPart(rec, m.ID, p.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		parts := slices.Clone(m.Parts)
		parts[j] = np
		with(parts)
		switch p.Type {
		case "text":
			set(j, "text", "")
			set(j, "text", strings.TrimSpace(opencode.PartText(p))+" more")
		case "reasoning":
			set(j, "metadata", map[string]any{})
			set(j, "metadata", map[string]any{"anthropic": map[string]any{"signature": "sig"}})
			set(j, "text", "")
		case "tool":
			set(j, "state.status", "running")
			set(j, "state.status", "completed")
		}
	}
	return out
}

// TestCouplingGroups: stored messages that one provider message is built
// from are in one group (a step's tool results and the user's next
// message; assistant messages in a row); the others are alone.
func TestCouplingGroups(t *testing.T) {
	s := &store.Session{Store: store.Info{Shape: store.ShapeSQLite}, ID: "ses_1"}
	msg := func(id, role, body string, parts ...string) {
		m, err := store.NewMessage(store.Record{ID: id, Raw: []byte(body)}, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for i, pb := range parts {
			p, err := store.NewPart(store.Record{ID: fmt.Sprintf("prt_%s_%d", id, i), Raw: []byte(pb)}, id, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			m.Parts = append(m.Parts, p)
		}
		s.Messages = append(s.Messages, m)
	}
	const asst = `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":1,"completed":2},"finish":"stop"}`
	const tool = `{"type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{},"output":"x","time":{"start":1,"end":2}}}`
	msg("msg_1", "user", `{"role":"user","time":{"created":1}}`, `{"type":"text","text":"hi"}`)
	msg("msg_2", "assistant", asst, `{"type":"step-start"}`, tool)
	msg("msg_3", "user", `{"role":"user","time":{"created":1}}`, `{"type":"text","text":"and?"}`)
	msg("msg_4", "assistant", asst, `{"type":"step-start"}`, `{"type":"text","text":"one"}`)
	msg("msg_5", "assistant", asst, `{"type":"step-start"}`, `{"type":"text","text":"two"}`)
	msg("msg_6", "user", `{"role":"user","time":{"created":1},"model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`, `{"type":"text","text":"ok"}`)
	k := SessionCoupling(s, nil)
	same := func(a, b string) bool { return k.Group(a) == k.Group(b) }
	if !same("msg_2", "msg_3") || !same("msg_4", "msg_5") {
		t.Errorf("want msg_2 with msg_3 and msg_4 with msg_5: groups %v", k.group)
	}
	if same("msg_1", "msg_2") || same("msg_3", "msg_4") || same("msg_5", "msg_6") {
		t.Errorf("messages in separate provider messages grouped: %v", k.group)
	}
	if !k.Same(SessionCoupling(s, nil)) {
		t.Error("a session's coupling differs from itself")
	}
	// A fact changes: an assistant message ends with an error, and
	// OpenCode stops sending it.
	m, err := store.NewMessage(store.Record{ID: "msg_5", Raw: []byte(strings.Replace(asst, `"finish"`, `"error":{"name":"APIError"},"finish"`, 1))}, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	m.Parts = s.Messages[4].Parts
	s.Messages[4] = m
	if k.Same(SessionCoupling(s, nil)) {
		t.Error("the coupling did not change with the messages sent")
	}
	// Another model's only reasoning turns synthetic: that model no longer
	// thinks (ThinkingEnabled), whatever the current model does.
	const other = `{"role":"assistant","providerID":"openai","modelID":"gpt-5","time":{"created":1,"completed":2},"finish":"stop"}`
	msg("msg_7", "assistant", other, `{"type":"step-start"}`, `{"type":"reasoning","text":"hm"}`, `{"type":"text","text":"x"}`)
	k = SessionCoupling(s, nil)
	p, err := store.NewPart(store.Record{ID: "prt_msg_7_1", Raw: []byte(`{"type":"reasoning","text":"hm","synthetic":true}`)}, "msg_7", s.ID)
	if err != nil {
		t.Fatal(err)
	}
	s.Messages[6].Parts[1] = p
	if k.Same(SessionCoupling(s, nil)) {
		t.Error("the coupling did not change with the models that think")
	}
}

func gjsonHas(raw []byte, key string) bool { return gjson.GetBytes(raw, key).Exists() }

package fix

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

const (
	magistralUser = `{"role":"user","time":{"created":1763726402000},"agent":"build","model":{"providerID":"mistralcompat","modelID":"magistral-medium-latest"}}`
	toolu1        = "toolu_015A28zpZRXSYnqFEFmRyDA4Ws"
	toolu2        = "toolu_01BBBBzpZRXSYnqFEFmRyDA4Ws"
)

// foreignIDSession is an Anthropic turn with two tool calls (the second
// shares the first's id when shared is set), then a user message on
// magistral; failed adds magistral's failed attempt with that error text.
func foreignIDSession(t *testing.T, shape store.Shape, shared bool, failed string) *store.Session {
	b := newSB(t, shape)
	u := b.msg(msgU1, "user", `{"role":"user","time":{"created":1763726399000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`)
	b.part(u, prt1, `{"type":"text","text":"look around"}`)
	a := b.msg(msgA1, "assistant", `{"role":"assistant","parentID":"`+msgU1+`","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":1763726400000,"completed":1763726401000},"finish":"stop"}`)
	b.part(a, prt2, `{"type":"step-start"}`)
	second := toolu2
	if shared {
		second = toolu1
	}
	for i, id := range []string{toolu1, second} {
		b.part(a, []string{prt3, prt4}[i], `{"type":"tool","callID":"`+id+`","tool":"bash","state":{"status":"completed","input":{},"output":"ok","time":{"start":1763726400100,"end":1763726400200}}}`)
	}
	b.part(a, prt5, `{"type":"text","text":"done"}`)
	u2 := b.msg(msgU2, "user", magistralUser)
	b.part(u2, prt6, `{"type":"text","text":"continue"}`)
	if failed != "" {
		b.msg(msgA2, "assistant", `{"role":"assistant","parentID":"`+msgU2+`","providerID":"mistralcompat","modelID":"magistral-medium-latest","time":{"created":1763726403000,"completed":1763726403100},"error":{"name":"APIError","data":{"message":`+jsonString(failed)+`,"isRetryable":false}}}`)
	}
	return b.complete().s
}

func callIDsOf(s *store.Session) []string {
	var out []string
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.Type == "tool" {
				out = append(out, p.Get("callID").String())
			}
		}
	}
	return out
}

// SF165's repair: each foreign id becomes nine letters or digits, derived
// from the old id (the same on every run), distinct ids stay distinct and
// a shared id stays shared; nothing but callID changes, in the database's
// compact bodies and the JSON files' indented ones.
func TestRekeyCallIDs(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage} {
		t.Run(string(shape), func(t *testing.T) { testRekeyCallIDs(t, shape) })
	}
}

func testRekeyCallIDs(t *testing.T, shape store.Shape) {
	s := foreignIDSession(t, shape, false, "")
	if f := fs0(scan.CheckSession(s, scanOpts()), scan.SF165); f.Code == "" || f.Fix != "rekeyCallIDs" {
		t.Fatalf("SF165 should report the foreign ids: %v", codes(scan.CheckSession(s, scanOpts())))
	}
	fixed := fixAndRecheck(t, s, "rekey-call-ids")
	ids := callIDsOf(fixed)
	if len(ids) != 2 || ids[0] == ids[1] || !sent.ValidMistralCallID(ids[0]) || !sent.ValidMistralCallID(ids[1]) {
		t.Fatalf("re-keyed ids %v", ids)
	}
	if again := callIDsOf(fixAndRecheck(t, foreignIDSession(t, shape, false, ""), "rekey-call-ids")); again[0] != ids[0] || again[1] != ids[1] {
		t.Errorf("not deterministic: %v then %v", ids, again)
	}
	p, err := Plan(s, scan.CheckSession(s, scanOpts()), planOpts())
	if err != nil {
		t.Fatal(err)
	}
	for _, ed := range p.Changes.Edits {
		if ed.Mutation != "rekeyCallIDs" || ed.Op != store.OpUpdate {
			t.Errorf("unexpected edit %s %s", ed.Mutation, ed.ID)
		}
		from, to := gjson.GetBytes(ed.Before, "callID").String(), gjson.GetBytes(ed.After, "callID").String()
		if want := strings.Replace(string(ed.Before), `"`+from+`"`, `"`+to+`"`, 1); want != string(ed.After) || !sent.ValidMistralCallID(to) {
			t.Errorf("the edit changes more than callID:\n%s\n%s", ed.Before, ed.After)
		}
	}

	shared := callIDsOf(fixAndRecheck(t, foreignIDSession(t, shape, true, ""), "rekey-call-ids"))
	if shared[0] != shared[1] || shared[0] != ids[0] {
		t.Errorf("a shared id should stay shared and map as before: %v (first alone: %s)", shared, ids[0])
	}
}

// An id the hash gives that another call already has is not reused.
func TestMistralCallIDsAreUniqueInTheSession(t *testing.T) {
	s := foreignIDSession(t, store.ShapeSQLite, false, "")
	taken := opencode.MistralCallIDs(s)[toolu1]
	// A later call of the session already has the id toolu1 hashes to.
	b := newSB(t, store.ShapeSQLite)
	u := b.msg(msgU1, "user", `{"role":"user","time":{"created":1},"model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`)
	b.part(u, prt1, `{"type":"text","text":"go"}`)
	a := b.msg(msgA1, "assistant", `{"role":"assistant","parentID":"`+msgU1+`","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"stop"}`)
	b.part(a, prt2, `{"type":"tool","callID":"`+toolu1+`","tool":"bash","state":{"status":"completed","input":{},"output":"ok","time":{"start":2,"end":3}}}`)
	b.part(a, prt3, `{"type":"tool","callID":"`+taken+`","tool":"bash","state":{"status":"completed","input":{},"output":"ok","time":{"start":2,"end":3}}}`)
	got := opencode.MistralCallIDs(b.complete().s)
	if id := got[toolu1]; id == taken || !sent.ValidMistralCallID(id) || len(got) != 1 {
		t.Errorf("toolu1 → %q with %q taken (%v)", id, taken, got)
	}
}

// Recovery from the error OpenCode 1.18.33 stored (OBSERVED.md, "Mistral:
// tool call ids"): SF302 classifies it, maps the id to its tool part and
// re-keys every foreign id before the failed attempt; the stored error then
// reads as repaired.
func TestStoredMistralCallIDError(t *testing.T) {
	text := "Bad Request: Tool call id was " + toolu1 + " but must be a-z, A-Z, 0-9, with a length of 9."
	s := foreignIDSession(t, store.ShapeSQLite, false, text)
	r := opencode.ReadError(s, text, s.Message(msgA2))
	if r.Type != opencode.ErrorToolCallIDInvalid || r.Defect != opencode.DefectForeignCallIDs || r.TargetID != msgA1 || r.PartID != prt3 {
		t.Fatalf("read %s %v → %s %s (%v)", r.Type, r.Defect, r.TargetID, r.PartID, r.MapErr)
	}
	f := fs0(scan.CheckSession(s, scanOpts()), "SF302")
	if f.Severity != scan.Error || f.ErrorType != string(opencode.ErrorToolCallIDInvalid) || f.Fix == "" {
		t.Fatalf("SF302: %+v", f)
	}
	p, err := Plan(s, []scan.Finding{f}, planOpts())
	if err != nil || len(p.Fixed) != 1 || p.Fixed[0].Strategy != "rekey-call-ids" || len(p.Changes.Edits) != 2 {
		t.Fatalf("plan from the stored error: %v fixed %+v unfixed %+v", err, p.Fixed, p.Unfixed)
	}
	fixed := fixAndRecheck(t, s, "rekey-call-ids")
	if g := fs0(scan.CheckSession(fixed, scanOpts()), "SF302"); g.Severity != scan.Info {
		t.Errorf("SF302 after the repair: %s %q", g.Severity, g.Message)
	}
	for _, id := range callIDsOf(fixed) {
		if !sent.ValidMistralCallID(id) {
			t.Errorf("id %s left", id)
		}
	}
}

// toolUseIDSession is a Kimi turn with a tool call per id, then a turn of
// Claude without thinking (so thinking is off), then a user message on
// Claude; failed adds Claude's failed attempt with that error text.
func toolUseIDSession(t *testing.T, shape store.Shape, ids []string, failed string) *store.Session {
	const (
		msgU3 = "msg_a00000000005AAAAAAAAAAAAAA"
		msgA3 = "msg_a00000000006AAAAAAAAAAAAAA"
		prt7  = "prt_a00000000007AAAAAAAAAAAAAA"
		prt8  = "prt_a00000000008AAAAAAAAAAAAAA"
		prt9  = "prt_a00000000009AAAAAAAAAAAAAA"
	)
	user := func(created string) string {
		return `{"role":"user","time":{"created":` + created + `},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`
	}
	asst := func(parent, provider, model, created, rest string) string {
		return `{"role":"assistant","parentID":"` + parent + `","providerID":"` + provider + `","modelID":"` + model + `","time":{"created":` + created + `,"completed":` + created + `5}` + rest + `}`
	}
	b := newSB(t, shape)
	u := b.msg(msgU1, "user", user("1763726399000"))
	b.part(u, prt1, `{"type":"text","text":"look around"}`)
	a := b.msg(msgA1, "assistant", asst(msgU1, "kimi", "kimi-k2", "1763726400000", `,"finish":"stop"`))
	b.part(a, prt2, `{"type":"step-start"}`)
	for i, id := range ids {
		b.part(a, []string{prt3, prt4}[i], `{"type":"tool","callID":"`+id+`","tool":"bash","state":{"status":"completed","input":{},"output":"ok","time":{"start":1763726400100,"end":1763726400200}}}`)
	}
	b.part(a, prt5, `{"type":"text","text":"done"}`)
	u2 := b.msg(msgU2, "user", user("1763726402000"))
	b.part(u2, prt6, `{"type":"text","text":"and now?"}`)
	a2 := b.msg(msgA2, "assistant", asst(msgU2, "anthropic", "claude-sonnet-4-5", "1763726403000", `,"finish":"stop"`))
	b.part(a2, prt7, `{"type":"step-start"}`)
	b.part(a2, prt8, `{"type":"text","text":"all good"}`)
	u3 := b.msg(msgU3, "user", user("1763726404000"))
	b.part(u3, prt9, `{"type":"text","text":"continue"}`)
	if failed != "" {
		b.msg(msgA3, "assistant", asst(msgU3, "anthropic", "claude-sonnet-4-5", "1763726405000", `,"error":{"name":"APIError","data":{"message":`+jsonString(failed)+`,"isRetryable":false}}`))
	}
	return b.complete().s
}

// SF166's repair after a switch to Claude (anomalyco/opencode#1279): a
// call with no id and a call whose id an earlier one has get ids of their
// own; the first call keeps its id, nothing but callID changes, and the
// error stored after the failed attempt plans the same repair.
func TestRekeyToolUseIDs(t *testing.T) {
	for _, c := range []struct {
		name, stored string
		ids          []string
	}{
		{"empty ids", "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", []string{"", ""}},
		{"an id twice", "messages.1.content.1: `tool_use` ids must be unique", []string{"functions.bash:0", "functions.bash:0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage} {
				s := toolUseIDSession(t, shape, c.ids, "")
				if f := fs0(scan.CheckSession(s, scanOpts()), scan.SF166); f.Severity != scan.Error || f.Fix != "rekeyToolUseIDs" {
					t.Fatalf("%s: SF166 should report the ids: %+v", shape, f)
				}
				p, err := Plan(s, scan.CheckSession(s, scanOpts()), planOpts())
				if err != nil {
					t.Fatal(err)
				}
				for _, ed := range p.Changes.Edits {
					from, to := gjson.GetBytes(ed.Before, "callID"), gjson.GetBytes(ed.After, "callID").String()
					want := string(ed.Before[:from.Index]) + `"` + to + `"` + string(ed.Before[from.Index+len(from.Raw):])
					if ed.Mutation != "rekeyToolUseIDs" || want != string(ed.After) {
						t.Errorf("%s: the edit changes more than callID:\n%s\n%s", shape, ed.Before, ed.After)
					}
				}
				ids := callIDsOf(fixAndRecheck(t, s, "rekey-tool-use-ids"))
				if len(ids) != 2 || ids[0] == ids[1] || ids[1] == "" || sent.ClaudeToolID(ids[1]) != ids[1] ||
					(c.ids[0] != "" && ids[0] != c.ids[0]) {
					t.Errorf("%s: ids %q → %q", shape, c.ids, ids)
				}
			}

			s := toolUseIDSession(t, store.ShapeSQLite, c.ids, c.stored)
			f := fs0(scan.CheckSession(s, scanOpts()), scan.SF302)
			if f.Fix != "rekeyToolUseIDs" || f.ErrorType != "tool_use_id_invalid" {
				t.Fatalf("SF302 should name rekeyToolUseIDs: %+v", f)
			}
			p, err := Plan(s, []scan.Finding{f}, planOpts())
			if err != nil || len(p.Changes.Edits) == 0 {
				t.Fatalf("plan from the stored error: %v %+v", err, p)
			}
			fixed, err := ApplyInMemory(s, p.Changes)
			if err != nil {
				t.Fatal(err)
			}
			if g := fs0(scan.CheckSession(fixed, scanOpts()), scan.SF302); g.Severity != scan.Info {
				t.Errorf("SF302 after the repair: %s %q", g.Severity, g.Message)
			}
		})
	}
}

package fix

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// A kill at text start on OpenCode 1.18 leaves this: step-start, signed
// reasoning, and a text part "".
func killedAtTextStart(t *testing.T, shape store.Shape) (*sb, *store.Message) {
	b := newSB(t, shape)
	u := b.msg(msgU1, "user", `{"role":"user","time":{"created":1763726399000}}`)
	b.part(u, prt1, `{"type":"text","text":"hi"}`)
	a := b.msg(msgA1, "assistant", asstFields)
	b.part(a, prt2, `{"type":"step-start"}`)
	b.part(a, prt3, `{"type":"reasoning","text":"let me think","time":{"start":1},`+signedMeta+`}`)
	b.part(a, prt4, `{"type":"text","text":"","time":{"start":2},"x-keep":{"a":[1, 2]}}`)
	return b, a
}

func TestReplaceEmptyTextPartsGolden(t *testing.T) {
	b, a := killedAtTextStart(t, store.ShapeSessions)
	ed := onlyEdit(t)(replaceEmptyTextParts(b.s, a, DefaultPlaceholder))
	want := `{
  "id": "prt_a00000000004AAAAAAAAAAAAAA",
  "sessionID": "ses_7f0000000000AAAAAAAAAAAAAA",
  "messageID": "msg_a00000000002AAAAAAAAAAAAAA",
  "type": "text",
  "text": "[user interrupted]",
  "time": {
    "start": 2
  },
  "x-keep": {
    "a": [
      1,
      2
    ]
  },
  "synthetic": true
}`
	if ed.Op != store.OpUpdate || ed.ID != prt4 || ed.Mutation != "replaceEmptyTextParts" {
		t.Errorf("edit = %s %s %s", ed.Op, ed.ID, ed.Mutation)
	}
	if string(ed.Before) != string(a.Parts[2].Raw) {
		t.Errorf("Before is not the stored body")
	}
	if string(ed.After) != want {
		t.Errorf("got\n%s\nwant\n%s", ed.After, want)
	}
}

func TestReplaceEmptyTextPartsSQLiteCompact(t *testing.T) {
	b, a := killedAtTextStart(t, store.ShapeSQLite)
	ed := onlyEdit(t)(replaceEmptyTextParts(b.s, a, "[stopped]"))
	want := `{"type":"text","text":"[stopped]","time":{"start":2},"x-keep":{"a":[1,2]},"synthetic":true}`
	if string(ed.After) != want {
		t.Errorf("got  %s\nwant %s", ed.After, want)
	}
}

func TestReplaceEmptyTextPartsLeavesOtherBytes(t *testing.T) {
	b := newSB(t, store.ShapeStorage)
	a := b.msg(msgA1, "assistant", asstFields)
	// Hand-formatted body: only the "text" value and the new key may change.
	raw := "{\n  \"id\": \"" + prt1 + "\",\n  \"type\":   \"text\",\n  \"text\": \"  \",\n  \"odd\" : 1\n}\n"
	p, _ := store.NewPart(store.Record{ID: prt1, Raw: []byte(raw)}, msgA1, sesID)
	a.Parts = append(a.Parts, p)
	ed := onlyEdit(t)(replaceEmptyTextParts(b.s, a, DefaultPlaceholder))
	want := "{\n  \"id\": \"" + prt1 + "\",\n  \"type\":   \"text\",\n  \"text\": \"[user interrupted]\",\n  \"odd\" : 1,\n  \"synthetic\": true\n}\n"
	if string(ed.After) != want {
		t.Errorf("got\n%q\nwant\n%q", ed.After, want)
	}
}

func TestPlaceholderMustBeVisible(t *testing.T) {
	b, a := killedAtTextStart(t, store.ShapeSessions)
	for _, text := range []string{"", "   ", "\n\t"} {
		if _, err := replaceEmptyTextParts(b.s, a, text); err == nil {
			t.Errorf("placeholder %q accepted", text)
		}
		if _, err := injectTextPart(b.s, a, text, testEnv()); err == nil {
			t.Errorf("injected text %q accepted", text)
		}
	}
}

func TestPrependThinkingPartGolden(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	u := b.msg(msgU1, "user", `{"role":"user"}`)
	b.part(u, prt1, `{"type":"text","text":"hi"}`)
	a1 := b.msg(msgA1, "assistant", asstFields)
	b.part(a1, prt2, `{"type":"reasoning","text":"earlier thought","time":{"start":1},`+signedMeta+`}`)
	b.part(a1, prt3, `{"type":"text","text":"ok"}`)
	a2 := b.msg(msgA2, "assistant", asstFields)
	b.part(a2, prt4, `{"type":"step-start"}`)
	b.part(a2, prt5, `{"type":"tool","callID":"c1","tool":"bash","state":{"status":"completed"}}`)
	ed := onlyEdit(t)(prependThinkingPart(b.s, a2, testEnv()))
	// The id sorts after the step-start and before the tool.
	wantID := "prt_a00000000004fAAAAAAAAAAAAA"
	if ed.Op != store.OpAdd || ed.ID != wantID || !(prt4 < ed.ID && ed.ID < prt5) || !store.ValidID(ed.ID, "prt") {
		t.Fatalf("got %s %s, want add %s between %s and %s", ed.Op, ed.ID, wantID, prt4, prt5)
	}
	want := `{
  "id": "prt_a00000000004fAAAAAAAAAAAAA",
  "sessionID": "ses_7f0000000000AAAAAAAAAAAAAA",
  "messageID": "msg_a00000000004AAAAAAAAAAAAAA",
  "type": "reasoning",
  "text": "earlier thought",
  "synthetic": true,
  "metadata": {
    "anthropic": {
      "signature": "sig-abc"
    }
  },
  "time": {
    "start": 1795262400000,
    "end": 1795262400000
  }
}`
	if string(ed.After) != want {
		t.Errorf("got\n%s\nwant\n%s", ed.After, want)
	}
	if ed.Created != testNow.UnixMilli() || ed.MessageID != msgA2 || ed.SessionID != sesID {
		t.Errorf("edit parents/created wrong: %+v", ed)
	}
}

func TestPrependThinkingPartWithoutEarlierThinking(t *testing.T) {
	b := newSB(t, store.ShapeSQLite)
	a := b.msg(msgA1, "assistant", asstFields)
	b.part(a, prt2, `{"type":"tool","callID":"c1","tool":"bash","state":{"status":"completed"}}`)
	ed := onlyEdit(t)(prependThinkingPart(b.s, a, testEnv()))
	want := `{"type":"reasoning","text":"[Continuing from previous reasoning]","synthetic":true,"time":{"start":1795262400000,"end":1795262400000}}`
	if string(ed.After) != want {
		t.Errorf("got  %s\nwant %s", ed.After, want)
	}
	if !(ed.ID < prt2) || !store.ValidID(ed.ID, "prt") {
		t.Errorf("minted %s must sort before the first content part %s", ed.ID, prt2)
	}
}

func TestInjectTextPartSortsLast(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	a := b.msg(msgA1, "assistant", asstFields)
	b.part(a, prt2, `{"type":"step-start"}`)
	b.part(a, prt3, `{"type":"reasoning","text":"hm",`+signedMeta+`}`)
	ed := onlyEdit(t)(injectTextPart(b.s, a, DefaultPlaceholder, testEnv()))
	wantID := "prt_a00000000003AAAW8qRkBGKRiQ"
	if ed.ID != wantID || ed.ID <= prt3 {
		t.Fatalf("minted %s, want %s (after %s)", ed.ID, wantID, prt3)
	}
	want := `{
  "id": "prt_a00000000003AAAW8qRkBGKRiQ",
  "sessionID": "ses_7f0000000000AAAAAAAAAAAAAA",
  "messageID": "msg_a00000000002AAAAAAAAAAAAAA",
  "type": "text",
  "text": "[user interrupted]",
  "synthetic": true
}`
	if string(ed.After) != want {
		t.Errorf("got\n%s\nwant\n%s", ed.After, want)
	}
}

func TestMarkToolAbortedGolden(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	a := b.msg(msgA1, "assistant", asstFields)
	p := b.part(a, prt2, `{"type":"tool","callID":"c1","tool":"bash","state":{"status":"running","input":{"command":"ls"},"title":"ls","time":{"start":5}}}`)
	ed := onlyEdit(t)(markToolAborted(b.s, a, p, testEnv()))
	want := `{
  "id": "prt_a00000000002AAAAAAAAAAAAAA",
  "sessionID": "ses_7f0000000000AAAAAAAAAAAAAA",
  "messageID": "msg_a00000000002AAAAAAAAAAAAAA",
  "type": "tool",
  "callID": "c1",
  "tool": "bash",
  "state": {
    "status": "error",
    "input": {
      "command": "ls"
    },
    "title": "ls",
    "time": {
      "start": 5,
      "end": 1795262400000
    },
    "error": "Tool execution aborted",
    "metadata": {
      "interrupted": true
    }
  }
}`
	if string(ed.After) != want {
		t.Errorf("got\n%s\nwant\n%s", ed.After, want)
	}
}

func TestMarkToolAbortedPendingSQLite(t *testing.T) {
	b := newSB(t, store.ShapeSQLite)
	a := b.msg(msgA1, "assistant", asstFields)
	p := b.part(a, prt2, `{"type":"tool","callID":"c1","tool":"bash","state":{"status":"pending","input":{},"raw":""}}`)
	ed := onlyEdit(t)(markToolAborted(b.s, a, p, testEnv()))
	want := `{"type":"tool","callID":"c1","tool":"bash","state":{"status":"error","input":{},"raw":"","error":"Tool execution aborted","metadata":{"interrupted":true},"time":{"start":1795262400000,"end":1795262400000}}}`
	if string(ed.After) != want {
		t.Errorf("got  %s\nwant %s", ed.After, want)
	}
	done := b.part(a, prt3, `{"type":"tool","state":{"status":"completed"}}`)
	if eds, err := markToolAborted(b.s, a, done, testEnv()); err != nil || len(eds) != 0 {
		t.Errorf("a completed tool must not change: %v %v", eds, err)
	}
}

func TestMarkMessageAbortedAndExcludeGolden(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	a := b.msg(msgA1, "assistant", asstFields)
	ed := onlyEdit(t)(markMessageAborted(b.s, a, testEnv()))
	want := `{
  "id": "msg_a00000000002AAAAAAAAAAAAAA",
  "sessionID": "ses_7f0000000000AAAAAAAAAAAAAA",
  "role": "assistant",
  "parentID": "msg_a00000000001AAAAAAAAAAAAAA",
  "providerID": "anthropic",
  "modelID": "claude-sonnet-4-5",
  "time": {
    "created": 1763726400000,
    "completed": 1795262400000
  },
  "error": {
    "name": "MessageAbortedError",
    "data": {
      "message": "interrupted; marked aborted by sessfix"
    }
  }
}`
	if string(ed.After) != want || ed.Kind != store.KindMessage {
		t.Errorf("got\n%s\nwant\n%s", ed.After, want)
	}

	sq := newSB(t, store.ShapeSQLite)
	m := sq.msg(msgA1, "assistant", `{"role":"assistant","time":{"created":1,"completed":2}}`)
	ed = onlyEdit(t)(excludeMessage(sq.s, m, "thinking out of order", testEnv()))
	wantC := `{"role":"assistant","time":{"created":1,"completed":2},"error":{"name":"UnknownError","data":{"message":"excluded by sessfix: thinking out of order"}}}`
	if string(ed.After) != wantC {
		t.Errorf("got  %s\nwant %s", ed.After, wantC)
	}
	u := sq.msg(msgU2, "user", `{"role":"user"}`)
	if _, err := excludeMessage(sq.s, u, "x", testEnv()); err == nil {
		t.Errorf("a user message cannot be excluded")
	}
}

func TestMoveThinkingFirst(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	a := b.msg(msgA1, "assistant", asstFields)
	b.part(a, prt1, `{"type":"step-start"}`)
	b.part(a, prt2, `{"type":"text","text":"answer"}`)
	b.part(a, prt3, `{"type":"reasoning","text":"one",`+signedMeta+`}`)
	b.part(a, prt4, `{"type":"tool","state":{"status":"completed"}}`)
	b.part(a, prt5, `{"type":"reasoning","text":"two",`+signedMeta+`}`)
	eds, err := moveThinkingFirst(b.s, a, testEnv())
	if err != nil || len(eds) != 2 {
		t.Fatalf("got %d edits, %v", len(eds), err)
	}
	if eds[0].ID != prt3 || eds[1].ID != prt5 {
		t.Fatalf("moved %s, %s; want %s, %s", eds[0].ID, eds[1].ID, prt3, prt5)
	}
	// Both sort after step-start and before the text, in their old order.
	if !(prt1 < eds[0].NewID && eds[0].NewID < eds[1].NewID && eds[1].NewID < prt2) {
		t.Errorf("new ids %s, %s do not sort between %s and %s", eds[0].NewID, eds[1].NewID, prt1, prt2)
	}
	if eds[0].NewID != "prt_a00000000001fAAAAAAAAAAAAA" || eds[1].NewID != "prt_a00000000001ufAAAAAAAAAAAA" {
		t.Errorf("new ids %s, %s", eds[0].NewID, eds[1].NewID)
	}
	// Only the body's id changes.
	want := strings.Replace(string(a.Parts[2].Raw), prt3, eds[0].NewID, 1)
	if eds[0].Op != store.OpRekey || string(eds[0].After) != want {
		t.Errorf("rekey body:\n%s\nwant\n%s", eds[0].After, want)
	}
}

func TestStripThinkingAndDeletePart(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	a := b.msg(msgA1, "assistant", asstFields)
	b.part(a, prt1, `{"type":"reasoning","text":"signed",`+signedMeta+`}`)
	b.part(a, prt2, `{"type":"reasoning","text":"unsigned"}`)
	b.part(a, prt3, `{"type":"text","text":"x"}`)
	eds, _ := stripThinkingParts(b.s, a, nil)
	if len(eds) != 2 || eds[0].ID != prt1 || eds[1].ID != prt2 || eds[0].Op != store.OpDelete {
		t.Fatalf("strip all: %+v", eds)
	}
	eds, _ = stripThinkingParts(b.s, a, func(p *store.Part) bool { return !opencode.IsSigned(p) })
	if len(eds) != 1 || eds[0].ID != prt2 {
		t.Fatalf("strip unsigned: %+v", eds)
	}
	if string(eds[0].Before) != string(a.Parts[1].Raw) {
		t.Errorf("delete must carry the body to back up")
	}
	ed := onlyEdit(t)(deletePart(b.s, a, a.Parts[2]))
	if ed.Op != store.OpDelete || ed.ID != prt3 || ed.MessageID != msgA1 {
		t.Errorf("deletePart: %+v", ed)
	}
}

func TestQuarantineAndRekey(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	broken := &store.Record{Kind: store.KindPart, ID: prt6, Raw: []byte("\x00\x00"), Loc: store.Location{Path: "/store/x.json"}}
	ed := onlyEdit(t)(quarantine(b.s, broken, msgA1))
	if ed.Op != store.OpQuarantine || ed.ID != prt6 || string(ed.Before) != "\x00\x00" || ed.Loc.Path != "/store/x.json" {
		t.Errorf("quarantine: %+v", ed)
	}

	a := b.msg(msgA1, "assistant", asstFields)
	b.part(a, prt1, `{"type":"step-start"}`)
	bad := b.part(a, "prt_0000000000_thinking", `{"type":"reasoning","text":"x"}`)
	// Sorted by byte order the bad id comes first; keep it there.
	a.Parts[0], a.Parts[1] = a.Parts[1], a.Parts[0]
	ed = onlyEdit(t)(rekey(b.s, a, bad, testEnv()))
	if !store.ValidID(ed.NewID, "prt") || ed.NewID >= prt1 {
		t.Errorf("rekeyed to %s: must be valid and sort before %s", ed.NewID, prt1)
	}
	if !strings.Contains(string(ed.After), `"id": "`+ed.NewID+`"`) || strings.Contains(string(ed.After), "_thinking") {
		t.Errorf("body id not rewritten:\n%s", ed.After)
	}
}

func TestRekeyMessageRewritesPartBodies(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	b.msg(msgU1, "user", `{"role":"user"}`)
	m := b.msg("msg_bad", "assistant", asstFields)
	b.part(m, prt1, `{"type":"text","text":"x"}`)
	b.msg(msgA2, "user", `{"role":"user"}`)
	eds, err := rekey(b.s, m, nil, testEnv())
	if err != nil || len(eds) != 2 {
		t.Fatalf("got %+v, %v", eds, err)
	}
	id := eds[0].NewID
	if eds[0].Kind != store.KindMessage || !store.ValidID(id, "msg") || !(msgU1 < id && id < msgA2) {
		t.Errorf("message rekeyed to %s, want a msg id between %s and %s", id, msgU1, msgA2)
	}
	if eds[1].MessageID != id || !strings.Contains(string(eds[1].After), `"messageID": "`+id+`"`) {
		t.Errorf("part body does not follow: %+v\n%s", eds[1], eds[1].After)
	}
}

func TestMoveThinkingFirstStaysInItsStep(t *testing.T) {
	b := newSB(t, store.ShapeSessions)
	a := b.msg(msgA1, "assistant", asstFields)
	b.part(a, prt1, `{"type":"step-start"}`)
	b.part(a, prt2, `{"type":"tool","state":{"status":"completed"}}`)
	b.part(a, prt3, `{"type":"step-start"}`)
	b.part(a, prt4, `{"type":"text","text":"done"}`)
	b.part(a, prt5, `{"type":"reasoning","text":"late",`+signedMeta+`}`)
	ed := onlyEdit(t)(moveThinkingFirst(b.s, a, testEnv()))
	if ed.ID != prt5 || !(prt3 < ed.NewID && ed.NewID < prt4) {
		t.Errorf("moved %s to %s; want it between %s and %s (its own step)", ed.ID, ed.NewID, prt3, prt4)
	}
}

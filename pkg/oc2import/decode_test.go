package oc2import_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/oc2import"
	"github.com/sessfix/sessfix/pkg/ocschema"
)

const ses = "ses_df6ddad10ffeRejectedMultim"

func msg(id string, created int64, data string) oc2import.Row {
	return oc2import.Row{ID: id, SessionID: ses, Created: created, Updated: created, Data: []byte(data)}
}

func part(id, message, data string) oc2import.Row {
	return oc2import.Row{ID: id, MessageID: message, SessionID: ses, Data: []byte(data)}
}

const (
	user      = `{"role":"user","time":{"created":1},"agent":"build","model":{"providerID":"anthropic","modelID":"claude"}}`
	assistant = `{"role":"assistant","time":{"created":2},"parentID":"msg_000000000001000000000000u1","modelID":"claude","providerID":"anthropic","mode":"build","agent":"build","path":{"cwd":"/","root":"/"},"cost":0,"tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}}`
	text      = `{"type":"text","text":"hi"}`
)

func reasons(res oc2import.Result) []string {
	var out []string
	for _, s := range res.Skipped {
		out = append(out, s.Reason+" "+s.MessageID+" "+s.PartID+" "+strings.Join(s.Missing, ","))
	}
	return out
}

// Rows older than the required keys are patched the way the importer
// patches them, and then decode.
func TestLegacyPatch(t *testing.T) {
	u := `{"role":"user","time":{"created":1}}`
	a := `{"role":"assistant","time":{"created":2},"mode":"plan","modelID":"m","providerID":"p","path":{"cwd":"/","root":"/"},"cost":0,"tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}}`
	res := oc2import.Decode(oc2import.Session{ID: ses}, []oc2import.Row{
		msg("msg_000000000002000000000000a1", 2, a), msg("msg_000000000001000000000000u1", 1, u)}, nil)
	if len(res.Skipped) != 0 || len(res.Messages) != 2 {
		t.Fatalf("skipped %v", reasons(res))
	}
	if got := string(res.Messages[0].Body); got != `{"agent":"plan","model":{"modelID":"m","providerID":"p"},"role":"user","time":{"created":1}}` {
		t.Errorf("patched user message %s", got)
	}
	b := gjson.ParseBytes(res.Messages[1].Body)
	if b.Get("agent").Str != "plan" || b.Get("parentID").Str != "msg_000000000001000000000000u1" {
		t.Errorf("patched assistant message %s", res.Messages[1].Body)
	}
}

// A user message with no model anywhere, and an assistant message with
// no user message before it, keep what the patch could not supply.
func TestWhatThePatchCannotSupply(t *testing.T) {
	a := strings.Replace(assistant, `"parentID":"msg_000000000001000000000000u1",`, "", 1)
	for _, c := range []struct {
		row  oc2import.Row
		want string
	}{
		{msg("msg_000000000001000000000000a1", 1, a), "invalid-message msg_000000000001000000000000a1  parentID"},
		{msg("msg_000000000002000000000000u1", 2, `{"role":"user","time":{"created":2}}`), "invalid-message msg_000000000002000000000000u1  model"},
	} {
		res := oc2import.Decode(oc2import.Session{ID: ses}, []oc2import.Row{c.row}, nil)
		if got := reasons(res); !slices.Equal(got, []string{c.want}) {
			t.Fatalf("skipped %v, want %v", got, c.want)
		}
		if p := res.Skipped[0].Problems; len(p) == 0 || p[0].Kind != ocschema.Missing {
			t.Errorf("%s: problems %v", c.row.ID, p)
		}
	}
	// A reply after the user message supplies its model.
	res := oc2import.Decode(oc2import.Session{ID: ses}, []oc2import.Row{
		msg("msg_000000000001000000000000a1", 1, assistant), msg("msg_000000000002000000000000u1", 2, `{"role":"user","time":{"created":2}}`)}, nil)
	if len(res.Skipped) != 0 {
		t.Fatalf("with a reply: %v", reasons(res))
	}
	// The session row's model fills a user message's: then it decodes.
	res = oc2import.Decode(oc2import.Session{ID: ses, Model: `{"id":"claude","providerID":"anthropic","variant":"default"}`},
		[]oc2import.Row{msg("msg_000000000002000000000000u1", 2, `{"role":"user","time":{"created":2}}`)}, nil)
	if len(res.Skipped) != 0 || gjson.GetBytes(res.Messages[0].Body, "model.modelID").Str != "claude" {
		t.Fatalf("with the session's model: %v %s", reasons(res), res.Messages[0].Body)
	}
}

// What the importer drops: a message that is not JSON, one that does not
// decode, a part that does not decode, a part whose message is not the
// session's; a skipped message's parts go without a warning.
func TestSkipped(t *testing.T) {
	noTokens := strings.Replace(assistant, `,"tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}`, "", 1)
	res := oc2import.Decode(oc2import.Session{ID: ses},
		[]oc2import.Row{
			msg("msg_000000000001000000000000u1", 1, user),
			msg("msg_000000000002000000000000a1", 2, noTokens),
			msg("msg_000000000003000000000000u2", 3, user[:20]),
			msg("msg_000000000004000000000000a2", 4, assistant),
		},
		[]oc2import.Row{
			part("prt_000000000001000000000000p1", "msg_000000000001000000000000u1", text),
			part("prt_000000000002000000000000p2", "msg_000000000002000000000000a1", text),
			part("prt_000000000004000000000000p4", "msg_000000000004000000000000a2", `{"type":"thinking","thinking":"x"}`),
			part("prt_000000000005000000000000p5", "msg_1fed5416d001xO9zyvrPKgrNA5", text),
			part("prt_000000000006000000000000p6", "msg_000000000004000000000000a2", `[]`),
		})
	want := []string{
		"invalid-message msg_000000000002000000000000a1  ",
		"invalid-message msg_000000000003000000000000u2  ",
		"invalid-part msg_000000000004000000000000a2 prt_000000000004000000000000p4 ",
		"orphan-part msg_1fed5416d001xO9zyvrPKgrNA5 prt_000000000005000000000000p5 ",
		"invalid-part msg_000000000004000000000000a2 prt_000000000006000000000000p6 ",
	}
	if got := reasons(res); !slices.Equal(got, want) {
		t.Fatalf("skipped\n%v\nwant\n%v", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if sk := res.Skipped[0]; sk.NotObject || len(sk.Problems) != 1 || sk.Problems[0].Path != "tokens" {
		t.Errorf("no tokens: %+v", sk)
	}
	if !res.Skipped[1].NotObject || !res.Skipped[4].NotObject {
		t.Errorf("not JSON objects: %+v %+v", res.Skipped[1], res.Skipped[4])
	}
	if sk := res.Skipped[2]; len(sk.Problems) == 0 || sk.Problems[0].Kind != ocschema.UnknownVariant {
		t.Errorf("foreign part: %+v", sk)
	}
	var kept []string
	for _, m := range res.Messages {
		kept = append(kept, m.Row.ID)
	}
	for _, p := range res.Parts {
		kept = append(kept, p.ID)
	}
	if want := []string{"msg_000000000001000000000000u1", "msg_000000000004000000000000a2", "prt_000000000001000000000000p1", "prt_000000000002000000000000p2"}; !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v (a skipped message's part decodes, and goes with it)", kept, want)
	}
}

// A format key decodes (only 1.18's server cannot encode it).
func TestFormatDecodes(t *testing.T) {
	u := strings.Replace(user, `"agent":"build"`, `"agent":"build","format":{"type":"text"}`, 1)
	res := oc2import.Decode(oc2import.Session{ID: ses}, []oc2import.Row{msg("msg_000000000001000000000000u1", 1, u)}, nil)
	if len(res.Skipped) != 0 {
		t.Fatalf("skipped %v", reasons(res))
	}
}

package surgery

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// Ids of the conversation fixture, in OpenCode's order: a tool loop
// (user, assistant with a tool call, assistant answering it) and a second
// turn (user, assistant).
const (
	sesID  = "ses_e0129cf5dffeh7amIIDPeKjRvT"
	user1  = "msg_1fed60a2c0014VnuSac8oWQ1aW"
	asst1  = "msg_1fed60b30001YuJ96YoOg52twY"
	asst2  = "msg_1fed6241d001Bx3E68GJ5eBEW7"
	user2  = "msg_1fed62645001RcAUDlvnjmmMH6"
	asst3  = "msg_1fed630cd001GSyazHB3buB6Df"
	model  = `"providerID":"anthropic","modelID":"claude-sonnet-4-5"`
	t0     = int64(1795276800000)
	secret = "sig"
)

// partID is the n-th part id of a message: same time digits, so parts sort
// by n.
func partID(msg string, n int) string {
	return fmt.Sprintf("prt_%s%03x%s", msg[4:13], n, msg[16:30])
}

func body(format string, args ...any) json.RawMessage {
	b := fmt.Sprintf(format, args...)
	if !json.Valid([]byte(b)) {
		panic("fixture body is not JSON: " + b)
	}
	return json.RawMessage(b)
}

// stepFinish is a step-finish part with a cost and token counts.
func stepFinish(reason string, cost float64, in int) json.RawMessage {
	return body(`{"type":"step-finish","reason":%q,"cost":%g,"tokens":{"input":%d,"output":10,"reasoning":0,"cache":{"read":0,"write":0}}}`, reason, cost, in)
}

func userMsg(id string, at int64, text string) storetest.Message {
	return storetest.Message{ID: id, Body: body(`{"role":"user","time":{"created":%d},"agent":"build","model":{%s}}`, at, model),
		Parts: []storetest.Part{{ID: partID(id, 1), Body: body(`{"type":"text","text":%q}`, text)}}}
}

func assistantMsg(id, parent string, at int64, finish string, parts ...storetest.Part) storetest.Message {
	return storetest.Message{ID: id, Body: body(`{"role":"assistant","parentID":%q,"time":{"created":%d,"completed":%d},`+
		`"mode":"build","agent":"build","path":{"cwd":"/w","root":"/w"},"cost":0.01,`+
		`"tokens":{"input":100,"output":10,"reasoning":0,"cache":{"read":0,"write":0}},%s,"finish":%q}`,
		parent, at, at+500, model, finish), Parts: parts}
}

// conversation is the fixture session. info adds keys to its session
// record (a revert, say).
func conversation(info string) *storetest.Fixture {
	sig := `"metadata":{"anthropic":{"signature":"` + secret + `"}}`
	return &storetest.Fixture{
		ID: sesID, Title: "a tool loop and a second turn",
		Info: body(`{"id":%q,"slug":"gentle-circuit","version":"1.18.33","projectID":"global","directory":"/w","title":"a tool loop and a second turn",`+
			`"cost":0.03,"tokens":{"input":300,"output":30,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":%d,"updated":%d}%s}`, sesID, t0, t0+9000, info),
		Messages: []storetest.Message{
			userMsg(user1, t0, "run a command"),
			assistantMsg(asst1, user1, t0+1000, "tool-calls",
				storetest.Part{ID: partID(asst1, 1), Body: body(`{"type":"step-start"}`)},
				storetest.Part{ID: partID(asst1, 2), Body: body(`{"type":"reasoning","text":"I will run it.",%s,"time":{"start":%d,"end":%d}}`, sig, t0+1000, t0+1100)},
				storetest.Part{ID: partID(asst1, 3), Body: body(`{"type":"tool","callID":"toolu_01","tool":"bash","state":{"status":"completed","input":{"command":"echo hi"},"output":"hi\n","title":"echo","metadata":{},"time":{"start":%d,"end":%d}}}`, t0+1100, t0+1200)},
				storetest.Part{ID: partID(asst1, 4), Body: stepFinish("tool-calls", 0.01, 100)}),
			assistantMsg(asst2, user1, t0+2000, "stop",
				storetest.Part{ID: partID(asst2, 1), Body: body(`{"type":"step-start"}`)},
				storetest.Part{ID: partID(asst2, 2), Body: body(`{"type":"reasoning","text":"It printed hi.",%s,"time":{"start":%d,"end":%d}}`, sig, t0+2000, t0+2100)},
				storetest.Part{ID: partID(asst2, 3), Body: body(`{"type":"text","text":"It printed hi.","time":{"start":%d,"end":%d}}`, t0+2100, t0+2200)},
				storetest.Part{ID: partID(asst2, 4), Body: stepFinish("stop", 0.01, 100)}),
			userMsg(user2, t0+5000, "and now?"),
			assistantMsg(asst3, user2, t0+6000, "stop",
				storetest.Part{ID: partID(asst3, 1), Body: body(`{"type":"step-start"}`)},
				storetest.Part{ID: partID(asst3, 2), Body: body(`{"type":"reasoning","text":"Nothing more.",%s,"time":{"start":%d,"end":%d}}`, sig, t0+6000, t0+6100)},
				storetest.Part{ID: partID(asst3, 3), Body: body(`{"type":"text","text":"Nothing more to do.","time":{"start":%d,"end":%d}}`, t0+6100, t0+6200)},
				storetest.Part{ID: partID(asst3, 4), Body: stepFinish("stop", 0.01, 100)}),
		},
	}
}

// open materialises the fixture in a shape and loads its session.
func open(t *testing.T, shape store.Shape, f *storetest.Fixture) (store.Store, *store.Session) {
	t.Helper()
	st := storetest.OpenOne(t, storetest.Materialize(t, shape, t.TempDir(), f))
	ss := storetest.LoadAll(t, st)
	if len(ss) != 1 {
		t.Fatalf("%s: %d sessions, want 1", shape, len(ss))
	}
	return st, ss[0]
}

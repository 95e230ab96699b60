package mockopenai

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const acct = "sk-test"

// fixture is a set of issued items for the validator to look up.
type fixture map[string]Item

func (f fixture) lookup(id string) (Item, bool) { it, ok := f[id]; return it, ok }

func enc(id, key, model string) string { return Seal(DefaultSecret, id, key, model) }

func jsonStr(s string) string { b, _ := json.Marshal(s); return string(b) }

func reasoning(id, encrypted string) string {
	s := `{"type":"reasoning","summary":[{"type":"summary_text","text":"thinking"}]`
	if id != "" {
		s += `,"id":` + jsonStr(id)
	}
	if encrypted != "" {
		s += `,"encrypted_content":` + jsonStr(encrypted)
	}
	return s + `}`
}

func call(id, callID string) string {
	s := `{"type":"function_call","call_id":"` + callID + `","name":"bash","arguments":"{}"`
	if id != "" {
		s += `,"id":"` + id + `"`
	}
	return s + `}`
}

func output(callID string) string {
	return `{"type":"function_call_output","call_id":"` + callID + `","output":"ok"}`
}

func msg(id string) string {
	s := `{"role":"assistant","content":[{"type":"output_text","text":"done"}]`
	if id != "" {
		s += `,"id":"` + id + `"`
	}
	return s + `}`
}

const userItem = `{"role":"user","content":[{"type":"input_text","text":"hi"}]}`

func respBody(items ...string) string {
	return `{"model":"gpt-5.2","stream":true,"store":false,"include":["reasoning.encrypted_content"],"input":[` + strings.Join(items, ",") + `]}`
}

func TestResponsesValidator(t *testing.T) {
	rs := "rs_1"
	good := enc(rs, acct, "gpt-5.2")
	issued := fixture{
		"rs_1":       {ID: "rs_1", Type: "reasoning", Account: acct, Model: "gpt-5.2", Encrypted: good},
		"fc_1":       {ID: "fc_1", Type: "function_call", CallID: "call_1", Reasoning: "rs_1", Account: acct},
		"msg_1":      {ID: "msg_1", Type: "message", Reasoning: "rs_1", Account: acct},
		"rs_stored":  {ID: "rs_stored", Type: "reasoning", Account: acct, Stored: true},
		"msg_stored": {ID: "msg_stored", Type: "message", Reasoning: "rs_stored", Account: acct, Stored: true},
		"rs_other":   {ID: "rs_other", Type: "reasoning", Account: "sk-other", Stored: true},
	}
	cases := []struct {
		name   string
		body   string
		want   string
		status int
	}{
		{"plain", respBody(userItem), "", 0},
		{"tool loop, store false, no ids", respBody(userItem, reasoning("", good), call("", "call_1"), output("call_1")), "", 0},
		{"tool loop with ids", respBody(userItem, reasoning(rs, good), call("fc_1", "call_1"), output("call_1")), "", 0},
		{"reasoning then message", respBody(userItem, reasoning("", good), msg(""), userItem), "", 0},
		{"reasoning entries of one item in a row", respBody(userItem, reasoning(rs, good), reasoning(rs, good), msg("")), "", 0},

		{"empty id", respBody(userItem, msg("")[:len(msg(""))-1]+`,"id":""}`), MsgEmptyID(1), 400},
		{"reasoning without following item", respBody(userItem, reasoning("", good), userItem), MsgReasoningWithoutFollowing(rs), 400},
		{"reasoning at the end", respBody(userItem, reasoning("", good)), MsgReasoningWithoutFollowing(rs), 400},
		{"reasoning followed by a user message", respBody(userItem, reasoning(rs, good), userItem, msg("")), MsgReasoningWithoutFollowing(rs), 400},
		{"message without its reasoning", respBody(userItem, msg("msg_1"), userItem), MsgWithoutReasoning("msg_1", "message", rs), 400},
		{"function call without its reasoning", respBody(userItem, call("fc_1", "call_1"), output("call_1")), MsgWithoutReasoning("fc_1", "function_call", rs), 400},

		{"encrypted content of another account", respBody(userItem, reasoning("", enc(rs, "sk-other", "gpt-5.2")), msg("")), MsgEncryptedNotVerified(rs), 400},
		{"encrypted content of another model", respBody(userItem, reasoning("", enc(rs, acct, "gpt-5.3-codex-spark")), msg("")), MsgEncryptedNotVerified(rs), 400},
		{"encrypted content of another server", respBody(userItem, reasoning("", Seal([]byte("other"), rs, acct, "gpt-5.2")), msg("")), MsgEncryptedNotVerified(rs), 400},
		{"encrypted content naming another item", respBody(userItem, reasoning("rs_2", good), msg("")), MsgEncryptedNotVerified("rs_2"), 400},
		{"garbage encrypted content", respBody(userItem, reasoning("", "gAAAAxyz"), msg("")), MsgEncryptedNotVerified(""), 400},

		{"reasoning by id, stored", respBody(userItem, reasoning("rs_stored", ""), msg("msg_stored")), "", 0},
		{"reasoning by id, not stored", respBody(userItem, reasoning(rs, ""), msg("")), MsgItemNotFound(rs), 404},
		{"reasoning by id of another account", respBody(userItem, reasoning("rs_other", ""), msg("")), MsgItemNotFound("rs_other"), 404},
		{"reference to a stored pair", respBody(userItem, `{"type":"item_reference","id":"rs_stored"}`, `{"type":"item_reference","id":"msg_stored"}`), "", 0},
		{"reference to an unstored item", respBody(userItem, `{"type":"item_reference","id":"rs_1"}`, msg("")), MsgItemNotFound(rs), 404},
		{"reference to a message without its reasoning", respBody(userItem, `{"type":"item_reference","id":"msg_stored"}`), MsgWithoutReasoning("msg_stored", "message", "rs_stored"), 400},
		{"reasoning without id or content", respBody(userItem, reasoning("", ""), msg("")), "Missing required parameter: 'input[1].encrypted_content'.", 400},

		{"function call without output", respBody(userItem, call("", "call_9"), userItem), MsgNoToolOutput("call_9"), 400},
		{"output without call", respBody(userItem, output("call_9")), MsgNoToolCall("call_9"), 400},
		{"output before its call", respBody(userItem, output("call_9"), call("", "call_9")), MsgNoToolCall("call_9"), 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseResponses([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			v := ResponsesValidator{Account: acct, Lookup: issued.lookup}
			got, status := "", 0
			if e := v.Validate(r); e != nil {
				got, status = e.Message, e.Status
			}
			if got != c.want || status != c.status {
				t.Errorf("got  %d %q\nwant %d %q", status, got, c.status, c.want)
			}
		})
	}
}

func TestEncryptedContentCode(t *testing.T) {
	r, _ := ParseResponses([]byte(respBody(userItem, reasoning("", enc("rs_1", "sk-other", "gpt-5.2")), msg(""))))
	e := ResponsesValidator{Account: acct}.Validate(r)
	if e == nil || e.Code == nil || *e.Code != "invalid_encrypted_content" {
		t.Fatalf("error %+v", e)
	}
	want := fmt.Sprintf(`"code":"invalid_encrypted_content","message":%s`, jsonStr(MsgEncryptedNotVerified("rs_1")))
	if !strings.Contains(string(e.Body()), want) {
		t.Errorf("body %s", e.Body())
	}
}

func TestSeal(t *testing.T) {
	c := Seal(DefaultSecret, "rs_x", "sk-a", "gpt-5.2")
	if !Verify(DefaultSecret, c, "sk-a", "gpt-5.2") {
		t.Fatal("own content does not verify")
	}
	for _, bad := range []struct{ secret, key, model string }{
		{"other", "sk-a", "gpt-5.2"}, {string(DefaultSecret), "sk-b", "gpt-5.2"}, {string(DefaultSecret), "sk-a", "gpt-5.1"},
	} {
		if Verify([]byte(bad.secret), c, bad.key, bad.model) {
			t.Errorf("verifies for %+v", bad)
		}
	}
	s, ok, valid := Unseal([]byte("other"), c)
	if !ok || valid || s.ID != "rs_x" {
		t.Errorf("Unseal with another secret: %+v %v %v", s, ok, valid)
	}
	if strings.Contains(c, "sk-a") {
		t.Errorf("content names the key: %s", c)
	}
	// One character of the MAC changed, away from its last one (whose low
	// bits base64 decoding ignores, so changing it may change nothing).
	i := len(c) - 10
	swap := byte('A')
	if c[i] == swap {
		swap = 'B'
	}
	tampered := c[:i] + string(swap) + c[i+1:]
	if Verify(DefaultSecret, tampered, "sk-a", "gpt-5.2") {
		t.Error("tampered content verifies")
	}
}

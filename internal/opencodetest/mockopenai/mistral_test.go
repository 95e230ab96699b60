package mockopenai

import (
	"encoding/json"
	"testing"
)

func TestMistralCallIDs(t *testing.T) {
	call := func(id string) string {
		return `{"role":"assistant","content":"","tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"bash","arguments":"{}"}}]}`
	}
	reply := func(id string) string { return `{"role":"tool","tool_call_id":"` + id + `","content":"ok"}` }
	cases := []struct {
		name, model string
		mistral     bool
		msgs        []string
		want        string
	}{
		{"nine alphanumerics", "magistral-medium-latest", false, []string{sys, usr, call("aB3xK9mP2"), reply("aB3xK9mP2")}, ""},
		{"anthropic id", "magistral-medium-latest", false, []string{sys, usr, call("toolu_01ABCdef"), reply("toolu_01ABCdef")}, MsgMistralCallID("toolu_01ABCdef")},
		{"openai id", "devstral-small-2505", false, []string{sys, usr, call("call_PTLP8xhu3uwZk4l3nlnrrJha"), reply("call_PTLP8xhu3uwZk4l3nlnrrJha")}, MsgMistralCallID("call_PTLP8xhu3uwZk4l3nlnrrJha")},
		{"eight characters", "codestral-latest", false, []string{sys, usr, call("aB3xK9mP"), reply("aB3xK9mP")}, MsgMistralCallID("aB3xK9mP")},
		{"the result alone", "mistral-large-latest", false, []string{sys, usr, call("aB3xK9mP2"), reply("call_1")}, MsgMistralCallID("call_1")},
		{"not a mistral model", "gpt-4.1", false, []string{sys, usr, call("call_1"), reply("call_1")}, ""},
		{"mistral by config", "my-coder", true, []string{sys, usr, call("call_1"), reply("call_1")}, MsgMistralCallID("call_1")},
	}
	for _, c := range cases {
		r, err := ParseChat([]byte(chatBody(c.model, true, c.msgs...)))
		if err != nil {
			t.Fatal(err)
		}
		e := ChatValidator{Dialect: OpenAI, Mistral: c.mistral}.Validate(r)
		switch {
		case c.want == "" && e != nil:
			t.Errorf("%s: rejected: %v", c.name, e)
		case c.want != "" && (e == nil || e.Message != c.want || e.Status != 400):
			t.Errorf("%s: got %v, want 400 %q", c.name, e, c.want)
		}
		if e == nil || c.want == "" {
			continue
		}
		var body map[string]any
		if err := json.Unmarshal(e.Body(), &body); err != nil || body["object"] != "error" || body["message"] != c.want || body["code"] != "3280" {
			t.Errorf("%s: body %s", c.name, e.Body())
		}
	}
	if id := mistralID(); !mistralCallID.MatchString(id) {
		t.Errorf("minted id %q is not of mistral's form", id)
	}
}

package sent_test

import (
	"testing"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

func msg(id, role, body string, parts ...string) *store.Message {
	m := &store.Message{Record: store.Record{Kind: store.KindMessage, ID: id, Raw: []byte(body)}, Role: role}
	for i, p := range parts {
		pt := &store.Part{Record: store.Record{Kind: store.KindPart, ID: id + "-" + string(rune('a'+i)), Raw: []byte(p)}, MessageID: id}
		pt.Type = pt.Get("type").String()
		m.Parts = append(m.Parts, pt)
	}
	return m
}

func sqliteSession(msgs ...*store.Message) *store.Session {
	return &store.Session{Store: store.Info{Shape: store.ShapeSQLite, Path: "/x"}, ID: "ses_1", Messages: msgs}
}

func userOf(provider, model string) *store.Message {
	return msg("u1", "user", `{"role":"user","model":{"providerID":"`+provider+`","modelID":"`+model+`"}}`, `{"type":"text","text":"go"}`)
}

func asstOf(id, provider, model string, parts ...string) *store.Message {
	return msg(id, "assistant", `{"role":"assistant","providerID":"`+provider+`","modelID":"`+model+`","finish":"stop","time":{"created":1,"completed":2}}`, parts...)
}

const tool = `{"type":"tool","callID":"call_1","tool":"bash","state":{"status":"completed","input":{},"output":"ok"}}`

// TestStageFive covers each family's provider package on one stored
// history each: what is sent, what is left out and where it maps.
func TestStageFive(t *testing.T) {
	cases := []struct {
		name string
		s    *store.Session
		want string
	}{
		{"bedrock keeps blank text next to signed reasoning", sqliteSession(userOf("amazon-bedrock", "anthropic.claude-sonnet-4-5"),
			asstOf("a1", "amazon-bedrock", "anthropic.claude-sonnet-4-5", `{"type":"step-start"}`,
				`{"type":"reasoning","text":"plan","metadata":{"bedrock":{"signature":"sig"}}}`, `{"type":"text","text":"\n\n"}`, tool)),
			"0 user [text]\n1 assistant [thinking text tool_use]\n2 user [tool_result text]\n"},
		{"bedrock drops blank text without it", sqliteSession(userOf("amazon-bedrock", "anthropic.claude-sonnet-4-5"),
			asstOf("a1", "amazon-bedrock", "anthropic.claude-sonnet-4-5", `{"type":"step-start"}`,
				`{"type":"reasoning","text":"plan"}`, `{"type":"text","text":"\n\n"}`, tool)),
			"0 user [text]\n1 assistant [tool_use]\n2 user [tool_result text]\n"},
		{"chat not interleaved: empty reasoning is not sent", sqliteSession(userOf("kimi", "kimi-k2-thinking"),
			asstOf("a1", "kimi", "kimi-k2-thinking", `{"type":"step-start"}`, `{"type":"reasoning","text":""}`, tool)),
			"0 system []\n1 user [text]\n2 assistant [tool_use] dropped:1\n3 tool [tool_result]\n4 user [text]\n"},
		{"chat interleaved: reasoning_content always", sqliteSession(userOf("moonshotai", "kimi-k2.6"),
			asstOf("a1", "moonshotai", "kimi-k2.6", `{"type":"step-start"}`, tool)),
			"0 system []\n1 user [text]\n2 assistant [tool_use] reasoning_content\n3 tool [tool_result]\n4 user [text]\n"},
		{"chat: another model's reasoning goes as text", sqliteSession(userOf("kimi", "kimi-k2-thinking"),
			asstOf("a1", "anthropic", "claude-sonnet-4-5", `{"type":"step-start"}`,
				`{"type":"reasoning","text":"plan","metadata":{"anthropic":{"signature":"sig"}}}`, tool)),
			"0 system []\n1 user [text]\n2 assistant [text tool_use]\n3 tool [tool_result]\n4 user [text]\n"},
		{"responses: reasoning without encrypted content is left out", sqliteSession(userOf("openai", "gpt-5.2"),
			asstOf("a1", "openai", "gpt-5.2", `{"type":"step-start"}`,
				`{"type":"reasoning","text":"","metadata":{"openai":{"itemId":"rs_1","reasoningEncryptedContent":null}}}`,
				`{"type":"reasoning","text":"plan","metadata":{"openai":{"itemId":"rs_2","reasoningEncryptedContent":"enc"}}}`,
				`{"type":"text","text":"done","metadata":{"openai":{"itemId":"msg_1"}}}`)),
			"0 developer []\n1 user [text]\n2 reasoning [reasoning(signed)] dropped:1\n3 assistant [text]\n4 user [text]\n"},
		{"google: calls keep their signature, empty text is dropped", sqliteSession(userOf("google", "gemini-3-flash-preview"),
			asstOf("a1", "google", "gemini-3-flash-preview", `{"type":"step-start"}`, `{"type":"reasoning","text":"plan"}`,
				`{"type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{},"output":"ok"},"metadata":{"google":{"thoughtSignature":"ts"}}}`,
				`{"type":"step-start"}`, `{"type":"text","text":""}`)),
			"0 user [text]\n1 model [thought tool_use(signed)]\n2 user [tool_result]\n3 user [text]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := sent.Build(c.s, sent.Options{NextPrompt: true})
			if got := render(r); got != c.want {
				t.Errorf("request\n%swant\n%s", got, c.want)
			}
		})
	}
}

// TestResponsesItemsMapToParts: a Responses item is one part, so input[N]
// names the part, and the item id the API prints is the part's.
func TestResponsesItemsMapToParts(t *testing.T) {
	s := sqliteSession(userOf("openai", "gpt-5.2"),
		asstOf("a1", "openai", "gpt-5.2", `{"type":"step-start"}`,
			`{"type":"reasoning","text":"plan","metadata":{"openai":{"itemId":"rs_2","reasoningEncryptedContent":"enc"}}}`,
			tool))
	r := sent.Build(s, sent.Options{})
	for index, part := range map[string]string{"input[2]": "a1-b", "input[3]": "a1-c", "input[4]": "a1-c"} {
		if _, p, err := r.LocateIndex(index); err != nil || p != part {
			t.Errorf("%s: %q %v, want part %s", index, p, err, part)
		}
	}
	if id := r.Messages[2].Blocks[0].ItemID; id != "rs_2" {
		t.Errorf("reasoning item id %q", id)
	}
}

package mockopenai

import (
	"strings"
	"testing"
)

const (
	sys       = `{"role":"system","content":"be brief"}`
	usr       = `{"role":"user","content":"hi"}`
	callBash  = `"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{}"}}]`
	toolReply = `{"role":"tool","tool_call_id":"call_1","content":"ok"}`
	answer    = `{"role":"assistant","content":"done"}`
)

func asstCall(reasoning string) string {
	return `{"role":"assistant","content":"","reasoning_content":` + reasoning + `,` + callBash + `}`
}

func chatBody(model string, tools bool, msgs ...string) string {
	t := ""
	if tools {
		t = `"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object"}}}],`
	}
	return `{"model":"` + model + `","stream":true,` + t + `"messages":[` + strings.Join(msgs, ",") + `]}`
}

func TestChatValidator(t *testing.T) {
	noReasoning := `{"role":"assistant","content":"",` + callBash + `}`
	nullReasoning := `{"role":"assistant","content":"","reasoning_content":null,` + callBash + `}`
	cases := []struct {
		name    string
		dialect Dialect
		scope   Scope
		strict  bool // RejectEmpty
		body    string
		want    string // "" means accepted
	}{
		{"plain", DeepSeek, "", false, chatBody("deepseek-reasoner", true, sys, usr), ""},
		{"tool loop with reasoning", DeepSeek, "", false, chatBody("deepseek-reasoner", true, sys, usr, asstCall(`"let me look"`), toolReply), ""},
		{"empty reasoning is accepted", DeepSeek, "", false, chatBody("deepseek-reasoner", true, sys, usr, asstCall(`""`), toolReply), ""},
		{"tool loop without reasoning", DeepSeek, "", false, chatBody("deepseek-reasoner", true, sys, usr, noReasoning, toolReply), MsgDeepSeekMissing(2)},
		{"null reasoning counts as missing", DeepSeek, "", false, chatBody("deepseek-reasoner", true, sys, usr, nullReasoning, toolReply), MsgDeepSeekMissing(2)},
		{"V4 text", DeepSeek, "", false, chatBody("deepseek-v4-pro", true, sys, usr, noReasoning, toolReply), TextDeepSeekPassBack},
		{"V4 flash text", DeepSeek, "", false, chatBody("deepseek-flash", true, sys, usr, noReasoning, toolReply), TextDeepSeekPassBack},
		{"Kimi text", Moonshot, "", false, chatBody("kimi-k2.6", true, sys, usr, noReasoning, toolReply), MsgKimiMissing(2)},
		{"non-thinking model", DeepSeek, "", false, chatBody("deepseek-chat", true, sys, usr, noReasoning, toolReply), ""},
		{"no tools in the request", DeepSeek, "", false, chatBody("deepseek-reasoner", false, sys, usr, noReasoning, toolReply), ""},
		{"OpenAI has no thinking rule", OpenAI, "", false, chatBody("gpt-4.1", true, sys, usr, noReasoning, toolReply), ""},
		{"earlier turn, measured scope", DeepSeek, "", false, chatBody("deepseek-reasoner", true, sys, usr, noReasoning, toolReply, answer, usr), ""},
		{"earlier turn, strict scope", DeepSeek, ScopeAllTurns, false, chatBody("deepseek-reasoner", true, sys, usr, noReasoning, toolReply, answer, usr), MsgDeepSeekMissing(2)},
		{"earlier turn, strict scope, Kimi", Moonshot, ScopeAllTurns, false, chatBody("kimi-k2.6", true, sys, usr, noReasoning, toolReply, answer, usr), MsgKimiMissing(2)},
		{"empty reasoning, strict reading", DeepSeek, ScopeAllTurns, true, chatBody("deepseek-reasoner", true, sys, usr, asstCall(`""`), toolReply), MsgDeepSeekMissing(2)},
		{"empty reasoning in an earlier turn, strict reading", DeepSeek, ScopeAllTurns, true, chatBody("deepseek-v4-pro", true, sys, usr, asstCall(`""`), toolReply, answer, usr), TextDeepSeekPassBack},
		{"empty reasoning in an earlier turn, Kimi, strict reading", Moonshot, ScopeAllTurns, true, chatBody("kimi-k2.6", true, sys, usr, asstCall(`""`), toolReply, answer, usr), MsgKimiMissing(2)},
		{"empty reasoning in an earlier turn, empty rejected, current turn only", DeepSeek, "", true, chatBody("deepseek-reasoner", true, sys, usr, asstCall(`""`), toolReply, answer, usr), ""},
		{"reasoning text, strict reading", DeepSeek, ScopeAllTurns, true, chatBody("deepseek-reasoner", true, sys, usr, asstCall(`"(reasoning not recorded)"`), toolReply, answer, usr), ""},
		{"second loop step indexes the right message", DeepSeek, "", false, chatBody("deepseek-reasoner", true, sys, usr, asstCall(`"a"`), toolReply, noReasoning, toolReply), MsgDeepSeekMissing(4)},

		{"tool call without reply", DeepSeek, "", false, chatBody("deepseek-chat", true, sys, usr, noReasoning, usr), MsgToolCallsWithoutResponse([]string{"call_1"})},
		{"tool call at the end", OpenAI, "", false, chatBody("gpt-4.1", true, sys, usr, noReasoning), MsgToolCallsWithoutResponse([]string{"call_1"})},
		{"tool reply without call", OpenAI, "", false, chatBody("gpt-4.1", true, sys, usr, toolReply), TextToolWithoutCall},
		{"tool reply to another call", OpenAI, "", false, chatBody("gpt-4.1", true, sys, usr, noReasoning, strings.Replace(toolReply, "call_1", "call_2", 1)), MsgToolCallsWithoutResponse([]string{"call_1"})},
		{"bad role", OpenAI, "", false, chatBody("gpt-4.1", true, `{"role":"robot","content":"x"}`), "Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseChat([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			v := ChatValidator{Dialect: c.dialect, Thinking: ThinkingOn(c.dialect, r), Scope: c.scope, RejectEmpty: c.strict}
			got := ""
			if e := v.Validate(r); e != nil {
				got = e.Message
				if e.Status != 400 {
					t.Errorf("status %d", e.Status)
				}
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestThinkingOn(t *testing.T) {
	cases := []struct {
		d    Dialect
		body string
		want bool
	}{
		{DeepSeek, `{"model":"deepseek-reasoner"}`, true},
		{DeepSeek, `{"model":"deepseek-chat"}`, false},
		{DeepSeek, `{"model":"deepseek-chat","thinking":{"type":"enabled"}}`, true},
		{DeepSeek, `{"model":"deepseek-v4-pro","thinking":{"type":"disabled"}}`, false},
		{DeepSeek, `{"model":"deepseek-v4-pro"}`, true},
		{Moonshot, `{"model":"kimi-k2-instruct"}`, false},
		{Moonshot, `{"model":"kimi-k2.6"}`, true},
		{OpenAI, `{"model":"gpt-5.2"}`, false},
	}
	for _, c := range cases {
		r, err := ParseChat([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if got := ThinkingOn(c.d, r); got != c.want {
			t.Errorf("ThinkingOn(%s, %s) = %v", c.d, c.body, got)
		}
	}
}

func TestErrorBodies(t *testing.T) {
	cases := []struct {
		e    *APIError
		want string
	}{
		{invalid(DeepSeek, nil, "%s", "m"), `{"error":{"code":"invalid_request_error","message":"m","param":null,"type":"invalid_request_error"}}`},
		{invalid(Moonshot, nil, "%s", "m"), `{"error":{"message":"m","type":"invalid_request_error"}}`},
		{invalid(OpenAI, str("input"), "%s", "m"), `{"error":{"code":null,"message":"m","param":"input","type":"invalid_request_error"}}`},
		{itemNotFound("rs_1"), `{"error":{"code":null,"message":"` + strings.ReplaceAll(MsgItemNotFound("rs_1"), "`", "`") + `","param":"input","type":"invalid_request_error"}}`},
	}
	for _, c := range cases {
		if got := string(c.e.Body()); got != c.want {
			t.Errorf("body\n got %s\nwant %s", got, c.want)
		}
	}
	if itemNotFound("rs_1").Status != 404 {
		t.Errorf("not found is not 404")
	}
}

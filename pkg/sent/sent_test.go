package sent_test

import (
	"os"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func loadReal(t *testing.T, dir string) map[string]*store.Session {
	t.Helper()
	out := map[string]*store.Session{}
	for _, s := range storetest.LoadAll(t, storetest.OpenOne(t, "../../testdata/real/"+dir+"/opencode.db")) {
		key := s.Info.Get("title").String()
		if _, dup := out[key]; dup || key == "Mock session title" {
			key = s.ID
		}
		out[key] = s
	}
	return out
}

// TestRealRequests: the requests a resume of the recorded sessions sends,
// entry by entry, as the mocks received them (internal/opencodetest/
// OBSERVED.md, "What 1.18.33 sends back").
func TestRealRequests(t *testing.T) {
	const toolLoopChat = "0 system []\n1 user [text]\n2 assistant [reasoning tool_use] reasoning_content\n3 tool [tool_result]\n4 assistant [reasoning text] reasoning_content\n5 user [text]\n"
	cases := []struct {
		dir, title string
		family     sent.Family
		interleave bool
		want       string
	}{
		{"opencode-1.18.33-openai-compatible", "deepseek tool loop", sent.Chat, true, toolLoopChat},
		{"opencode-1.18.33-openai-compatible", "kimi tool loop", sent.Chat, true, toolLoopChat},
		{"opencode-1.18.33-openai-compatible", "kimi-custom tool loop", sent.Chat, false, toolLoopChat},
		// No reasoning stored: the interleaved deepseek provider still sends
		// reasoning_content ("").
		{"opencode-1.18.33-openai-compatible", "deepseek-chat tool loop", sent.Chat, true,
			"0 system []\n1 user [text]\n2 assistant [tool_use] reasoning_content\n3 tool [tool_result]\n4 assistant [text] reasoning_content\n5 user [text]\n"},
		{"opencode-1.18.33-openai-responses", "openai tool loop", sent.Responses, false,
			"0 developer []\n1 user [text]\n2 reasoning [reasoning(signed)]\n3 function_call [tool_use]\n4 function_call_output [tool_result]\n5 reasoning [reasoning(signed)]\n6 assistant [text]\n7 user [text]\n"},
		// OpenCode Zen's GPT model: the same package, the same request.
		{"opencode-1.18.33-zen", "zen tool loop", sent.Responses, false,
			"0 developer []\n1 user [text]\n2 reasoning [reasoning(signed)]\n3 function_call [tool_use]\n4 function_call_output [tool_result]\n5 reasoning [reasoning(signed)]\n6 assistant [text]\n7 user [text]\n"},
	}
	for _, c := range cases {
		t.Run(c.title, func(t *testing.T) {
			s := loadReal(t, c.dir)[c.title]
			if s == nil {
				t.Fatalf("no session %q", c.title)
			}
			r := sent.Build(s, sent.Options{NextPrompt: true})
			if r.Kind != c.family || r.Interleaved != c.interleave || !r.Thinking && c.title != "deepseek-chat tool loop" {
				t.Errorf("family %s interleaved %v thinking %v", r.Kind, r.Interleaved, r.Thinking)
			}
			if got := render(r); got != c.want {
				t.Errorf("request\n%swant\n%s", got, c.want)
			}
		})
	}
	for dir, want := range map[string]string{
		"opencode-1.18.33-google": "0 user [text]\n1 model [thought tool_use(signed)]\n2 user [tool_result]\n3 model [thought text]\n4 user [text]\n",
		// OpenCode Zen's Gemini model: the same package, the same request.
		"opencode-1.18.33-zen-gemini":     "0 user [text]\n1 model [thought tool_use(signed)]\n2 user [tool_result]\n3 model [thought text]\n4 user [text]\n",
		"opencode-1.18.33-amazon-bedrock": "0 user [text]\n1 assistant [thinking tool_use]\n2 user [tool_result]\n3 assistant [thinking text]\n4 user [text]\n",
	} {
		found := false
		for _, s := range loadReal(t, dir) {
			found = found || render(sent.Build(s, sent.Options{NextPrompt: true})) == want
		}
		if !found {
			t.Errorf("%s: no session sends\n%s", dir, want)
		}
	}
}

func TestFamilyOf(t *testing.T) {
	for _, c := range []struct {
		p, m string
		want sent.Family
	}{
		{"anthropic", "claude-sonnet-4-5", sent.Anthropic},
		{"google-vertex-anthropic", "claude-opus-4-1@20250805", sent.Anthropic},
		{"", "", sent.Anthropic},
		{"amazon-bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0", sent.Bedrock},
		{"openai", "gpt-5.2", sent.Responses},
		{"azure", "gpt-5", sent.Responses},
		{"google", "gemini-3-flash-preview", sent.Google},
		{"deepseek", "deepseek-v4-pro", sent.Chat},
		{"moonshotai", "kimi-k2.6", sent.Chat},
		{"kimi", "kimi-k2-thinking", sent.Chat},
		{"nano-gpt", "deepseek-r1", sent.Chat},
		{"groq", "llama-3.3-70b", sent.Other},
		// OpenCode 1.18.33 sends Copilot's Claude models through
		// @ai-sdk/anthropic; its GPT and Gemini models through its own
		// Chat Completions and Responses package.
		{"github-copilot", "claude-sonnet-4.5", sent.Anthropic},
		{"github-copilot", "claude-opus-4.5", sent.Anthropic},
		{"github-copilot", "gpt-5.2", sent.Other},
		{"github-copilot", "gemini-3-pro-preview", sent.Other},
		// OpenCode Zen: the package 1.18.33's catalogue names for each
		// model; models whose API is neither OpenAI's nor Google's stay
		// Other even where the package is @ai-sdk/openai or
		// @ai-sdk/anthropic.
		{"opencode", "claude-opus-4-5", sent.Anthropic},
		{"opencode", "gpt-5.2", sent.Responses},
		{"opencode", "gpt-5.1-codex-max", sent.Responses},
		{"opencode", "gemini-3-flash", sent.Google},
		{"opencode", "kimi-k2.5", sent.Chat},
		{"opencode", "grok-4.6", sent.Other},
		{"opencode", "muse-spark-1.3", sent.Other},
		{"opencode", "qwen3.6-plus", sent.Other},
		{"opencode", "big-pickle", sent.Other},
	} {
		if got := sent.FamilyOf(c.p, c.m); got != c.want {
			t.Errorf("FamilyOf(%q, %q) = %s, want %s", c.p, c.m, got, c.want)
		}
	}
	for _, c := range []struct {
		p, m string
		want bool
	}{
		{"deepseek", "deepseek-chat", true},
		{"moonshotai", "kimi-k2.6", true},
		{"kimi", "kimi-k2-thinking", false},
		{"my-host", "deepseek-reasoner", true},
		{"nano-gpt", "deepseek-reasoner", false},
	} {
		if got := sent.Interleaved(c.p, c.m); got != c.want {
			t.Errorf("Interleaved(%q, %q) = %v", c.p, c.m, got)
		}
	}
}

// TestLocateIndexForms maps every index form back to the stored records
// of a recorded session.
func TestLocateIndexForms(t *testing.T) {
	chat := loadReal(t, "opencode-1.18.33-openai-compatible")["kimi-custom tool loop"]
	resp := loadReal(t, "opencode-1.18.33-openai-responses")["openai tool loop"]
	var gem *store.Session
	for _, s := range loadReal(t, "opencode-1.18.33-google") {
		if strings.Contains(render(sent.Build(s, sent.Options{})), "tool_use") {
			gem = s
		}
	}
	toolPart := func(s *store.Session, typ string) (string, string) {
		for _, m := range s.Messages {
			for _, p := range m.Parts {
				if p.Type == typ {
					return m.ID, p.ID
				}
			}
		}
		t.Fatalf("no %s part", typ)
		return "", ""
	}
	chatMsg, chatTool := toolPart(chat, "tool")
	respMsg, respReasoning := toolPart(resp, "reasoning")
	_, respTool := toolPart(resp, "tool")
	gemMsg, gemTool := toolPart(gem, "tool")
	cases := []struct {
		s          *store.Session
		index      string
		msg, part  string
		errContain string
	}{
		{chat, "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2", chatMsg, "", ""},
		{chat, "Missing `reasoning_content` field in the assistant message at message index 2. For more", chatMsg, "", ""},
		{chat, "Invalid 'messages[3].content'", chatMsg, chatTool, ""},
		{chat, "messages[0]", "", "", "system prompt"},
		{chat, "at index 5", "", "", "next prompt"},
		{chat, "at index 9", "", "", "outside the 6 messages"},
		{resp, "Invalid 'input[2].id': ''.", respMsg, respReasoning, ""},
		{resp, "input[3]", respMsg, respTool, ""},
		{resp, "input[0]", "", "", "developer prompt"},
		{resp, "input[20]", "", "", "outside the 8 input items"},
		{gem, "contents[1].parts[1]", gemMsg, "", ""},
		{gem, "function call `default_api:bash`, position 2.", gemMsg, "", ""},
		{gem, "contents[2]", gemMsg, gemTool, ""},
		{chat, "no index here", "", "", "holds no index"},
	}
	for _, c := range cases {
		r := sent.Build(c.s, sent.Options{NextPrompt: true})
		msg, part, err := r.LocateIndex(c.index)
		if c.errContain != "" {
			if err == nil || !strings.Contains(err.Error(), c.errContain) {
				t.Errorf("%s: %q %q %v, want an error about %q", c.index, msg, part, err, c.errContain)
			}
			continue
		}
		if err != nil || msg != c.msg || part != c.part {
			t.Errorf("%s: %q %q %v, want %q %q", c.index, msg, part, err, c.msg, c.part)
		}
	}
}

func TestParseIndex(t *testing.T) {
	for _, c := range []struct {
		text string
		form sent.Form
		n, m int
	}{
		{"messages.3.content.1: Invalid `signature` in `thinking` block", sent.FormMessages, 3, 1},
		{"The content field in the Message object at messages.4 is empty", sent.FormMessages, 4, -1},
		{"Invalid 'input[7].id': ''.", sent.FormInput, 7, -1},
		{"at message index 12.", sent.FormAtIndex, 12, -1},
		{"Please ensure that function call turn comes immediately after a user turn or after a function response turn. contents[3]", sent.FormContents, 3, -1},
		{"additional data, function call `default_api:bash`, position 2.", sent.FormPosition, 2, -1},
	} {
		ix, ok := sent.ParseIndex(c.text)
		if !ok || ix.Form != c.form || ix.N != c.n || ix.M != c.m {
			t.Errorf("ParseIndex(%q) = %+v %v", c.text, ix, ok)
		}
	}
}

// OpenCode 1.18.33 resumes a session with its row's model (TestUnknownModel
// in e2e: a retired model in the row fails the resume whatever the
// messages name), so the next request goes to that model's family.
func TestCurrentModelIsTheSessionRows(t *testing.T) {
	path := t.TempDir() + "/opencode.db"
	b, err := os.ReadFile("../../testdata/real/opencode-1.18.33/opencode.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "ses_e012acd97ffeUavLGQWWTi4jHW"
	storetest.ExecSQL(t, path, `UPDATE session SET model = '{"id":"gpt-5.2","providerID":"openai","variant":"default"}' WHERE id = '`+id+`'`)
	for _, s := range storetest.LoadAll(t, storetest.OpenOne(t, path)) {
		p, m := sent.CurrentModel(s)
		want := "anthropic/claude-sonnet-4-5" // what the messages name
		if s.ID == id {
			want = "openai/gpt-5.2"
		}
		if p+"/"+m != want {
			t.Errorf("%s: CurrentModel = %s/%s, want %s", s.ID, p, m, want)
		}
	}
}

// An export holding a prompt twice (the copy appended at its end, as when
// two exports are merged) is sent as opencode import leaves it: with the
// first copy only.
func TestDuplicateMessageSentOnce(t *testing.T) {
	const dup = "msg_cb391ded4000uFTrF3usp5IgwN"
	sessions := storetest.LoadAll(t, storetest.OpenOne(t, "../../testdata/sessions/sf204-duplicate-export-negative/session.json"))
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	r := sent.Build(sessions[0], sent.Options{})
	var entries []string
	n := 0
	for _, pm := range r.Messages {
		entries = append(entries, pm.Role+" "+strings.Join(pm.Sources, "+"))
		for _, src := range pm.Sources {
			if src == dup {
				n++
			}
		}
	}
	if n != 1 || r.Messages[len(r.Messages)-1].Role != "assistant" {
		t.Errorf("the request carries %s %d times, want once, ending with its answer:\n%s", dup, n, strings.Join(entries, "\n"))
	}
}

// Copilot's Claude models are the Messages API in OpenCode 1.2 and later
// stores, and not modelled in the JSON era's: OpenCode 1.1.65 sent them
// through its Chat Completions package (reasoning_opaque).
func TestCopilotClaudeFamilyByVersion(t *testing.T) {
	for _, c := range []struct {
		shape store.Shape
		want  sent.Family
	}{
		{store.ShapeSQLite, sent.Anthropic},
		{store.ShapeStorage, sent.Other},
	} {
		s := &store.Session{Store: store.Info{Shape: c.shape}, ID: "ses_1"}
		m, err := store.NewMessage(store.Record{ID: "msg_1", Raw: []byte(`{"id":"msg_1","sessionID":"ses_1","role":"assistant","providerID":"github-copilot","modelID":"claude-sonnet-4.5"}`)}, "ses_1")
		if err != nil {
			t.Fatal(err)
		}
		s.Messages = append(s.Messages, m)
		if got := sent.Build(s, sent.Options{}).Kind; got != c.want {
			t.Errorf("%s store: request family %s, want %s", c.shape, got, c.want)
		}
	}
}

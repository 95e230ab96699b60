package scan

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

func familyUser(id, provider, model string) *store.Message {
	return testMessage(id, "user", `{"role":"user","model":{"providerID":"`+provider+`","modelID":"`+model+`"}}`, `{"type":"text","text":"go"}`)
}

// TestFamilyPredictions: the texts the recorded breaks got from the strict
// mocks (OBSERVED.md, "Break → rejection → repair" and
// testdata/providers-1.18.33.golden), predicted from storage alone.
func TestFamilyPredictions(t *testing.T) {
	const bedrockModel = "anthropic.claude-sonnet-4-5-20250929-v1:0"
	bedrockAsst := `{"role":"assistant","providerID":"amazon-bedrock","modelID":"` + bedrockModel + `","time":{"created":2,"completed":3},"finish":"tool-calls"}`
	bedrockKilled := `{"role":"assistant","providerID":"amazon-bedrock","modelID":"` + bedrockModel + `","time":{"created":2}}`
	signedBedrock := `{"type":"reasoning","text":"plan","metadata":{"bedrock":{"signature":"sig"}}}`
	kimiAsst := `{"role":"assistant","providerID":"kimi","modelID":"kimi-k2-thinking","time":{"created":2,"completed":3},"finish":"tool-calls"}`
	kimiOpen := `{"role":"assistant","providerID":"kimi","modelID":"kimi-k2-thinking","time":{"created":2}}`
	openaiKilled := `{"role":"assistant","providerID":"openai","modelID":"gpt-5.2","time":{"created":2}}`
	cases := []struct {
		name  string
		s     *store.Session
		code  string
		sev   Severity
		text  string
		index string
		part  string
	}{
		{"bedrock: blank text between signed reasoning and a call", session(store.ShapeSQLite,
			familyUser("u1", "amazon-bedrock", bedrockModel),
			testMessage("a1", "assistant", bedrockAsst, `{"type":"step-start"}`, signedBedrock, `{"type":"text","text":"\n\n"}`, toolDone)),
			"SF160", Error, "The text field in the ContentBlock object at messages.1.content.1 is blank. Add text to the text field, and try again.", "messages.1.content.1", "a1-c"},
		{"bedrock: kill mid-text", session(store.ShapeSQLite,
			familyUser("u1", "amazon-bedrock", bedrockModel),
			testMessage("a1", "assistant", bedrockKilled, `{"type":"step-start"}`, signedBedrock, `{"type":"text","text":""}`)),
			"SF155", Error, "messages.1: The final block in an assistant message cannot be `thinking`.", "messages.1", "a1-b"},
		{"kimi: a tool step without reasoning, before the last user message", session(store.ShapeSQLite,
			familyUser("u1", "kimi", "kimi-k2-thinking"),
			testMessage("a1", "assistant", kimiAsst, `{"type":"step-start"}`, toolDone),
			familyUser("u2", "kimi", "kimi-k2-thinking")),
			"SF163", Warning, "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2", "messages[2]", "a1-b"},
		{"kimi: the tool step opencode continues", session(store.ShapeSQLite,
			familyUser("u1", "kimi", "kimi-k2-thinking"),
			testMessage("a1", "assistant", kimiOpen, `{"type":"step-start"}`, `{"type":"reasoning","text":""}`, toolDone)),
			"SF163", Error, "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2", "messages[2]", "a1-c"},
		{"deepseek v4 through a host without interleaved", session(store.ShapeSQLite,
			familyUser("u1", "nano-gpt", "deepseek-v4-pro"),
			testMessage("a1", "assistant", `{"role":"assistant","providerID":"nano-gpt","modelID":"deepseek-v4-pro","time":{"created":2,"completed":3},"finish":"tool-calls"}`,
				`{"type":"step-start"}`, `{"type":"reasoning","text":"plan"}`, toolDone, `{"type":"step-start"}`, toolDone),
			familyUser("u2", "nano-gpt", "deepseek-v4-pro")),
			"SF163", Warning, "The `reasoning_content` in the thinking mode must be passed back to the API.", "messages[4]", "a1-e"},
		{"interleaved kimi: an earlier tool step without reasoning goes with \"\"", session(store.ShapeSQLite,
			familyUser("u1", "moonshotai", "kimi-k2.6"),
			testMessage("a1", "assistant", `{"role":"assistant","providerID":"moonshotai","modelID":"kimi-k2.6","time":{"created":2,"completed":3},"finish":"tool-calls"}`,
				`{"type":"step-start"}`, `{"type":"reasoning","text":"plan"}`, toolDone, `{"type":"step-start"}`, toolDone),
			familyUser("u2", "moonshotai", "kimi-k2.6")),
			"SF163", Warning, "thinking is enabled but reasoning_content is missing in assistant tool call message at index 4", "messages[4]", "a1-e"},
		{"deepseek: the tool step opencode continues goes with \"\": still a warning", session(store.ShapeSQLite,
			familyUser("u1", "deepseek", "deepseek-reasoner"),
			testMessage("a1", "assistant", `{"role":"assistant","providerID":"deepseek","modelID":"deepseek-reasoner","time":{"created":2}}`,
				`{"type":"step-start"}`, toolDone)),
			"SF163", Warning, "Missing `reasoning_content` field in the assistant message at message index 2. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls", "messages[2]", "a1-b"},
		{"deepseek-chat turns, then deepseek-reasoner", session(store.ShapeSQLite,
			familyUser("u1", "deepseek", "deepseek-chat"),
			testMessage("a1", "assistant", `{"role":"assistant","providerID":"deepseek","modelID":"deepseek-chat","time":{"created":2,"completed":3},"finish":"tool-calls"}`,
				`{"type":"step-start"}`, toolDone),
			familyUser("u2", "deepseek", "deepseek-reasoner")),
			"SF163", Warning, "Missing `reasoning_content` field in the assistant message at message index 2. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls", "messages[2]", "a1-b"},
		{"openai: kill after the reasoning item", session(store.ShapeSQLite,
			familyUser("u1", "openai", "gpt-5.2"),
			testMessage("a1", "assistant", openaiKilled, `{"type":"step-start"}`,
				`{"type":"reasoning","text":"plan","metadata":{"openai":{"itemId":"rs_abc","reasoningEncryptedContent":"enc"}}}`)),
			"SF164", Error, "Item 'rs_abc' of type 'reasoning' was provided without its required following item.", "input[2]", "a1-b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := Preflight(c.s, settled())
			if len(vs) == 0 {
				t.Fatalf("no violation\n%s", renderRequest(sent.Build(c.s, sent.Options{NextPrompt: true})))
			}
			v := vs[0]
			if v.Code != c.code || v.ProviderError != c.text || v.Index != c.index || v.PartID != c.part || v.Severity.orError() != c.sev {
				t.Errorf("got %s %s %q at %s part %s\nwant %s %s %q at %s part %s", v.Code, v.Severity.orError(), v.ProviderError, v.Index, v.PartID,
					c.code, c.sev, c.text, c.index, c.part)
			}
		})
	}
}

// orError is the severity a preflight violation is reported with (unset
// means the rule's, Error).
func (s Severity) orError() Severity {
	if s == 0 {
		return Error
	}
	return s
}

// TestFamilyNegatives: what the recorded kills and switches showed the
// APIs accept is not reported.
func TestFamilyNegatives(t *testing.T) {
	moon := `{"role":"assistant","providerID":"moonshotai","modelID":"kimi-k2.6","time":{"created":2,"completed":3},"finish":"tool-calls"}`
	killed := `{"role":"assistant","providerID":"openai","modelID":"gpt-5.2","time":{"created":2}}`
	for name, s := range map[string]*store.Session{
		"interleaved kimi with reasoning": session(store.ShapeSQLite, familyUser("u1", "moonshotai", "kimi-k2.6"),
			testMessage("a1", "assistant", moon, `{"type":"step-start"}`, `{"type":"reasoning","text":"plan"}`, toolDone), familyUser("u2", "moonshotai", "kimi-k2.6")),
		"deepseek-chat does not think": session(store.ShapeSQLite, familyUser("u1", "deepseek", "deepseek-chat"),
			testMessage("a1", "assistant", `{"role":"assistant","providerID":"deepseek","modelID":"deepseek-chat","time":{"created":2,"completed":3},"finish":"tool-calls"}`,
				`{"type":"step-start"}`, toolDone), familyUser("u2", "deepseek", "deepseek-chat")),
		"openai killed mid-reasoning": session(store.ShapeSQLite, familyUser("u1", "openai", "gpt-5.2"),
			testMessage("a1", "assistant", killed, `{"type":"step-start"}`,
				`{"type":"reasoning","text":"","metadata":{"openai":{"itemId":"rs_1","reasoningEncryptedContent":null}}}`)),
		"openai killed mid-text": session(store.ShapeSQLite, familyUser("u1", "openai", "gpt-5.2"),
			testMessage("a1", "assistant", killed, `{"type":"step-start"}`,
				`{"type":"reasoning","text":"plan","metadata":{"openai":{"itemId":"rs_1","reasoningEncryptedContent":"enc"}}}`,
				`{"type":"text","text":"","metadata":{"openai":{"itemId":"msg_1"}}}`)),
	} {
		for _, f := range CheckSession(s, settled()) {
			// Record and preflight rules (the records themselves are
			// minimal, so the schema rules have their say elsewhere).
			if f.Severity > Info && strings.HasPrefix(f.Code, "SF1") {
				t.Errorf("%s: %s %s %s", name, f.Severity, f.Code, f.Message)
			}
		}
	}
}

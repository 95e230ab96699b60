package scan

import (
	"slices"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// withConfig is settled() reading OpenCode's config from content.
func withConfig(content string) *Options {
	o := settled()
	o.OpenCode = ocenv.NewResolver(ocenv.Env{Getenv: func(k string) string {
		if k == "OPENCODE_CONFIG_CONTENT" {
			return content
		}
		return ""
	}})
	return o
}

// vllmSession is a session with a vision model on a vLLM server the user
// added as the provider "vllm": a turn whose read results are long.
func vllmSession() *store.Session {
	asst := `{"role":"assistant","providerID":"vllm","modelID":"qwen3-vl","time":{"created":2,"completed":3},"finish":"tool-calls"}`
	s := session(store.ShapeSQLite,
		familyUser("u1", "vllm", "qwen3-vl"),
		testMessage("a1", "assistant", asst, `{"type":"step-start"}`, readPart(1, 20000), readPart(2, 20000)))
	s.Info = &store.Record{Raw: []byte(`{"directory":"/work/x"}`)}
	return s
}

// TestProviderPackageFamily: a provider the user added whose package is
// @ai-sdk/openai-compatible (named in the config for the provider or the
// model, or OpenCode's default for a model the config defines) gets the
// request OpenCode sends it, Chat Completions' (tool results as tool
// messages), and its errors: a history over the window the config gives is
// predicted with the Chat Completions text vLLM answers, not Anthropic's.
// A package sessfix does not model adds no family.
func TestProviderPackageFamily(t *testing.T) {
	const limit = `"limit":{"context":4000,"output":1000}`
	for name, c := range map[string]struct {
		cfg  string
		kind sent.Family
		text string
	}{
		"npm named":       {`{"provider":{"vllm":{"npm":"@ai-sdk/openai-compatible","models":{"qwen3-vl":{` + limit + `}}}}}`, sent.Chat, "This model's maximum context length is 4000 tokens."},
		"npm defaulted":   {`{"provider":{"vllm":{"options":{"baseURL":"http://gpu:8000/v1"},"models":{"qwen3-vl":{` + limit + `}}}}}`, sent.Chat, "This model's maximum context length is 4000 tokens."},
		"model's own":     {`{"provider":{"vllm":{"npm":"@ai-sdk/groq","models":{"qwen3-vl":{` + limit + `,"provider":{"npm":"@ai-sdk/openai-compatible"}}}}}}`, sent.Chat, "This model's maximum context length is 4000 tokens."},
		"another package": {`{"provider":{"vllm":{"npm":"@ai-sdk/groq","models":{"qwen3-vl":{` + limit + `}}}}}`, sent.Other, "prompt is too long:"},
	} {
		t.Run(name, func(t *testing.T) {
			s := vllmSession()
			got := findingsOf(CheckSession(s, withConfig(c.cfg)), SF174)
			if len(got) != 1 || !strings.HasPrefix(got[0].ProviderError, c.text) {
				t.Fatalf("SF174: %+v, want one predicting %q", got, c.text)
			}
			r := sent.Build(s, sent.Options{NextPrompt: true})
			roles := []string{}
			for _, m := range r.Messages {
				roles = append(roles, m.Role)
			}
			if r.Kind != c.kind {
				t.Errorf("request family %s, want %s (roles %v)", r.Kind, c.kind, roles)
			}
			if tool := slices.Contains(roles, "tool"); tool != (c.kind == sent.Chat) {
				t.Errorf("roles %v: a tool message is %v, want %v", roles, tool, c.kind == sent.Chat)
			}
		})
	}
}

// TestClaudeBehindAProxyKeepsAnthropicRules: a Claude model behind a
// provider on @ai-sdk/openai-compatible (a LiteLLM-style proxy) stays of no
// family, so the record rules of Anthropic's API, which judges its history
// in the end, keep reporting: a whitespace-only text before a tool call
// (SF104, which the Chat family leaves to its own rules) is still found.
func TestClaudeBehindAProxyKeepsAnthropicRules(t *testing.T) {
	asst := `{"role":"assistant","providerID":"litellm","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"tool-calls"}`
	s := session(store.ShapeSQLite,
		familyUser("u1", "litellm", "claude-sonnet-4-5"),
		testMessage("a1", "assistant", asst, `{"type":"step-start"}`, `{"type":"text","text":" "}`, toolDone),
		familyUser("u2", "litellm", "claude-sonnet-4-5"))
	s.Info = &store.Record{Raw: []byte(`{"directory":"/work/x"}`)}
	cfg := withConfig(`{"provider":{"litellm":{"npm":"@ai-sdk/openai-compatible","models":{"claude-sonnet-4-5":{}}}}}`)
	before := CheckSession(session(store.ShapeSQLite, s.Messages...), settled())
	after := CheckSession(s, cfg)
	if sent.FamilyIn(s, "litellm", "claude-sonnet-4-5") != sent.Other {
		t.Errorf("Claude behind litellm: family %s, want other", sent.FamilyIn(s, "litellm", "claude-sonnet-4-5"))
	}
	if codes(after) != codes(before) {
		t.Errorf("with the config the findings are %s, without %s", codes(after), codes(before))
	}
	anthropic := false
	for _, f := range before {
		anthropic = anthropic || f.Severity > Info && f.Code == SF104
	}
	if !anthropic {
		t.Fatalf("without the config: %s, no SF104; the test shows nothing", codes(before))
	}
}

func codes(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code+"/"+f.Severity.String())
	}
	return strings.Join(out, " ")
}

// TestReasoningContentOnlyForItsAPIs: the reasoning_content rule (SF163)
// is DeepSeek's and Kimi's; a Chat Completions server that does not check
// it (a vLLM model with reasoning) is not told it would refuse, while Kimi
// through a provider the user added still is.
func TestReasoningContentOnlyForItsAPIs(t *testing.T) {
	step := func(provider, model string) *store.Session {
		asst := `{"role":"assistant","providerID":"` + provider + `","modelID":"` + model + `","time":{"created":2,"completed":3},"finish":"tool-calls"}`
		s := session(store.ShapeSQLite,
			familyUser("u1", provider, model),
			testMessage("a0", "assistant", asst, `{"type":"step-start"}`, `{"type":"reasoning","text":"plan"}`, `{"type":"text","text":"ok"}`),
			testMessage("a1", "assistant", asst, `{"type":"step-start"}`, toolDone),
			familyUser("u2", provider, model))
		s.Info = &store.Record{Raw: []byte(`{"directory":"/work/x"}`)}
		return s
	}
	cfg := withConfig(`{"provider":{"vllm":{"models":{"qwen3-vl":{}}},"mykimi":{"models":{"kimi-k2-thinking":{}}}}}`)
	if got := findingsOf(CheckSession(step("vllm", "qwen3-vl"), cfg), SF163); len(got) != 0 {
		t.Errorf("vLLM: %d SF163 findings: %s", len(got), got[0].Message)
	}
	if got := findingsOf(CheckSession(step("mykimi", "kimi-k2-thinking"), cfg), SF163); len(got) == 0 {
		t.Error("Kimi through the user's provider: no SF163 finding")
	}
}

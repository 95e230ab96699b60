package opencode

import (
	"testing"

	"github.com/sessfix/sessfix/pkg/sent"
)

// Shrinking takes the family's own size limit where sessfix checks one,
// and Anthropic's where it checks none (Gemini: only data that is no
// image), never a limit of zero.
func TestSizeLimitOf(t *testing.T) {
	for _, c := range []struct {
		kind     sent.Family
		provider string
		want     string
	}{
		{sent.Anthropic, "anthropic", "Anthropic"},
		{sent.Responses, "openai", "OpenAI"},
		// OpenCode Zen's GPT models: OpenAI's API behind Zen's proxy.
		{sent.Responses, "opencode", "OpenAI"},
		{sent.Anthropic, "opencode", "OpenCode Console"},
		// Azure's limits are its own: not checked, shrunk within Anthropic's.
		{sent.Responses, "azure", "Anthropic"},
		{sent.Google, "google", "Anthropic"},
		{sent.Chat, "deepseek", "Anthropic"},
	} {
		l := SizeLimitOf(&sent.Request{Kind: c.kind, ProviderID: c.provider})
		if l.Provider != c.want || l.base64Max() <= 0 {
			t.Errorf("%s/%s: %s, base64 at most %d", c.kind, c.provider, l.Provider, l.base64Max())
		}
	}
	if l, ok := ImageLimitOf(&sent.Request{Kind: sent.Google, ProviderID: "google"}); !ok || l.InvalidText != TextGeminiInvalidImage {
		t.Errorf("Gemini's limit: %+v %v", l, ok)
	}
}

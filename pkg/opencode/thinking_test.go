package opencode

import (
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func TestModelThinksByName(t *testing.T) {
	yes := []string{"claude-sonnet-4-5", "claude-opus-4-1", "claude-3-7-sonnet-20250219", "anthropic.claude-sonnet-4-20250514-v1:0",
		"claude-haiku-4-5", "gemini-2.0-flash-thinking-exp", "o3-high", "claude-opus-5", "Claude-Sonnet-4"}
	no := []string{"gpt-4.1", "gpt-5", "gemini-2.5-pro", "llama-3.3-70b", "claude-2.1", "high-speed", ""}
	for _, m := range yes {
		if !ModelThinksByName(m) {
			t.Errorf("ModelThinksByName(%q) = false", m)
		}
	}
	for _, m := range no {
		if ModelThinksByName(m) {
			t.Errorf("ModelThinksByName(%q) = true", m)
		}
	}
}

func TestThinkingEnabledByEvidence(t *testing.T) {
	gpt5 := `{"role":"assistant","providerID":"openai","modelID":"gpt-5"}`
	real := storetest.NewMessage("m1", "assistant", gpt5, `{"type":"step-start"}`, `{"type":"reasoning","text":"plan","metadata":{"openai":{"itemId":"rs_1"}}}`)
	synthetic := storetest.NewMessage("m2", "assistant", `{"role":"assistant","providerID":"openai","modelID":"gpt-4.1"}`,
		`{"type":"reasoning","text":"[Continuing from previous reasoning]","synthetic":true}`)
	s := &store.Session{Messages: []*store.Message{real, synthetic}}
	if !ThinkingEnabled(s, "openai", "gpt-5") {
		t.Error("reasoning produced by gpt-5 is not taken as evidence")
	}
	if ThinkingEnabled(s, "azure", "gpt-5") {
		t.Error("evidence from another provider counted")
	}
	if ThinkingEnabled(s, "openai", "gpt-4.1") {
		t.Error("a synthetic reasoning part counted as evidence")
	}
	if !ThinkingEnabled(nil, "anthropic", "claude-sonnet-4-5") {
		t.Error("name pattern ignored without a session")
	}
}

func TestNeedsSignature(t *testing.T) {
	for _, c := range []struct {
		provider, model string
		want            bool
	}{
		{"anthropic", "claude-sonnet-4-5", true},
		{"amazon-bedrock", "anthropic.claude-3-7-sonnet", true},
		{"google-vertex-anthropic", "claude-opus-4-1@20250805", true},
		{"opencode", "claude-sonnet-4-5", true},
		{"openai", "gpt-5", false},
		{"google", "gemini-2.5-pro", false},
	} {
		if got := NeedsSignature(c.provider, c.model); got != c.want {
			t.Errorf("NeedsSignature(%q, %q) = %v", c.provider, c.model, got)
		}
	}
}

// testMessage builds a message in memory (storetest.NewMessage).
var testMessage = storetest.NewMessage

package opencode

import (
	"fmt"
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

// TestThinkingOffShownByTheNewestTurn: a Claude model's name says it
// thinks, but OpenCode 1.18.33 turns thinking on only when asked; the
// first step of the newest turn the model answered shows which it was.
func TestThinkingOffShownByTheNewestTurn(t *testing.T) {
	const (
		claude   = `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":1,"completed":2},"finish":"tool-calls"}`
		open     = `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":1}}`
		failed   = `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":1,"completed":2},"error":{"name":"APIError"}}`
		summary  = `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":1,"completed":2},"summary":true}`
		kimi     = `{"role":"assistant","providerID":"moonshotai","modelID":"kimi-k2-thinking","time":{"created":1,"completed":2}}`
		user     = `{"role":"user"}`
		step     = `{"type":"step-start"}`
		tool     = `{"type":"tool","tool":"bash","state":{"status":"completed"}}`
		text     = `{"type":"text","text":"done"}`
		thinking = `{"type":"reasoning","text":"plan","metadata":{"anthropic":{"signature":"sig"}}}`
	)
	n := 0
	msg := func(role, body string, parts ...string) *store.Message {
		n++
		return storetest.NewMessage(fmt.Sprintf("m%02d", n), role, body, parts...)
	}
	u := func() *store.Message { return msg("user", user, `{"type":"text","text":"hi"}`) }
	for _, c := range []struct {
		name     string
		model    string
		msgs     []*store.Message
		enabled  bool // ThinkingEnabled
		thinks   bool // ModelThinks
		provider string
	}{
		{"a turn answered without thinking", "claude-sonnet-4-5",
			[]*store.Message{u(), msg("assistant", claude, step, tool)}, false, true, "anthropic"},
		{"a turn answered with thinking", "claude-sonnet-4-5",
			[]*store.Message{u(), msg("assistant", claude, step, thinking, tool)}, true, true, "anthropic"},
		{"the later steps of a tool loop carry no thinking", "claude-sonnet-4-5",
			[]*store.Message{u(), msg("assistant", claude, step, thinking, tool), msg("assistant", claude, step, text)}, true, true, "anthropic"},
		{"thinking turned on for the newest turn", "claude-sonnet-4-5",
			[]*store.Message{u(), msg("assistant", claude, step, text), u(), msg("assistant", claude, step, thinking, tool)}, true, true, "anthropic"},
		{"thinking turned off for the newest turn", "claude-sonnet-4-5",
			[]*store.Message{u(), msg("assistant", claude, step, thinking, text), u(), msg("assistant", claude, step, tool)}, false, true, "anthropic"},
		{"a turn still being answered shows nothing", "claude-sonnet-4-5",
			[]*store.Message{u(), msg("assistant", open, step, tool)}, true, true, "anthropic"},
		{"a failed turn shows nothing", "claude-sonnet-4-5",
			[]*store.Message{u(), msg("assistant", failed, step, text)}, true, true, "anthropic"},
		{"a compaction summary shows nothing", "claude-sonnet-4-5",
			[]*store.Message{u(), msg("assistant", summary, step, text)}, true, true, "anthropic"},
		{"another provider's turn shows nothing", "claude-sonnet-4-5",
			[]*store.Message{u(), msg("assistant", claude, step, tool)}, true, true, "amazon-bedrock"},
		{"a model that is not Claude keeps its name's answer", "kimi-k2-thinking",
			[]*store.Message{u(), msg("assistant", kimi, step, text)}, true, true, "moonshotai"},
	} {
		s := &store.Session{Messages: c.msgs}
		if got := ThinkingEnabled(s, c.provider, c.model); got != c.enabled {
			t.Errorf("%s: ThinkingEnabled = %v, want %v", c.name, got, c.enabled)
		}
		if got := ModelThinks(s, c.provider, c.model); got != c.thinks {
			t.Errorf("%s: ModelThinks = %v, want %v", c.name, got, c.thinks)
		}
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

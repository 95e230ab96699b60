package opencode

import (
	"strconv"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// The window is read from each context-window text a provider prints.
func TestContextLimitInError(t *testing.T) {
	for text, want := range map[string]int{
		"prompt is too long: 212345 tokens > 200000 maximum": 200000,
		`undefined: {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 50961 tokens > 40000 maximum"}}`: 40000,
		"input length and `max_tokens` exceed context limit: 187000 + 32000 > 200000, decrease input length or `max_tokens` and try again":  200000,
		"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.":                           128000,
		"Conversation history too large to compact - exceeds model context limit":                                                           0,
		// OpenAI Chat Completions (chathub-dev/chathub#126), as the stored body.
		`{"error":{"message":"This model's maximum context length is 4097 tokens. However, your messages resulted in 4619 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`: 4097,
		// The Responses API's stream error event, as OpenCode stores it
		// (anomalyco/opencode#6071): it prints no window.
		`{"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}`: 0,
		// Gemini (google-gemini/gemini-cli#4118).
		"The input token count (132478) exceeds the maximum number of tokens allowed (131072).":                                                                  131072,
		`{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`: 1048576,
	} {
		got, ok := ContextLimitInError(text)
		if got != want || ok != (want > 0) {
			t.Errorf("%q: %d %v, want %d", text, got, ok, want)
		}
	}
}

// OpenCode 1.18.33's usable context: the window less the answer's reserve
// (min(limit.output, 32000)), or limit.input less min(20000, reserve).
func TestContextWindowUsable(t *testing.T) {
	for _, c := range []struct {
		w           ContextWindow
		usable, tgt int
	}{
		{ContextWindow{Context: 200000, Output: 64000}, 168000, 151200},
		{ContextWindow{Context: 40000, Output: 4000}, 36000, 32400},
		{ContextWindow{Context: 40000}, 30000, 27000},
		{ContextWindow{Context: 400000, Input: 272000, Output: 128000}, 252000, 226800},
	} {
		if u, g := c.w.Usable(), c.w.Target(); u != c.usable || g != c.tgt {
			t.Errorf("%+v: usable %d target %d, want %d %d", c.w, u, g, c.usable, c.tgt)
		}
	}
}

// The newest error is a context overflow when its text says so, or when
// OpenCode named it ContextOverflowError and its text is of no other type:
// 1.18.33 stores an HTTP 413 as a ContextOverflowError too, which is a
// request over a size limit, not over the window.
func TestStoredOverflow(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       bool
	}{
		{"ContextOverflowError", "prompt is too long: 212345 tokens > 200000 maximum", true},
		{"ContextOverflowError", "Conversation exceeds the window (opencode's own words)", true},
		{"APIError", "prompt is too long: 212345 tokens > 200000 maximum", true},
		{"ContextOverflowError", "Request Entity Too Large", false},
		{"ContextOverflowError", "Payload Too Large", false},
		{"APIError", "Overloaded", false},
	} {
		body := `{"role":"assistant","error":{"name":` + strconv.Quote(c.name) + `,"data":{"message":` + strconv.Quote(c.text) + `}}}`
		s := &store.Session{Messages: []*store.Message{
			testMessage("m1", "user", `{"role":"user"}`, `{"type":"text","text":"hi"}`),
			testMessage("m2", "assistant", body),
		}}
		if got := StoredOverflow(s); got != c.want {
			t.Errorf("%s %q: StoredOverflow = %v, want %v", c.name, c.text, got, c.want)
		}
	}
}

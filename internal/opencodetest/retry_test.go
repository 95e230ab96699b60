//go:build acceptance

package opencodetest

import (
	"net/http"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// TestRetriedRefusals records which refusals OpenCode retries
// (OBSERVED.md, "Retries"), and that it reads the mocks' retry-after-ms
// header (mockstream.RetryAfterMS), the harness device that keeps the
// retries from waiting a minute a turn: 1.18.33 sends a 400 whose text
// holds "500" (or Anthropic's "5242880", which holds "524") six times and
// a 400 without them once; 1.1.65 sends either once. Each stored failure keeps the header among its responseHeaders.
func TestRetriedRefusals(t *testing.T) {
	cases := []struct {
		version, text string
		sends         int
	}{
		{V1_18, "Invalid 'input': over the limit of 50000000 bytes of images a request.", 6},
		{V1_18, "messages.1.content.0.image.source.base64: image exceeds 5 MB maximum: 5895160 bytes > 5242880 bytes", 6},
		{V1_18, "Invalid 'input': over the limit of 50 MB of images a request.", 1},
		{V1_1, "Invalid 'input': over the limit of 50000000 bytes of images a request.", 1},
	}
	for _, c := range cases {
		t.Run(c.version+"/"+c.text, func(t *testing.T) {
			t.Parallel()
			e := NewT(t, Options{Version: c.version, Model: OpenAIModel, Config: map[string]any{"compaction": map[string]any{"auto": false}}})
			e.OpenAI.SetScript(func(r *mockopenai.Request) mockopenai.Turn {
				return mockopenai.Turn{Error: &mockopenai.APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: c.text}}
			})
			res, err := e.Prompt(testCtx(t), "hello")
			if err != nil {
				t.Fatal(err)
			}
			if n := len(e.OpenAI.AgentRequests()); n != c.sends {
				t.Errorf("OpenCode sent the refused request %d times, want %d", n, c.sends)
			}
			sid := res.SessionID
			if sid == "" {
				ids, err := Sessions(e.DataDir())
				if err != nil || len(ids) != 1 {
					t.Fatalf("sessions %v, %v\n%s", ids, err, res)
				}
				sid = ids[0]
			}
			msgs, err := LoadSession(e.DataDir(), sid)
			if err != nil || len(msgs) == 0 {
				t.Fatalf("load %s: %d messages, %v", sid, len(msgs), err)
			}
			last := msgs[len(msgs)-1].Data
			if Get(last, "error.name") != "APIError" || Get(last, "error.data.message") != c.text || Get(last, "error.data.isRetryable") != false {
				t.Errorf("the stored failure: %v", last["error"])
			}
			if got := Get(last, "error.data.responseHeaders.retry-after-ms"); got != mockstream.RetryAfterMS {
				t.Errorf("the stored failure's retry-after-ms header %v, want %s", got, mockstream.RetryAfterMS)
			}
		})
	}
}

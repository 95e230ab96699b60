package sent_test

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/sent"
)

// TestBlockIndex: every entry and block of the recorded sessions' requests
// is named the way its provider names the place in its errors (the request
// bodies real OpenCode 1.18.33 sent, internal/opencodetest/OBSERVED.md).
func TestBlockIndex(t *testing.T) {
	labels := func(r *sent.Request) string {
		var b strings.Builder
		for n, pm := range r.Messages {
			b.WriteString(r.Index(n, -1) + ":")
			for m := range pm.Blocks {
				b.WriteString(" " + r.BlockIndex(n, m))
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	for _, c := range []struct{ dir, title, want string }{
		{"opencode-1.18.33-openai-responses", "openai tool loop",
			"input[0]:\ninput[1]: input[1].content[0]\ninput[2]: input[2]\ninput[3]: input[3]\ninput[4]: input[4]\ninput[5]: input[5]\ninput[6]: input[6]\ninput[7]: input[7].content[0]\n"},
		{"opencode-1.18.33-openai-compatible", "deepseek tool loop",
			"messages[0]:\nmessages[1]: messages[1].content\nmessages[2]: messages[2].reasoning_content messages[2].tool_calls[0]\nmessages[3]: messages[3]\n" +
				"messages[4]: messages[4].reasoning_content messages[4].content\nmessages[5]: messages[5].content\n"},
		{"opencode-1.18.33-google", "ses_df0407c55ffe7BV5b7SAernLWm",
			"contents[0]: contents[0].parts[0]\ncontents[1]: contents[1].parts[0] contents[1].parts[1]\ncontents[2]: contents[2].parts[0]\n" +
				"contents[3]: contents[3].parts[0] contents[3].parts[1]\ncontents[4]: contents[4].parts[0]\n"},
		{"opencode-1.18.33-amazon-bedrock", "ses_df04011bfffevqlvmDBFYFkpdd",
			"messages.0: messages.0.content.0\nmessages.1: messages.1.content.0 messages.1.content.1\nmessages.2: messages.2.content.0\n" +
				"messages.3: messages.3.content.0 messages.3.content.1\nmessages.4: messages.4.content.0\n"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			s := loadReal(t, c.dir)[c.title]
			if s == nil {
				t.Fatalf("no session %q", c.title)
			}
			if got := labels(sent.Build(s, sent.Options{NextPrompt: true})); got != c.want {
				t.Errorf("indexes\n%swant\n%s", got, c.want)
			}
		})
	}
}

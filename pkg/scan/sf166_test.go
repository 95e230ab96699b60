package scan

import (
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// toolIDSession is an Anthropic session whose tool parts have the callIDs
// given, the first message's parts in one step, the second's in another
// assistant message: ids repeat within a message or across messages.
func toolIDSession(first, second []string) *store.Session {
	tool := func(id string) string {
		return `{"type":"tool","callID":"` + id + `","tool":"bash","state":{"status":"completed","input":{},"output":"ok","time":{"start":1,"end":2}}}`
	}
	a1 := []string{`{"type":"step-start"}`}
	for _, id := range first {
		a1 = append(a1, tool(id))
	}
	a2 := []string{`{"type":"step-start"}`}
	for _, id := range second {
		a2 = append(a2, tool(id))
	}
	a2 = append(a2, `{"type":"step-finish","reason":"tool-calls"}`, `{"type":"step-start"}`, `{"type":"text","text":"done"}`)
	asst := `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"stop"}`
	return session(store.ShapeSQLite,
		familyUser("u1", "anthropic", "claude-sonnet-4-5"),
		testMessage("a1", "assistant", asst, a1...),
		familyUser("u2", "anthropic", "claude-sonnet-4-5"),
		testMessage("a2", "assistant", asst, a2...),
		familyUser("u3", "anthropic", "claude-sonnet-4-5"))
}

func TestSF166(t *testing.T) {
	for _, c := range []struct {
		name          string
		first, second []string
		want          []string // index: provider error, severity
	}{
		{"distinct ids", []string{"toolu_a", "toolu_b"}, []string{"toolu_c"}, nil},
		// Kimi K2's ids, rewritten by OpenCode for Claude: unlike each other.
		{"foreign ids opencode rewrites", []string{"functions.bash:0", "functions.bash:1"}, []string{"call_x"}, nil},
		{"an empty id", []string{"toolu_a", ""}, nil,
			[]string{"messages.1.content.1: messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$' error"}},
		{"two empty ids in one message", []string{"", ""}, nil,
			[]string{"messages.1.content.0: messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$' error",
				"messages.1.content.1: messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$' error"}},
		{"an id twice in one message", []string{"toolu_a", "toolu_a"}, nil,
			[]string{"messages.1.content.1: messages.1.content.1: `tool_use` ids must be unique error"}},
		// Kimi K2 numbers its calls per answer: the same id in a later turn.
		{"an id again in a later message", []string{"functions.bash:0"}, []string{"functions.bash:0"},
			[]string{"messages.3.content.0: messages.3.content.0: `tool_use` ids must be unique warning"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := toolIDSession(c.first, c.second)
			var got []string
			for _, f := range CheckSession(s, settled()) {
				if f.Code != SF166 {
					continue
				}
				got = append(got, f.Index+": "+f.ProviderError+" "+f.Severity.String())
				if f.Fix != "rekeyToolUseIDs" || f.ErrorType != "tool_use_id_invalid" || f.PartID == "" {
					t.Errorf("%s: fix %q error type %q part %q", f.Index, f.Fix, f.ErrorType, f.PartID)
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %q\nwant %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("got %q\nwant %q", got[i], c.want[i])
				}
			}
		})
	}
}

package scan

import (
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// mistralSession is an Anthropic turn with a tool call, then a user
// message on provider/model: the session's next request goes there.
func mistralSession(provider, model, callID string) *store.Session {
	tool := `{"type":"tool","callID":"` + callID + `","tool":"bash","state":{"status":"completed","input":{},"output":"ok","time":{"start":1,"end":2}}}`
	return session(store.ShapeSQLite,
		familyUser("u1", "anthropic", "claude-sonnet-4-5"),
		testMessage("a1", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"tool-calls"}`,
			`{"type":"step-start"}`, tool),
		testMessage("a2", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":4,"completed":5},"finish":"stop"}`,
			`{"type":"step-start"}`, `{"type":"text","text":"done"}`),
		familyUser("u2", provider, model))
}

func TestSF165(t *testing.T) {
	const anthropicID = "toolu_015A28zpZRXSYnqFEFmRyDA4Ws"
	for _, c := range []struct {
		name, provider, model, callID string
		want                          bool
	}{
		// What real OpenCode 1.18.33 sent (OBSERVED.md, "Mistral: tool call ids").
		{"magistral gets the stored id", "mistralcompat", "magistral-medium-latest", anthropicID, true},
		{"ministral too", "lechat", "ministral-8b-latest", "call_PTLP8xhu3uwZk4l3nlnrrJha", true},
		{"a model id naming mistralai gets the rewrite", "openrouter", "mistralai/ministral-8b", "call_PTLP8xhu3uwZk4l3nlnrrJha", false},
		{"devstral gets opencode's rewrite", "mistralcompat", "devstral-medium-latest", anthropicID, false},
		{"the mistral provider gets opencode's rewrite", "mistral", "magistral-medium-latest", anthropicID, false},
		{"an id of mistral's form", "mistralcompat", "magistral-medium-latest", "aB3xK9mP2", false},
		{"not a mistral model", "kimi", "kimi-k2-thinking", anthropicID, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mistralSession(c.provider, c.model, c.callID)
			var got []Violation
			for _, v := range Preflight(s, settled()) {
				if v.Code == SF165 {
					got = append(got, v)
				}
			}
			if !c.want {
				if len(got) > 0 {
					t.Fatalf("unexpected %+v", got)
				}
				return
			}
			want := "Tool call id was " + c.callID + " but must be a-z, A-Z, 0-9, with a length of 9."
			if len(got) != 1 || got[0].ProviderError != want || got[0].MessageID != "a1" || got[0].PartID != "a1-b" || got[0].Index != "messages[2]" || got[0].Fix != "rekeyCallIDs" {
				t.Fatalf("got %+v\nwant one violation %q on part a1-b at messages[2]", got, want)
			}
			fs := CheckSession(s, settled())
			for _, f := range fs {
				if f.Code == SF165 && (f.ErrorType != "tool_call_id_invalid" || f.Severity != Error) {
					t.Errorf("finding %s %s %s", f.Code, f.Severity, f.ErrorType)
				}
			}
		})
	}
}

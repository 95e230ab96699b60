//go:build acceptance

package opencodetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestSentIndexes: every index `sessfix show --sent` prints for a recorded
// session (sent.Request.Index and BlockIndex, the provider's own form) names
// a place in the request real OpenCode 1.18.33 sends when it resumes that
// session, and the request has as many entries as sessfix says. A block
// that carries a tool call id finds that id at its place (Gemini's calls
// and responses carry no id: @ai-sdk/google sends the name only).
func TestSentIndexes(t *testing.T) {
	for _, c := range []struct {
		name, store, model, title string
		bodies                    func(e *opencodetest.Env) [][]byte
		entries                   string // the body's array of entries
		callIDs                   bool   // the request carries tool call ids
	}{
		{"responses", storeResponses, opencodetest.OpenAIModel, "openai tool loop", openAIBodies, "input", true},
		{"chat", storeChat, opencodetest.DeepSeekModel, "deepseek tool loop", openAIBodies, "messages", true},
		{"google", "opencode-" + opencodetest.V1_18 + "-google", opencodetest.GoogleModel, "", func(e *opencodetest.Env) [][]byte {
			return bodiesOf(e.Gemini.ChatRequests())
		}, "contents", false},
		{"bedrock", "opencode-" + opencodetest.V1_18 + "-amazon-bedrock", opencodetest.BedrockModel, "", func(e *opencodetest.Env) [][]byte {
			return bodiesOf(e.Bedrock.ChatRequests())
		}, "messages", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			x := newPLab(t, opencodetest.Options{Model: c.model}, c.store)
			id := ""
			if c.title != "" {
				id = x.byTitle(c.title)
			}
			var req *sent.Request
			for _, s := range storetest.LoadAll(t, storetest.OpenOne(t, x.e.DBPath())) {
				r := sent.Build(s, sent.Options{NextPrompt: true})
				// Without a title: the session with a tool call.
				if s.ID == id || id == "" && strings.Contains(render(r), "tool_use") {
					id, req = s.ID, r
				}
			}
			if req == nil {
				t.Fatalf("no session %q in %s", c.title, c.store)
			}
			before := len(c.bodies(x.e))
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			res, err := x.e.Resume(ctx, id, "one more question")
			if err != nil {
				t.Fatal(err)
			}
			bodies := c.bodies(x.e)
			if len(bodies) <= before {
				t.Fatalf("the resume sent no request\n%s", res)
			}
			body := bodies[before]
			if n := len(gjson.GetBytes(body, c.entries).Array()); n != len(req.Messages) {
				t.Errorf("OpenCode sent %d entries in %s, sessfix says %d:\n%s", n, c.entries, len(req.Messages), render(req))
			}
			checked := 0
			for n, pm := range req.Messages {
				labels := []string{req.Index(n, -1)}
				for m := range pm.Blocks {
					labels = append(labels, req.BlockIndex(n, m))
				}
				for i, label := range labels {
					v := gjson.GetBytes(body, pathOf(label))
					if !v.Exists() {
						t.Errorf("%s is not in the request OpenCode sent", label)
						continue
					}
					checked++
					if c.callIDs && i > 0 && pm.Blocks[i-1].ToolUseID != "" && !strings.Contains(v.Raw, pm.Blocks[i-1].ToolUseID) {
						t.Errorf("%s does not hold the call %s: %s", label, pm.Blocks[i-1].ToolUseID, v.Raw)
					}
				}
			}
			t.Logf("%d indexes found in the request", checked)
		})
	}
}

// pathOf turns a provider index into a gjson path: input[3].content[0] is
// input.3.content.0.
func pathOf(label string) string {
	return strings.NewReplacer("[", ".", "]", "").Replace(label)
}

func openAIBodies(e *opencodetest.Env) [][]byte { return bodiesOf(e.OpenAI.AgentRequests()) }

// bodiesOf are the bodies of a mock's requests, in order.
func bodiesOf[P, A any](calls []mockstream.Call[P, A]) [][]byte {
	out := make([][]byte, 0, len(calls))
	for _, c := range calls {
		out = append(out, c.Body)
	}
	return out
}

// render is the request's entries and block types, one line each.
func render(r *sent.Request) string {
	var b strings.Builder
	for n, pm := range r.Messages {
		b.WriteString(r.Index(n, -1) + " " + pm.Role + ":")
		for _, bl := range pm.Blocks {
			b.WriteString(" " + bl.Type)
		}
		b.WriteString("\n")
	}
	return b.String()
}

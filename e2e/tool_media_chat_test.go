//go:build acceptance

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// TestToolMediaSentChat: what `sessfix show --sent` says OpenCode 1.18.33
// sends to a Chat Completions provider after a read tool returned an
// image is what it sends. OpenCode puts the image in a user message after
// the step's tool message ("Attached media from tool result:"), for a
// model that takes images (Kimi K2.6: the image) and for one that does not
// (DeepSeek: an error text in its place), and for a vLLM server the user
// added as a provider (`npm: @ai-sdk/openai-compatible` in their config,
// which show reads: the provider's name tells nothing). A real run on
// each: one read of
// a PNG, the answer, then a resume; the roles of the resume's request,
// message by message, must be those show --sent printed before it, and
// the media message must be where OpenCode put it.
func TestToolMediaSentChat(t *testing.T) {
	parallel(t)
	for _, model := range []string{opencodetest.KimiModel, opencodetest.DeepSeekModel, opencodetest.VLLMModel} {
		t.Run(model, func(t *testing.T) {
			acquire(t)
			ctx := testCtx(t, 8*time.Minute)
			e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Model: model, Timeout: 3 * time.Minute})
			p := writeNoisyPNG(t, e.ProjectDir, "shot.png", 7, 40, 30)
			e.OpenAI.SetScript(vllmReadScript([]string{p}))
			first, err := e.Prompt(ctx, "please look at the picture "+markerReadFiles)
			if err != nil {
				t.Fatal(err)
			}
			predicted := showSent(t, e, first.SessionID)
			n := len(e.OpenAI.Requests())
			if _, err := e.Resume(ctx, first.SessionID, "and now?"); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range e.OpenAI.Requests()[n:] {
				if r.Chat && r.Parsed != nil && r.Parsed.Completions != nil {
					for _, m := range r.Parsed.Completions.Messages {
						got = append(got, m.Role)
						if m.Role == "user" && strings.Contains(string(m.Content), "Attached media from tool result:") {
							got[len(got)-1] = "user(media)"
						}
					}
					break
				}
			}
			var want []string
			for _, m := range predicted.Request.Messages {
				role := m.Role
				if len(m.Blocks) > 1 && m.Role == "user" {
					for _, b := range m.Blocks {
						if b.Type == "tool_media" {
							role = "user(media)"
						}
					}
				}
				want = append(want, role)
			}
			if strings.Join(got, " ") != strings.Join(want, " ") || !strings.Contains(strings.Join(got, " "), "tool user(media)") {
				t.Errorf("OpenCode sent the roles\n  %s\nshow --sent said\n  %s", strings.Join(got, " "), strings.Join(want, " "))
			}
		})
	}
}

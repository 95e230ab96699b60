package sent_test

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// shape is a request's entries as "role [block types]", one a line.
func shape(r *sent.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		var types []string
		for _, bl := range m.Blocks {
			types = append(types, bl.Type)
		}
		b.WriteString(m.Role + " [" + strings.Join(types, " ") + "]\n")
	}
	return b.String()
}

// A read tool's two images go to a Chat Completions provider (DeepSeek; the
// Anthropic session's reasoning goes as text to another model), on 1.18.33,
// in a user message after the step's tool message ("Attached media from
// tool result:", then one tool_media block each), as OpenCode sends them
// to every @ai-sdk/openai-compatible model (OBSERVED.md, "Images through
// an OpenAI-compatible provider"); the Messages API and the Responses API
// keep them in the tool result, and so does 1.1.65's request as sessfix
// models it. A compacted result sends none, so no such message.
func TestToolMediaMovedForChat(t *testing.T) {
	small := storetest.NoisyPNG(t, 3, 8, 8)
	fx := storetest.ToolImageSession(storetest.Image{Mime: "image/png", Base64: small}, storetest.Image{Mime: "image/png", Base64: small})
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	build := func(v sent.Version, provider, model string) *sent.Request {
		return sent.Build(s, sent.Options{Version: v, ProviderID: provider, ModelID: model})
	}
	chat := build(sent.V118, "deepseek", "deepseek-chat")
	const want = "system []\nuser [text]\nassistant [text tool_use]\ntool [tool_result]\nuser [text tool_media tool_media]\nassistant [text]\n"
	if got := shape(chat); got != want {
		t.Fatalf("Chat Completions request:\n%s\nwant:\n%s", got, want)
	}
	moved := chat.Messages[4]
	if moved.Blocks[0].Text != sent.ToolMediaText || moved.Blocks[1].PartID != storetest.ToolImagePartID || len(moved.Sources) != 1 || moved.Sources[0] != storetest.ImageAsstID {
		t.Errorf("the moved media's message: %+v", moved)
	}
	for _, r := range []*sent.Request{build(sent.V118, "anthropic", "claude-sonnet-4-5"), build(sent.V118, "openai", "gpt-5.2"), build(sent.V11, "deepseek", "deepseek-chat")} {
		if strings.Contains(shape(r), "tool_media") {
			t.Errorf("%s %s moves the media:\n%s", r.ProviderID, r.ModelID, shape(r))
		}
	}

	compacted := strings.Replace(string(fx.Messages[1].Parts[2].Body), `"time":{"start":1767225602100,`, `"time":{"compacted":1767225609000,"start":1767225602100,`, 1)
	if compacted == string(fx.Messages[1].Parts[2].Body) {
		t.Fatal("the tool part's time was not found")
	}
	fx.Messages[1].Parts[2].Body = []byte(compacted)
	s = storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	if got := shape(build(sent.V118, "deepseek", "deepseek-chat")); strings.Contains(got, "tool_media") {
		t.Errorf("a compacted result's media are moved:\n%s", got)
	}
}

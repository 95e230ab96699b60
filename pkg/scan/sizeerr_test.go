package scan

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// A stored error of a history too big to send is named by SF302 with its
// class and said to be not repaired yet, with no fix planned (a context
// overflow on a history sessfix finds within the window: nothing to prune);
// OpenCode's ContextOverflowError is recognised by its name whatever its
// text.
func TestFailedAttemptTooBigNotRepairedYet(t *testing.T) {
	answer := testMessage("a2", "assistant", asstBody, `{"type":"step-start"}`, `{"type":"text","text":"a b","time":{"start":20,"end":21}}`)
	loop := testMessage("a1", "assistant", asstTools, `{"type":"step-start"}`, signedAt, toolDone)
	for _, c := range []struct {
		name, text, errName string
		want                opencode.ErrorType
	}{
		{"image size", "undefined: The model returned the following errors: messages.1.content.0.image.source.base64: image exceeds 5 MB maximum: 5895160 bytes > 5242880 bytes", "APIError", opencode.ErrorImageTooLarge},
		{"image count", "request contains 52 images, exceeding the maximum of 50 allowed per request", "APIError", opencode.ErrorTooManyImages},
		{"prompt too long", "prompt is too long: 215000 tokens > 200000 maximum", "APIError", opencode.ErrorContextOverflow},
		{"context overflow by name", "Input exceeds the model's limits", "ContextOverflowError", opencode.ErrorContextOverflow},
	} {
		s := recoverySession(loop, answer, c.text)
		if c.errName != "APIError" {
			f := testMessage("f", "assistant", `{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":101,"completed":102},"error":{"name":"`+c.errName+`","data":{"message":"`+c.text+`"}}}`)
			s = session(store.ShapeSQLite, append(s.Messages[:len(s.Messages)-1:len(s.Messages)-1], f)...)
		}
		var got *Finding
		for _, fd := range CheckSession(s, &Options{}) {
			if fd.Code == "SF302" {
				fd := fd
				got = &fd
			}
		}
		if got == nil {
			t.Errorf("%s: no SF302", c.name)
			continue
		}
		note := "not repaired yet"
		if c.want == opencode.ErrorContextOverflow {
			// No window is known and the history is small: nothing to prune.
			note = opencode.ContextNoCauseNote
		}
		if got.ErrorType != string(c.want) || got.Fix != "" || got.Severity != Error || !strings.Contains(got.Message, note) {
			t.Errorf("%s: SF302 %s fix %q severity %v: %s", c.name, got.ErrorType, got.Fix, got.Severity, got.Message)
		}
	}
}

package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF150 = preflightRule(&Rule{
	Code:          SF150,
	Name:          "empty-provider-message",
	Severity:      Error,
	Summary:       "a message is sent to anthropic with no content",
	What:          "The request OpenCode builds for an Anthropic model holds a message with no content block that is not the optional final assistant message. It happens when everything a stored message holds is dropped on the way: an assistant step whose only reasoning has no signature (OpenCode 1.1 stopped mid-thinking), or whose text is empty and whose thinking is dropped.",
	Why:           "Anthropic rejects the whole request, so every later prompt in the session fails the same way.",
	ProviderError: "messages.N: all messages must have non-empty content except for the optional final assistant message",
	FixDoc:        "`injectTextPart` gives the stored message a synthetic text part with the placeholder; when that is not accepted the turn is excluded (`excludeMessage`).",
	Fixable:       true,
	Fix:           "injectTextPart",
})

func errBedrockEmpty(n int) string {
	return fmt.Sprintf("The content field in the Message object at messages.%d is empty. Add a ContentBlock object to the content field and try again.", n)
}

func checkEmptyMessages(_ *store.Session, r *sent.Request, bedrock bool) []Violation {
	var out []Violation
	last := len(r.Messages) - 1
	for n, pm := range r.Messages {
		if len(pm.Blocks) > 0 || (n == last && pm.Role == "assistant" && !bedrock) {
			continue
		}
		srcs := pm.Sources
		for _, src := range srcs {
			v := Violation{N: n, M: -1, Index: idx(n, -1), MessageID: src, Fix: "injectTextPart"}
			if bedrock {
				v.Code, v.ProviderError = SF161, errBedrockEmpty(n)
			} else {
				v.Code, v.ProviderError = SF150, fmt.Sprintf("messages.%d: %s", n, textEmptyContent)
			}
			v.Message = pm.Role + " message is sent with no content"
			if len(pm.Dropped) > 0 {
				v.Message += ": its only thinking has no signature and is dropped"
			}
			out = append(out, v)
		}
	}
	return out
}

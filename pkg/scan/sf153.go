package scan

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF153 = preflightRule(&Rule{
	Code:          SF153,
	Name:          "thinking-not-first-block",
	Severity:      Error,
	Summary:       "an assistant message sent to anthropic has thinking that is not its first block",
	What:          "An assistant message of the request holds a thinking block but starts with text or a tool call: reasoning stored after a tool or text part, or two stored assistant turns merged into one provider message with the thinking in the second.",
	Why:           "Anthropic rejects any assistant message with thinking that does not start with it, anywhere in the history.",
	ProviderError: "messages.N.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `text`.",
	FixDoc:        "`moveThinkingFirst` when the message owns a signed thinking part, else `stripThinkingParts`.",
	Fixable:       true,
	Fix:           "moveThinkingFirst|stripThinkingParts",
})

func errThinkingNotFirst(n int, found string) string {
	return fmt.Sprintf("messages.%d.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `%s`.", n, found)
}

func checkThinkingBlocks(s *store.Session, r *sent.Request) []Violation {
	var out []Violation
	for n, pm := range r.Messages {
		if pm.Role != "assistant" || len(pm.Blocks) == 0 {
			continue
		}
		thinking := -1
		for m, b := range pm.Blocks {
			if isThinkingBlock(b.Type) {
				thinking = m
				break
			}
		}
		if thinking < 0 {
			continue
		}
		first := pm.Blocks[0]
		if !isThinkingBlock(first.Type) {
			t := pm.Blocks[thinking]
			fix := "stripThinkingParts"
			if msg := s.Message(t.MessageID); msg != nil && opencode.OwnsSignedThinking(msg) {
				fix = "moveThinkingFirst"
			}
			out = append(out, Violation{
				Code: SF153, N: n, M: 0, Index: idx(n, 0), ProviderError: errThinkingNotFirst(n, first.Type),
				MessageID: t.MessageID, PartID: t.PartID, Fix: fix,
				Message: fmt.Sprintf("assistant message is sent with a %s block before its thinking", first.Type),
			})
		}
		lastB := pm.Blocks[len(pm.Blocks)-1]
		if isThinkingBlock(lastB.Type) {
			out = append(out, Violation{
				Code: SF155, N: n, M: -1, Index: idx(n, -1), ProviderError: fmt.Sprintf("messages.%d: %s", n, textFinalBlockThinking),
				MessageID: lastB.MessageID, PartID: lastB.PartID, Fix: "injectTextPart",
				Message: "assistant message is sent ending with thinking (no text or tool call after it)",
			})
		}
		for m, b := range pm.Blocks {
			if !isThinkingBlock(b.Type) || strings.TrimSpace(b.Signature) != "" {
				continue
			}
			v := Violation{
				Code: SF154, N: n, M: m, Index: idx(n, m), MessageID: b.MessageID, PartID: b.PartID,
				Fix: "stripThinkingParts",
			}
			if b.Type == "redacted_thinking" {
				v.ProviderError = fmt.Sprintf("messages.%d.content.%d.%s", n, m, textRedactedRequired)
				v.Message = "redacted thinking is sent with empty data"
			} else {
				v.ProviderError = fmt.Sprintf("messages.%d.content.%d: %s", n, m, textInvalidSignature)
				v.Message = "thinking is sent with an empty signature"
			}
			out = append(out, v)
		}
	}
	return out
}

package scan

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF151 = preflightRule(&Rule{
	Code:          SF151,
	Name:          "blank-text-block",
	Severity:      Error,
	Summary:       "a text block sent to anthropic is empty or whitespace-only",
	What:          "A text content block of the request is empty or holds only whitespace. OpenCode drops `\"\"` text for Anthropic, but keeps whitespace-only text, and OpenCode 1.18 sends an empty text part as `\" \"` when its message holds signed reasoning (the shape a kill mid-text leaves).",
	Why:           "Anthropic rejects the request, so every later prompt in the session fails the same way.",
	ProviderError: "messages: text content blocks must contain non-whitespace text (or: messages: text content blocks must be non-empty)",
	FixDoc:        "`replaceEmptyTextParts` gives the stored text part the placeholder text and marks it synthetic.",
	Fixable:       true,
	Fix:           "replaceEmptyTextParts",
})

func errBedrockBlank(n, m int) string {
	return fmt.Sprintf("The text field in the ContentBlock object at messages.%d.content.%d is blank. Add text to the text field, and try again.", n, m)
}

func checkBlankText(s *store.Session, r *sent.Request, bedrock bool) []Violation {
	var out []Violation
	for n, pm := range r.Messages {
		for m, b := range pm.Blocks {
			if b.Type != "text" || strings.TrimSpace(b.Text) != "" || b.MessageID == "" {
				continue
			}
			v := Violation{N: n, M: m, Index: idx(n, m), MessageID: b.MessageID, PartID: b.PartID, Fix: "replaceEmptyTextParts"}
			what := "an empty"
			if b.Text != "" {
				what = "a whitespace-only"
			}
			switch {
			case bedrock:
				v.Code, v.ProviderError = SF160, errBedrockBlank(n, m)
			case b.Text == "":
				v.Code, v.ProviderError = SF151, textEmptyTextBlock
			default:
				v.Code, v.ProviderError = SF151, textWhitespaceTextBlock
			}
			v.Message = fmt.Sprintf("%s message sends %s text block", pm.Role, what)
			if p := opencode.FindPart(s, b.MessageID, b.PartID); p != nil && b.Text != "" && opencode.PartText(p) == "" {
				v.Message = pm.Role + " message sends a whitespace-only text block: opencode sends its empty text as \" \" next to signed thinking"
			}
			out = append(out, v)
		}
	}
	return out
}

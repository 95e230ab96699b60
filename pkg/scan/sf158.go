package scan

import (
	"strings"
	"unicode"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF158 = preflightRule(&Rule{
	Code:          SF158,
	Name:          "final-trailing-whitespace",
	Severity:      Warning,
	Summary:       "the history ends with assistant text that ends in whitespace",
	What:          "The history, sent without a new prompt, ends with an assistant message whose last block is text ending in whitespace. The provider SDK trims the last text part of such a request, so this only happens when a part it drops follows the text.",
	Why:           "Anthropic rejects a final assistant message that ends in whitespace.",
	ProviderError: "messages: final assistant content cannot end with trailing whitespace",
	Marks:         []string{"final assistant content cannot end with trailing whitespace"},
	FixDoc:        "Report only: a new prompt moves the message out of the final position.",
	Fixable:       false,
	Fix:           "",
})

func checkFinalAssistant(_ *store.Session, final *sent.Request) []Violation {
	n, pm, ok := final.LastAssistant()
	if !ok {
		return nil
	}
	var out []Violation
	if k := len(pm.Blocks); k > 0 {
		b := pm.Blocks[k-1]
		if b.Type == "text" && strings.TrimRightFunc(b.Text, unicode.IsSpace) != b.Text && strings.TrimSpace(b.Text) != "" {
			out = append(out, Violation{
				Code: SF158, N: n, M: k - 1, Index: idx(n, k-1), ProviderError: textTrailingWhitespace,
				MessageID: b.MessageID, PartID: b.PartID, Severity: Warning,
				Message: "the history ends with assistant text that ends in whitespace",
			})
		}
	}
	if opencode.ModelRejectsPrefill(final.ModelID) {
		id, _ := at(final, n, -1)
		out = append(out, Violation{
			Code: SF159, N: n, M: -1, Index: idx(n, -1), ProviderError: textNoPrefill,
			MessageID: id, Severity: Info,
			Message: "the history ends with an unfinished assistant message; " + final.ModelID + " rejects a request that ends with one",
		})
	}
	return out
}

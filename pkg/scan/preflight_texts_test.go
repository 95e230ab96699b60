package scan

import (
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
)

// TestPreflightTextsAreClassified checks that every error text the
// preflight predicts is one error-driven recovery classifies, so a session
// whose stored attempt failed with it is explained by SF302.
func TestPreflightTextsAreClassified(t *testing.T) {
	cases := []struct {
		text string
		want opencode.ErrorType
	}{
		{textEmptyContent, opencode.ErrorEmptyContent},
		{textEmptyTextBlock, opencode.ErrorEmptyContent},
		{textWhitespaceTextBlock, opencode.ErrorEmptyContent},
		{"messages.1.content.0: " + textInvalidSignature, opencode.ErrorInvalidSignature},
		{"messages.1.content.0." + textRedactedRequired, opencode.ErrorInvalidSignature},
		{"messages.3: " + textFinalBlockThinking, opencode.ErrorThinkingBlockOrder},
		{textNoPrefill, opencode.ErrorPrefillUnsupported},
		{textThinkingDisabled, opencode.ErrorThinkingDisabledViolation},
		{errThinkingNotFirst(1, "tool_use"), opencode.ErrorThinkingBlockOrder},
		{errExpectedThinking(1, "text"), opencode.ErrorThinkingBlockOrder},
		{errToolUseWithoutResult(2, []string{"toolu_01A"}), opencode.ErrorToolResultMissing},
		{errUnexpectedToolResult(4, 0, "toolu_01B"), opencode.ErrorToolResultMissing},
		{textInvalidImage, opencode.ErrorInvalidImage},
		{textRequestTooLarge, opencode.ErrorRequestTooLarge},
		// rules.md names no recovery class for trailing whitespace: SF158
		// repairs it from the scan, not from a stored error.
		{textTrailingWhitespace, opencode.ErrorNone},
	}
	for _, c := range cases {
		if got := opencode.DetectErrorType(c.text); got != c.want {
			t.Errorf("DetectErrorType(%.70q) = %q, want %q", c.text, got, c.want)
		}
	}
}

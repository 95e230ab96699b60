package scan

import "testing"

func TestDetectErrorType(t *testing.T) {
	cases := []struct {
		text string
		want ErrorType
	}{
		// The docs link in this error mentions tool_use and tool_result:
		// thinking must win over the tool pattern.
		{"messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).", ErrorThinkingBlockOrder},
		{"messages.1.content.1: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found text.", ErrorThinkingBlockOrder},
		{"messages.5: The final block in an assistant message cannot be `thinking`.", ErrorThinkingBlockOrder},
		{"When thinking is disabled, an assistant message in the final position cannot contain thinking", ErrorThinkingDisabledViolation},
		{"messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A", ErrorToolResultMissing},
		{"messages.4: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01B", ErrorToolResultMissing},
		{"messages.1: all messages must have non-empty content except for the optional final assistant message", ErrorEmptyContent},
		{"messages: text content blocks must be non-empty", ErrorEmptyContent},
		{"messages: text content blocks must contain non-whitespace text", ErrorEmptyContent},
		{"The text field in the ContentBlock object at messages.3.content.0 is blank. Add text to the text field, and try again.", ErrorEmptyContent},
		{"The content field in the Message object at messages.2 is empty. Add a ContentBlock object to the content field and try again.", ErrorEmptyContent},
		{"messages.7.content.0: Invalid `signature` in `thinking` block", ErrorInvalidSignature},
		{"messages.1.content.0.thinking.signature: Field required", ErrorInvalidSignature},
		{"messages.1.content.0.redacted_thinking.data: Field required", ErrorInvalidSignature},
		{"messages.9.content.0: thinking blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.", ErrorThinkingModified},
		{"This model does not support assistant message prefill. The conversation must end with a user message.", ErrorPrefillUnsupported},
		{"Overloaded", ErrorNone},
		{"rate_limit_error: Number of request tokens has exceeded your per-minute rate limit", ErrorNone},
		{"", ErrorNone},
	}
	for _, c := range cases {
		if got := DetectErrorType(c.text); got != c.want {
			t.Errorf("DetectErrorType(%.60q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestExtractIndex(t *testing.T) {
	cases := []struct {
		text  string
		n     int
		ok    bool
		index string
	}{
		{"messages.3.content.0.type: Expected `thinking`", 3, true, "messages.3.content.0"},
		{"The content field in the Message object at messages.12 is empty", 12, true, "messages.12"},
		{"see messages.4.content.1 and messages.6", 4, true, "messages.4.content.1"},
		{"messages: text content blocks must be non-empty", 0, false, ""},
	}
	for _, c := range cases {
		n, ok := ExtractMessageIndex(c.text)
		if n != c.n || ok != c.ok {
			t.Errorf("ExtractMessageIndex(%q) = %d, %v; want %d, %v", c.text, n, ok, c.n, c.ok)
		}
		if got := ExtractIndex(c.text); got != c.index {
			t.Errorf("ExtractIndex(%q) = %q, want %q", c.text, got, c.index)
		}
	}
}

func TestErrorTypeFixes(t *testing.T) {
	for _, typ := range ErrorTypes() {
		fix := typ.DefaultFix()
		noFix := typ == ErrorThinkingModified || typ == ErrorPrefillUnsupported
		if noFix != (fix == "") {
			t.Errorf("%s: DefaultFix %q", typ, fix)
		}
	}
}

// TestPreflightTextsAreClassified checks that every error text the
// preflight predicts is one error-driven recovery classifies, so a session
// whose stored attempt failed with it is explained by SF302.
func TestPreflightTextsAreClassified(t *testing.T) {
	cases := []struct {
		text string
		want ErrorType
	}{
		{textEmptyContent, ErrorEmptyContent},
		{textEmptyTextBlock, ErrorEmptyContent},
		{textWhitespaceTextBlock, ErrorEmptyContent},
		{"messages.1.content.0: " + textInvalidSignature, ErrorInvalidSignature},
		{"messages.1.content.0." + textRedactedRequired, ErrorInvalidSignature},
		{"messages.3: " + textFinalBlockThinking, ErrorThinkingBlockOrder},
		{textNoPrefill, ErrorPrefillUnsupported},
		{textThinkingDisabled, ErrorThinkingDisabledViolation},
		{errThinkingNotFirst(1, "tool_use"), ErrorThinkingBlockOrder},
		{errExpectedThinking(1, "text"), ErrorThinkingBlockOrder},
		{errToolUseWithoutResult(2, []string{"toolu_01A"}), ErrorToolResultMissing},
		{errUnexpectedToolResult(4, 0, "toolu_01B"), ErrorToolResultMissing},
		// rules.md names no recovery class for trailing whitespace: SF158
		// repairs it from the scan, not from a stored error.
		{textTrailingWhitespace, ErrorNone},
	}
	for _, c := range cases {
		if got := DetectErrorType(c.text); got != c.want {
			t.Errorf("DetectErrorType(%.70q) = %q, want %q", c.text, got, c.want)
		}
	}
}

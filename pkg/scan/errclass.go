package scan

import (
	"regexp"
	"strconv"
	"strings"
)

// ErrorType is the error-driven recovery class of a provider error.
type ErrorType string

// Error types. The first four have a storage repair; the rest are recognised
// and reported, with no storage fix (or, for an invalid signature, a repair
// that strips the thinking the signature belonged to).
const (
	ErrorNone                      ErrorType = ""
	ErrorThinkingBlockOrder        ErrorType = "thinking_block_order"
	ErrorThinkingDisabledViolation ErrorType = "thinking_disabled_violation"
	ErrorToolResultMissing         ErrorType = "tool_result_missing"
	ErrorEmptyContent              ErrorType = "empty_content"
	ErrorThinkingModified          ErrorType = "thinking_modified"
	ErrorPrefillUnsupported        ErrorType = "prefill_unsupported"
	ErrorInvalidSignature          ErrorType = "invalid_signature"
)

// DefaultFix returns the mutations error-driven recovery applies to the
// stored message an error of this type points at, in rules.md notation; ""
// when no storage repair exists for the type.
func (t ErrorType) DefaultFix() string {
	switch t {
	case ErrorThinkingBlockOrder:
		return "moveThinkingFirst|stripThinkingParts"
	case ErrorThinkingDisabledViolation:
		return "stripThinkingParts"
	case ErrorToolResultMissing:
		return "markToolAborted"
	case ErrorEmptyContent:
		return "replaceEmptyTextParts|injectTextPart"
	case ErrorInvalidSignature:
		return "stripThinkingParts|excludeMessage"
	}
	return ""
}

var emptyContentField = regexp.MustCompile(`content field.*is empty`)

// DetectErrorType classifies a provider's error text (the brief's
// detectErrorType). Thinking patterns are checked before tool patterns:
// Anthropic's thinking errors carry a docs link that mentions tool_use and
// tool_result. It returns ErrorNone when the text matches no class.
func DetectErrorType(text string) ErrorType {
	t := strings.ToLower(text)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(t, s) {
				return true
			}
		}
		return false
	}
	if strings.Contains(t, "thinking") {
		if has("first block", "must start with", "preceeding", "final block", "cannot be thinking") ||
			(strings.Contains(t, "expected") && strings.Contains(t, "found")) {
			return ErrorThinkingBlockOrder
		}
		if strings.Contains(t, "thinking is disabled") && strings.Contains(t, "cannot contain") {
			return ErrorThinkingDisabledViolation
		}
		if strings.Contains(t, "cannot be modified") {
			return ErrorThinkingModified
		}
	}
	if has("bound to a different conversation") {
		return ErrorThinkingModified
	}
	// A missing or invalid signature, or redacted thinking without its data
	// (the redacted block's signature): the thinking cannot be sent back.
	if (strings.Contains(t, "signature") || strings.Contains(t, "redacted_thinking.data")) && has("invalid", "field required") {
		return ErrorInvalidSignature
	}
	if strings.Contains(t, "tool_use") && strings.Contains(t, "tool_result") {
		return ErrorToolResultMissing
	}
	if has("non-empty content", "must be non-empty", "non-whitespace text", "is blank") || emptyContentField.MatchString(t) {
		return ErrorEmptyContent
	}
	if strings.Contains(t, "assistant message prefill") {
		return ErrorPrefillUnsupported
	}
	return ErrorNone
}

var (
	messageIndexRe = regexp.MustCompile(`messages\.(\d+)`)
	blockIndexRe   = regexp.MustCompile(`messages\.\d+(?:\.content\.\d+)?`)
)

// ExtractMessageIndex returns N from the first "messages.N" in a provider
// error (the brief's extractMessageIndex).
func ExtractMessageIndex(text string) (int, bool) {
	m := messageIndexRe.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, false
	}
	return n, true
}

// ExtractIndex returns the first index as the provider prints it,
// "messages.N" or "messages.N.content.M", or "" when there is none.
func ExtractIndex(text string) string {
	return blockIndexRe.FindString(text)
}

// ErrorTypes lists every error type DetectErrorType returns, in the order
// it checks them.
func ErrorTypes() []ErrorType {
	return []ErrorType{
		ErrorThinkingBlockOrder, ErrorThinkingDisabledViolation, ErrorThinkingModified,
		ErrorInvalidSignature, ErrorToolResultMissing, ErrorEmptyContent, ErrorPrefillUnsupported,
	}
}

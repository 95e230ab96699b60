package scan

import (
	"fmt"
	"sync"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// The exact texts providers answer, as the real APIs print them (with their
// backticks). Where the API puts an index in front ("messages.N: ") the
// checks add it.
const (
	textEmptyContent        = "all messages must have non-empty content except for the optional final assistant message"
	textEmptyTextBlock      = "messages: text content blocks must be non-empty"
	textWhitespaceTextBlock = "messages: text content blocks must contain non-whitespace text"
	textInvalidSignature    = "Invalid `signature` in `thinking` block"
	textRedactedRequired    = "redacted_thinking.data: Field required"
	textFinalBlockThinking  = "The final block in an assistant message cannot be `thinking`."
	textTrailingWhitespace  = "messages: final assistant content cannot end with trailing whitespace"
	textNoPrefill           = "This model does not support assistant message prefill. The conversation must end with a user message."
	textThinkingDisabled    = "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
)

// Violation is one provider rule a request breaks.
type Violation struct {
	Code string
	// N and M are the provider index (M is -1 for a message-level error).
	N, M int
	// Index is the index as the provider prints it, ProviderError the text.
	Index, ProviderError string
	// MessageID and PartID are the stored records the index maps to.
	MessageID, PartID string
	Message           string
	Severity          Severity
	Fix               string
}

// CheckRequest checks a request against the provider rules of its kind and
// returns every violation, in the order the Messages API is known to check
// them (text blocks, empty messages, tool pairing, thinking order and
// signatures message by message, thinking mode, final assistant content):
// the first one is the error the request gets. final is the request as OpenCode
// would send it without a new prompt (nil when it ends with a user message):
// the rules about the final assistant message are checked on it.
func CheckRequest(s *store.Session, r, final *sent.Request) []Violation {
	var out []Violation
	// The files the request sends: one walk for the image count's
	// documents, the request size and the PDFs, made only when asked.
	files := sync.OnceValue(func() []opencode.File { return opencode.RequestFiles(s, r) })
	switch r.Kind {
	case sent.Anthropic:
		out = append(out, checkBlankText(s, r, false)...)
		out = append(out, checkEmptyMessages(s, r, false)...)
		out = append(out, checkToolUseIDs(s, r)...)
		out = append(out, checkToolPairing(s, r)...)
		out = append(out, checkThinkingBlocks(s, r)...)
		out = append(out, checkThinkingMode(s, r, final)...)
		out = append(out, checkFinalAssistant(s, final)...)
		out = append(out, checkImages(s, r, files)...)
		out = append(out, checkRequestSize(files())...)
		out = append(out, checkPDFs(files())...)
	case sent.Bedrock:
		out = append(out, checkBlankText(s, r, true)...)
		out = append(out, checkEmptyMessages(s, r, true)...)
		out = append(out, checkToolPairing(s, r)...)
		out = append(out, checkThinkingBlocks(s, r)...)
		out = append(out, checkThinkingMode(s, r, final)...)
		out = append(out, checkImages(s, r, files)...)
	case sent.Chat:
		out = append(out, checkMistralCallIDs(s, r)...)
		out = append(out, checkOpenAIPairing(s, r)...)
		out = append(out, checkReasoningContent(s, r, final)...)
		out = append(out, checkImages(s, r, files)...) // OpenCode Zen's count only
	case sent.Responses:
		out = append(out, checkResponsesReasoning(s, r)...)
		out = append(out, checkOpenAIPairing(s, r)...)
		out = append(out, checkImages(s, r, files)...)
	case sent.Google:
		out = append(out, checkImages(s, r, files)...)
	default:
		// A model sessfix has no family for: nothing of its API is
		// checked, but on OpenCode Zen, Console counts its images.
		out = append(out, checkImages(s, r, files)...)
	}
	return out
}

// at maps entry n (block m) of r to a stored message and part; for an
// entry built from several stored messages, the first of them.
func at(r *sent.Request, n, m int) (string, string) {
	id, part, _ := r.Locate(n, m)
	if m < 0 && id == "" && n < len(r.Messages) && len(r.Messages[n].Sources) > 0 {
		id = r.Messages[n].Sources[0]
	}
	return id, part
}

func idx(n, m int) string {
	if m < 0 {
		return fmt.Sprintf("messages.%d", n)
	}
	return fmt.Sprintf("messages.%d.content.%d", n, m)
}

func hasBlock(pm sent.Message, typ, id string) bool {
	for _, b := range pm.Blocks {
		if b.Type == typ && b.ToolUseID == id {
			return true
		}
	}
	return false
}

func isThinkingBlock(t string) bool { return t == "thinking" || t == "redacted_thinking" }

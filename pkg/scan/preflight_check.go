package scan

import (
	"fmt"
	"strings"
	"unicode"

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

func errThinkingNotFirst(n int, found string) string {
	return fmt.Sprintf("messages.%d.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `%s`.", n, found)
}

func errExpectedThinking(n int, found string) string {
	return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking", n, found)
}

func errToolUseWithoutResult(n int, ids []string) string {
	return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", n, strings.Join(ids, ", "))
}

func errUnexpectedToolResult(n, m int, id string) string {
	return fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", n, m, id)
}

func errBedrockBlank(n, m int) string {
	return fmt.Sprintf("The text field in the ContentBlock object at messages.%d.content.%d is blank. Add text to the text field, and try again.", n, m)
}

func errBedrockEmpty(n int) string {
	return fmt.Sprintf("The content field in the Message object at messages.%d is empty. Add a ContentBlock object to the content field and try again.", n)
}

func errOpenAIMissingToolMessages(ids []string) string {
	return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(ids, ", ")
}

const errOpenAIOrphanTool = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."

// noPrefillModels are model ids (substrings) that reject a request ending
// with an assistant message.
var noPrefillModels = []string{"claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-5", "claude-sonnet-5", "claude-haiku-5"}

// ModelRejectsPrefill reports whether the model rejects a conversation that
// ends with an assistant message.
func ModelRejectsPrefill(modelID string) bool {
	id := strings.ToLower(modelID)
	for _, s := range noPrefillModels {
		if strings.Contains(id, s) {
			return true
		}
	}
	return false
}

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
	switch r.Kind {
	case sent.Anthropic:
		out = append(out, checkBlankText(s, r, false)...)
		out = append(out, checkEmptyMessages(s, r, false)...)
		out = append(out, checkToolPairing(s, r)...)
		out = append(out, checkThinkingBlocks(s, r)...)
		out = append(out, checkThinkingMode(s, r, final)...)
		out = append(out, checkFinalAssistant(s, final)...)
		out = append(out, checkImages(s, r)...)
	case sent.Bedrock:
		out = append(out, checkBlankText(s, r, true)...)
		out = append(out, checkEmptyMessages(s, r, true)...)
		out = append(out, checkToolPairing(s, r)...)
		out = append(out, checkThinkingBlocks(s, r)...)
		out = append(out, checkThinkingMode(s, r, final)...)
	case sent.Chat:
		out = append(out, checkOpenAIPairing(s, r)...)
		out = append(out, checkReasoningContent(s, r, final)...)
	case sent.Responses:
		out = append(out, checkResponsesReasoning(s, r)...)
		out = append(out, checkOpenAIPairing(s, r)...)
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
				v.Code, v.ProviderError = "SF160", errBedrockBlank(n, m)
			case b.Text == "":
				v.Code, v.ProviderError = "SF151", textEmptyTextBlock
			default:
				v.Code, v.ProviderError = "SF151", textWhitespaceTextBlock
			}
			v.Message = fmt.Sprintf("%s message sends %s text block", pm.Role, what)
			if p := findPart(s, b.MessageID, b.PartID); p != nil && b.Text != "" && PartText(p) == "" {
				v.Message = pm.Role + " message sends a whitespace-only text block: opencode sends its empty text as \" \" next to signed thinking"
			}
			out = append(out, v)
		}
	}
	return out
}

// findPart returns the stored part, or nil.
func findPart(s *store.Session, msgID, partID string) *store.Part {
	if s == nil {
		return nil
	}
	m := s.Message(msgID)
	if m == nil {
		return nil
	}
	for _, p := range m.Parts {
		if p.ID == partID {
			return p
		}
	}
	return nil
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
				v.Code, v.ProviderError = "SF161", errBedrockEmpty(n)
			} else {
				v.Code, v.ProviderError = "SF150", fmt.Sprintf("messages.%d: %s", n, textEmptyContent)
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

func checkToolPairing(_ *store.Session, r *sent.Request) []Violation {
	var out []Violation
	last := len(r.Messages) - 1
	for n, pm := range r.Messages {
		switch pm.Role {
		case "assistant":
			var missing []string
			var first *sent.Block
			for m := range pm.Blocks {
				b := &pm.Blocks[m]
				if b.Type != "tool_use" {
					continue
				}
				if n == last || r.Messages[n+1].Role != "user" || !hasBlock(r.Messages[n+1], "tool_result", b.ToolUseID) {
					missing = append(missing, b.ToolUseID)
					if first == nil {
						first = b
					}
				}
			}
			if len(missing) > 0 {
				out = append(out, Violation{
					Code: "SF157", N: n, M: -1, Index: idx(n, -1), ProviderError: errToolUseWithoutResult(n, missing),
					MessageID: first.MessageID, PartID: first.PartID, Fix: "markToolAborted",
					Message: "tool call is sent without its result in the next message",
				})
			}
		case "user":
			for m, b := range pm.Blocks {
				if b.Type != "tool_result" {
					continue
				}
				if n == 0 || r.Messages[n-1].Role != "assistant" || !hasBlock(r.Messages[n-1], "tool_use", b.ToolUseID) {
					out = append(out, Violation{
						Code: "SF157", N: n, M: m, Index: idx(n, m), ProviderError: errUnexpectedToolResult(n, m, b.ToolUseID),
						MessageID: b.MessageID, PartID: b.PartID,
						Message: "tool result is sent without its tool call in the message before",
					})
				}
			}
		}
	}
	return out
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
			if msg := s.Message(t.MessageID); msg != nil && OwnsSignedThinking(msg) {
				fix = "moveThinkingFirst"
			}
			out = append(out, Violation{
				Code: "SF153", N: n, M: 0, Index: idx(n, 0), ProviderError: errThinkingNotFirst(n, first.Type),
				MessageID: t.MessageID, PartID: t.PartID, Fix: fix,
				Message: fmt.Sprintf("assistant message is sent with a %s block before its thinking", first.Type),
			})
		}
		lastB := pm.Blocks[len(pm.Blocks)-1]
		if isThinkingBlock(lastB.Type) {
			out = append(out, Violation{
				Code: "SF155", N: n, M: -1, Index: idx(n, -1), ProviderError: fmt.Sprintf("messages.%d: %s", n, textFinalBlockThinking),
				MessageID: lastB.MessageID, PartID: lastB.PartID, Fix: "injectTextPart",
				Message: "assistant message is sent ending with thinking (no text or tool call after it)",
			})
		}
		for m, b := range pm.Blocks {
			if !isThinkingBlock(b.Type) || strings.TrimSpace(b.Signature) != "" {
				continue
			}
			v := Violation{
				Code: "SF154", N: n, M: m, Index: idx(n, m), MessageID: b.MessageID, PartID: b.PartID,
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

func checkThinkingMode(s *store.Session, r, final *sent.Request) []Violation {
	if r.Thinking {
		n := r.FinalToolLoop()
		if n < 0 || len(r.Messages[n].Blocks) == 0 {
			return nil
		}
		first := r.Messages[n].Blocks[0]
		if isThinkingBlock(first.Type) {
			return nil
		}
		fix := "excludeMessage"
		if msg := s.Message(first.MessageID); msg != nil && OwnsSignedThinking(msg) {
			fix = "moveThinkingFirst"
		}
		v := Violation{
			Code: "SF152", N: n, M: 0, Index: idx(n, 0), ProviderError: errExpectedThinking(n, first.Type),
			MessageID: first.MessageID, PartID: first.PartID, Fix: fix,
			Message: fmt.Sprintf("the final tool-loop assistant message starts with %s, not signed thinking, while thinking is on", first.Type),
		}
		for _, d := range r.Messages[n].Dropped {
			if d.MessageID == first.MessageID {
				v.Message += "; its thinking has no signature and is dropped"
				break
			}
		}
		return []Violation{v}
	}
	n, pm, ok := final.LastAssistant()
	if !ok {
		return nil
	}
	for m, b := range pm.Blocks {
		if isThinkingBlock(b.Type) {
			return []Violation{{
				Code: "SF156", N: n, M: m, Index: idx(n, m), ProviderError: fmt.Sprintf("messages.%d.content.%d: %s", n, m, textThinkingDisabled),
				MessageID: b.MessageID, PartID: b.PartID, Fix: "stripThinkingParts", Severity: Warning,
				Message: "the history ends with an assistant message that holds thinking while thinking is off for " + r.ModelID,
			}}
		}
	}
	return nil
}

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
				Code: "SF158", N: n, M: k - 1, Index: idx(n, k-1), ProviderError: textTrailingWhitespace,
				MessageID: b.MessageID, PartID: b.PartID, Severity: Warning,
				Message: "the history ends with assistant text that ends in whitespace",
			})
		}
	}
	if ModelRejectsPrefill(final.ModelID) {
		id, _ := at(final, n, -1)
		out = append(out, Violation{
			Code: "SF159", N: n, M: -1, Index: idx(n, -1), ProviderError: textNoPrefill,
			MessageID: id, Severity: Info,
			Message: "the history ends with an unfinished assistant message; " + final.ModelID + " rejects a request that ends with one",
		})
	}
	return out
}

func checkOpenAIPairing(_ *store.Session, r *sent.Request) []Violation {
	if r.Kind == sent.Responses {
		return checkResponsesPairing(r)
	}
	var out []Violation
	for n, pm := range r.Messages {
		switch pm.Role {
		case "assistant":
			answered := map[string]bool{}
			for k := n + 1; k < len(r.Messages) && r.Messages[k].Role == "tool"; k++ {
				for _, b := range r.Messages[k].Blocks {
					answered[b.ToolUseID] = true
				}
			}
			var missing []string
			var first *sent.Block
			for m := range pm.Blocks {
				b := &pm.Blocks[m]
				if b.Type == "tool_use" && !answered[b.ToolUseID] {
					missing = append(missing, b.ToolUseID)
					if first == nil {
						first = b
					}
				}
			}
			if len(missing) > 0 {
				out = append(out, Violation{
					Code: "SF162", N: n, M: -1, Index: r.Index(n, -1), ProviderError: errOpenAIMissingToolMessages(missing),
					MessageID: first.MessageID, PartID: first.PartID, Fix: "markToolAborted",
					Message: "tool call is sent without a tool message answering it",
				})
			}
		case "tool":
			k := n - 1
			for k >= 0 && r.Messages[k].Role == "tool" {
				k--
			}
			id := pm.Blocks[0].ToolUseID
			if k < 0 || r.Messages[k].Role != "assistant" || !hasBlock(r.Messages[k], "tool_use", id) {
				out = append(out, Violation{
					Code: "SF162", N: n, M: -1, Index: r.Index(n, -1), ProviderError: errOpenAIOrphanTool,
					MessageID: pm.Blocks[0].MessageID, PartID: pm.Blocks[0].PartID,
					Message: "tool message is sent without the tool call it answers",
				})
			}
		}
	}
	return out
}

// checkResponsesPairing is the Responses API's rule: every function_call
// item has a function_call_output item with its call id after it, and every
// output a call before it.
func checkResponsesPairing(r *sent.Request) []Violation {
	var out []Violation
	has := func(items []sent.Message, role, id string) bool {
		for _, pm := range items {
			if pm.Role == role && len(pm.Blocks) == 1 && pm.Blocks[0].ToolUseID == id {
				return true
			}
		}
		return false
	}
	for n, pm := range r.Messages {
		if len(pm.Blocks) != 1 {
			continue
		}
		b := pm.Blocks[0]
		switch {
		case pm.Role == "function_call" && !has(r.Messages[n+1:], "function_call_output", b.ToolUseID):
			out = append(out, Violation{
				Code: "SF162", N: n, M: -1, Index: r.Index(n, -1), ProviderError: fmt.Sprintf("No tool output found for function call %s.", b.ToolUseID),
				MessageID: b.MessageID, PartID: b.PartID, Fix: "markToolAborted",
				Message: "function call is sent without its output",
			})
		case pm.Role == "function_call_output" && !has(r.Messages[:n], "function_call", b.ToolUseID):
			out = append(out, Violation{
				Code: "SF162", N: n, M: -1, Index: r.Index(n, -1), ProviderError: fmt.Sprintf("No tool call found for function call output with call_id %s.", b.ToolUseID),
				MessageID: b.MessageID, PartID: b.PartID,
				Message: "function call output is sent without the call it answers",
			})
		}
	}
	return out
}

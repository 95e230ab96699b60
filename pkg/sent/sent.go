package sent

import (
	"github.com/sessfix/sessfix/pkg/store"
)

// Options say which request to build.
type Options struct {
	// ProviderID and ModelID are the model the request goes to; empty means
	// the session's current model (CurrentModel).
	ProviderID, ModelID string
	// Version picks the conversion; empty means VersionOf(session).
	Version Version
	// Until stops before this stored message: the errored assistant message
	// of a failed attempt, whose request held only what came before it.
	Until string
	// AsOfError counts assistant messages that sessfix excluded as still
	// sent: an error stored before a repair indexes the history as it was.
	AsOfError bool
	// NextPrompt appends the user's next prompt, as a resume sends it: a
	// user text block that maps to no stored record (merged into a trailing
	// user message where the family merges consecutive user content).
	NextPrompt bool
}

// Block is one piece of content of a request entry.
type Block struct {
	// Type is the block's type in the family's terms, with the Anthropic
	// names where the families agree: text, thinking, redacted_thinking,
	// tool_use, tool_result, image, document; reasoning (Chat Completions'
	// reasoning_content, a Responses reasoning item) and thought (Gemini);
	// tool_media for a tool result's media OpenCode sends in a user message
	// after the step's tool messages (Chat Completions; the media stay
	// counted in the tool_result block, which points at the same part).
	Type string
	// Text is the text of a text block, or the thinking of a thinking,
	// reasoning or thought block.
	Text string
	// Signature is what the provider verifies the block with: a thinking
	// block's signature (the data of a redacted_thinking block), a
	// Responses reasoning item's encrypted_content, a Gemini call's
	// thoughtSignature. Empty when none is sent.
	Signature string
	// ToolUseID is a call's id, or the id a result answers.
	ToolUseID string
	// IsError marks a tool result sent as an error.
	IsError bool
	// ItemID is the part's stored metadata.openai.itemId (rs_…, msg_…,
	// fc_…). OpenCode sends it only when the model's store option is on;
	// the Responses API names items by it in its errors either way.
	ItemID string
	// MessageID and PartID are the stored records the block came from;
	// both are empty for the next prompt.
	MessageID, PartID string
}

// Message is one entry of the request's history array: a message of the
// Messages, Converse and Chat Completions APIs, a Gemini content, or a
// Responses input item.
type Message struct {
	// Role is the entry's role: user or assistant (Anthropic, Bedrock);
	// system, user, assistant or tool (Chat Completions); user or model
	// (Gemini). A Responses item has the role of a message item (developer,
	// user, assistant) or its type (reasoning, function_call,
	// function_call_output).
	Role   string
	Blocks []Block
	// Sources are the ids of the stored messages the entry was built from,
	// in order, each once (tool results count for the assistant message
	// that called the tools). Empty for the system prompt and the next
	// prompt.
	Sources []string
	// Dropped are blocks OpenCode converted and the provider package then
	// left out (reasoning without a signature, redacted data or encrypted
	// content; empty reasoning a Chat Completions package does not send),
	// in order.
	Dropped []Block
	// SendsReasoning is set on a Chat Completions assistant entry sent with
	// a reasoning_content field; its value is the text of the entry's
	// reasoning blocks, joined.
	SendsReasoning bool
}

// SourceOf returns the stored message an entry was built from when it is
// exactly one ("" otherwise).
func (pm Message) SourceOf() string {
	if len(pm.Sources) == 1 {
		return pm.Sources[0]
	}
	return ""
}

// Request is the history OpenCode sends for a session to one model.
type Request struct {
	Version             Version
	ProviderID, ModelID string
	Kind                Family
	// Thinking is whether the model answers in thinking mode
	// (ThinkingEnabled; for Chat Completions also DeepSeek's reasoner).
	Thinking bool
	// Interleaved is set for a Chat Completions model whose every assistant
	// message OpenCode sends with reasoning_content (see Interleaved).
	Interleaved bool
	// Messages is the history array in the order the family indexes it:
	// Chat Completions' messages and Responses' input start with the system
	// (developer) prompt; Anthropic's, Bedrock's messages and Gemini's
	// contents do not.
	Messages []Message
	// NextPrompt is set when the last user content is the next prompt.
	NextPrompt bool
}

// Build builds the history OpenCode sends for the session to its current
// model (or the model in opts), in the shape of the model's family, with
// every block mapped back to its stored message and part.
func Build(s *store.Session, opts Options) *Request {
	c := newConverter(s, opts)
	msgs := s.Messages
	if opts.Until != "" {
		for i, m := range msgs {
			if m.ID == opts.Until {
				msgs = msgs[:i]
				break
			}
		}
	}
	var model []modelMsg
	for _, m := range HistoryOrder(firstCopies(msgs), c.v) {
		model = append(model, c.toModel(m)...)
	}
	model = c.normalize(model)
	if opts.NextPrompt {
		model = append(model, modelMsg{role: "user", content: []item{{kind: "text", text: "(next prompt)"}}})
	}
	r := &Request{
		Version: c.v, ProviderID: c.providerID, ModelID: c.modelID, Kind: c.family,
		NextPrompt: opts.NextPrompt,
	}
	switch c.family {
	case Chat:
		r.Thinking = chatThinks(s, c.providerID, c.modelID)
		r.Interleaved = Interleaved(c.providerID, c.modelID)
		r.Messages = c.chatMessages(model, r.Interleaved)
	case Responses:
		r.Thinking = ThinkingEnabled(s, c.providerID, c.modelID)
		r.Messages = c.responsesItems(model)
	case Google:
		r.Thinking = ThinkingEnabled(s, c.providerID, c.modelID)
		r.Messages = c.geminiContents(model)
	default:
		r.Thinking = ThinkingEnabled(s, c.providerID, c.modelID)
		r.Messages = c.groupedMessages(model)
	}
	return r
}

// firstCopies leaves out every copy of a message after its first: an
// export can hold a message id twice (SF211), and opencode import keeps the
// first record with an id, so OpenCode never sends the others.
func firstCopies(msgs []*store.Message) []*store.Message {
	seen := make(map[string]bool, len(msgs))
	out := msgs[:0:0]
	for _, m := range msgs {
		if !seen[m.ID] {
			seen[m.ID] = true
			out = append(out, m)
		}
	}
	if len(out) == len(msgs) {
		return msgs
	}
	return out
}

// Carried adds to ids every stored message the request carries: a block of
// it came from the message, or an entry built from it has no blocks at all
// (an empty message the provider rejects).
func (r *Request) Carried(ids map[string]bool) {
	for _, pm := range r.Messages {
		if len(pm.Blocks) == 0 {
			for _, src := range pm.Sources {
				ids[src] = true
			}
		}
		for _, b := range pm.Blocks {
			if b.MessageID != "" {
				ids[b.MessageID] = true
			}
		}
	}
}

// FinalToolLoop returns the index of the assistant message Anthropic treats
// as the final one of a tool loop: the one before a last user message that
// carries tool results (-1 when there is none).
func (r *Request) FinalToolLoop() int {
	last := len(r.Messages) - 1
	if last < 1 || r.Messages[last].Role != "user" || r.Messages[last-1].Role != "assistant" {
		return -1
	}
	for _, b := range r.Messages[last].Blocks {
		if b.Type == "tool_result" {
			return last - 1
		}
	}
	return -1
}

// FinalToolLoopMessage returns the stored message that starts the final
// tool-loop assistant message of the request ("" when there is none).
func (r *Request) FinalToolLoopMessage() string {
	n := r.FinalToolLoop()
	if n < 0 {
		return ""
	}
	if id, _, ok := r.Locate(n, 0); ok {
		return id
	}
	return r.Messages[n].SourceOf()
}

// LastAssistant returns the request's last entry when it is an assistant
// message (the final-position rules apply to it).
func (r *Request) LastAssistant() (int, Message, bool) {
	if r == nil || len(r.Messages) == 0 {
		return 0, Message{}, false
	}
	n := len(r.Messages) - 1
	pm := r.Messages[n]
	return n, pm, pm.Role == "assistant"
}

package scan

import (
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
)

var ruleSF210 = &Rule{
	Code:     SF210,
	Name:     "assistant-first",
	Severity: Error,
	Summary:  "the history opencode sends begins with an assistant message",
	What: "The messages OpenCode sends for the session start with an assistant turn: the user message that " +
		"opened the conversation is gone (deleted by hand, lost in an import, or cut by a compaction; OpenCode " +
		"issue #31048), or sorts after its answer (SF204). Assistant messages OpenCode never sends (an error other than an abort) do not count.",
	Why: "Anthropic's Messages API and Bedrock's Converse API reject a conversation that does not start with a " +
		"user message, so every prompt in the session fails the same way. Other providers accept it, but the " +
		"model sees answers without the question. Real OpenCode 1.18.33 loads and exports such a session, " +
		"also one imported from an export that lost its first prompt, and sends the history as it is; " +
		"against a mock that answers like Anthropic (the error text users report from the API) the resume " +
		"fails at once, not retried, and OpenCode stores the error below on the failed turn (observed). The " +
		"finding is an error for Anthropic and Bedrock models and a warning otherwise.",
	ProviderError: "Anthropic: messages: first message must use the \"user\" role; Bedrock: A conversation " +
		"must start with a user message. Try again with a conversation that starts with a user message.",
	FixDoc: "Report only. The missing prompt cannot be recovered, and inventing one would put words in the " +
		"user's mouth. Restore the session from a backup or an export, or continue in a new session.",
	Fixable: false,
	Check:   checkAssistantFirst,
}

// Provider errors of a history that begins with an assistant message.
const (
	anthropicFirstUser = `messages: first message must use the "user" role`
	bedrockFirstUser   = "A conversation must start with a user message. Try again with a conversation that starts with a user message."
)

func checkAssistantFirst(c *Context) {
	c.preflight()
	reqs := c.shared().reqs
	if len(reqs) == 0 || len(reqs[0].Messages) == 0 {
		return // may still be streaming: the request is not final
	}
	r := reqs[0]
	first := r.Messages[0]
	if first.Role != "assistant" || len(first.Sources) == 0 {
		return
	}
	m := c.Session.Message(first.Sources[0])
	if m == nil {
		return
	}
	f := At(m, nil)
	f.Index = "messages.0"
	f.Message = "the history opencode sends begins with this assistant message: the prompt it answers is gone"
	if parent := c.Session.Message(m.Get("parentID").String()); parent != nil && parent.Role == "user" {
		f.Message = "the history opencode sends begins with this assistant message: the prompt it answers comes after it (see SF204)"
	}
	switch r.Kind {
	case sent.Anthropic:
		f.ProviderError, f.ErrorType = anthropicFirstUser, string(opencode.ErrorFirstMessageNotUser)
		f.Message += ", which anthropic rejects"
	case sent.Bedrock:
		f.ProviderError, f.ErrorType = bedrockFirstUser, string(opencode.ErrorFirstMessageNotUser)
		f.Message += ", which bedrock rejects"
	default:
		f.Severity = Warning
		f.Message += "; " + r.ProviderID + " accepts it, anthropic and bedrock models would not"
	}
	c.Report(f)
}

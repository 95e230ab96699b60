package scan

import "github.com/sessfix/sessfix/pkg/opencode"

var ruleSF106 = &Rule{
	Code:     SF106,
	Name:     "thinking-disabled-violation",
	Severity: Warning,
	Summary:  "thinking parts on a message whose model does not think",
	What: "An assistant message with thinking parts whose model does not think: its id matches none of the " +
		"thinking model patterns and no reasoning that model produced itself appears in the session. Such parts " +
		"are usually left by a repair tool that prepended synthetic thinking, or by a model switch.",
	Why: "With thinking disabled, Anthropic rejects thinking in the final assistant message; in earlier turns it " +
		"is dead weight. The finding is an error on the session's last sent assistant message and a warning " +
		"elsewhere.",
	ProviderError: "When thinking is disabled, an assistant message in the final position cannot contain thinking",
	FixDoc:        "`stripThinkingParts` removes the message's thinking parts (backed up first).",
	Fixable:       true,
	Fix:           "stripThinkingParts",
	Check:         checkThinkingDisabled,
}

func checkThinkingDisabled(c *Context) {
	v := newSentView(c)
	last := ""
	for _, m := range c.Session.Messages {
		if m.Role == "assistant" && v.sent(m) {
			last = m.ID
		}
	}
	for _, m := range c.Session.Messages {
		if m.Role != "assistant" || !v.sent(m) || Streaming(c, m) {
			continue
		}
		th := opencode.ThinkingParts(m)
		if len(th) == 0 {
			continue
		}
		model := m.Get("modelID").String()
		// Whether the model thinks at all, not whether the newest turn
		// had it on: thinking the model produced in a turn that had it
		// on is its own.
		if opencode.ModelThinks(c.Session, m.Get("providerID").String(), model) {
			continue
		}
		f := At(m, th[0])
		f.Message = "assistant message has thinking, but its model " + quote(model) + " does not think"
		if m.ID == last {
			f.Severity = Error
			f.ProviderError = "When thinking is disabled, an assistant message in the final position cannot contain thinking"
		}
		c.Report(f)
	}
}

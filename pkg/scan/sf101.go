package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF101 = &Rule{
	Code:     SF101,
	Name:     "empty-message",
	Severity: Error,
	Summary:  "a message has no content part",
	What: "A user or assistant message with no content part: no text with non-whitespace characters, no tool " +
		"call, file, subtask, agent or compaction part. Typical shapes are an assistant turn cut off before its " +
		"text arrived (only step-start and an empty or whitespace-only text part) and a user message whose only " +
		"text is blank. Assistant messages made of thinking only are reported by SF102 instead.",
	Why: "Providers reject a history with an empty message, so every later prompt in the session fails the same " +
		"way. Messages OpenCode never sends are reported as info only: messages with no parts, messages that " +
		"send nothing at all (meta parts only, user text that is empty or marked ignored, or parts the " +
		"conversion for the session's OpenCode version leaves out), messages before " +
		"the last completed compaction, and assistant messages that ended with an error other than an abort.",
	ProviderError: "messages.N: all messages must have non-empty content except for the optional final assistant message",
	FixDoc: "When the message has empty or whitespace-only text parts, `replaceEmptyTextParts` gives them the " +
		"placeholder text (default `[user interrupted]`) and marks them synthetic. Otherwise `injectTextPart` " +
		"adds a synthetic text part with the placeholder after every existing part.",
	Fixable: true,
	Fix:     "replaceEmptyTextParts|injectTextPart",
	Check:   checkEmptyMessage,
}

const emptyContentError = "all messages must have non-empty content except for the optional final assistant message"

func checkEmptyMessage(c *Context) {
	v := newSentView(c)
	for _, m := range c.Session.Messages {
		if opencode.HasContent(m) || isThinkingOnly(m) || Streaming(c, m) {
			continue
		}
		blank := false
		for _, p := range m.Parts {
			if opencode.IsBlankText(p) {
				blank = true
			}
		}
		f := At(m, nil)
		f.Fix = "injectTextPart"
		if blank {
			f.Fix = "replaceEmptyTextParts"
		}
		what := m.Role + " message has no content"
		if blank {
			what += ": its text is empty or whitespace-only"
		}
		switch {
		case len(m.Parts) == 0:
			f.Severity = Info
			f.Message = m.Role + " message has no parts; opencode leaves it out of requests"
		case !v.history[m.ID]:
			f.Severity = Info
			f.Message = what + "; it is before the last compaction, so opencode no longer sends it"
		case opencode.SkippedByOpenCode(m):
			f.Severity = Info
			f.Message = fmt.Sprintf("%s; it ended with %s, so opencode never sends it", what, opencode.ErrorName(m))
		case sendsNothing(m) || c.dropsMessage(m):
			f.Severity = Info
			f.Message = what + "; opencode drops it from requests"
		default:
			f.Message = what
			f.ProviderError = emptyContentError
		}
		c.Report(f)
	}
}

// sendsNothing reports whether OpenCode's conversion leaves nothing of the
// message: user messages whose text parts are all "" or ignored (and nothing
// else), assistant messages with meta parts only.
func sendsNothing(m *store.Message) bool {
	for _, p := range m.Parts {
		if opencode.IsMetaPart(p) {
			continue
		}
		if m.Role == "user" && p.Type == "text" && (opencode.PartText(p) == "" || p.Get("ignored").Bool()) {
			continue
		}
		return false
	}
	return true
}

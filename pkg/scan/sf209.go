package scan

import "github.com/sessfix/sessfix/pkg/opencode"

var ruleSF209 = &Rule{
	Code:     SF209,
	Name:     "dangling-parent",
	Severity: Warning,
	Summary:  "an assistant message answers a message that no longer exists",
	What: "An assistant message whose `parentID` names no message of its session. Revert and undo clean-up " +
		"in OpenCode, hand edits and partial imports leave these behind (OpenCode issue #38864). A missing " +
		"`parentID` is SF206's.",
	Why: "OpenCode links each answer to the prompt it answers by `parentID`: the web UI groups turns by it and " +
		"revert walks it, and users of OpenCode 1.18.3's web UI reported `NotFoundError` on such sessions. " +
		"Real OpenCode 1.18.33 loads, exports, reverts and resumes the session without a symptom (observed), " +
		"so this is a warning, not an error: the link is wrong, and clients that follow it can fail.",
	FixDoc: "`repointParent` sets `parentID` to the closest user message before the assistant message, the " +
		"message OpenCode would have named (the default it writes when it answers a prompt). Real OpenCode " +
		"1.18.33 loads and resumes the session after the repair. An assistant message with no user message " +
		"before it is reported without a fix (see SF210).",
	Fixable: true,
	Fix:     "repointParent",
	Check:   checkDanglingParents,
}

func checkDanglingParents(c *Context) {
	s := c.Session
	// The session's message ids, once: Session.Message searches from the
	// first message, which made the rule quadratic in the messages.
	ids := make(map[string]bool, len(s.Messages))
	for _, m := range s.Messages {
		ids[m.ID] = true
	}
	for i, m := range s.Messages {
		if m.Role != "assistant" {
			continue
		}
		parent := m.Get("parentID")
		if !parent.Exists() || parent.String() == "" || ids[parent.String()] {
			continue
		}
		f := At(m, nil)
		f.Message = "assistant message answers " + quote(parent.String()) + ", which is not in the session"
		if opencode.PreviousUser(s, i) == nil {
			f.Message += ", and no user message comes before it to answer"
			c.reportNoFix(f)
			continue
		}
		c.Report(f)
	}
}

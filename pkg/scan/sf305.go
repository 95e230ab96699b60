package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF305 = &Rule{
	Code:     SF305,
	Name:     "dropped-prompt",
	Severity: Error,
	Summary:  "opencode up to 1.18.14 drops the session's prompts: the newest one's id sorts before the answer it follows",
	What: "The session's newest user message, in OpenCode's order, comes after its newest assistant message and " +
		"sorts before it by id, while that assistant message is finished (a `finish` other than `tool-calls` and " +
		"`unknown`). OpenCode up to 1.18.14 ends a turn as soon as the newest user message's id sorts before the " +
		"newest finished answer's, so it sends nothing for the prompt and stores no answer. Message ids carry " +
		"their creation time in 48 bits that wrapped on 2026-08-14 11:19:55 UTC (every 2^36 ms): every prompt " +
		"after the wrap to a session answered before it is dropped this way, and so is a prompt from a client " +
		"whose clock is behind the one that wrote the answer.",
	Why: "Every new prompt to the session is dropped without an error: `opencode run --session` exits 0 with no " +
		"output and the TUI shows no answer (OpenCode issues #43277, #46792). Seen on real OpenCode: 1.17.19, " +
		"1.18.3, 1.18.10, 1.18.11 and 1.18.14 drop the prompt; 1.18.15, 1.18.16, 1.18.17 and 1.18.33 answer it.",
	FixDoc: "Report only: the answer's id cannot change in place without rewriting every record that names it. " +
		"Update OpenCode to 1.18.15 or later, or continue in a copy whose ids are minted now: the finding names " +
		"the `sessfix fork` command for the session.",
	Fixable: false,
	Check:   checkDroppedPrompt,
}

func checkDroppedPrompt(c *Context) {
	ms := c.Session.Messages
	user, answer := -1, -1
	for i := len(ms) - 1; i >= 0 && (user < 0 || answer < 0); i-- {
		switch {
		case ms[i].Role != "user" && ms[i].Role != "assistant" || !firstCopy(ms, i):
		case ms[i].Role == "user" && user < 0:
			user = i
		case ms[i].Role == "assistant" && answer < 0:
			answer = i
		}
	}
	if user < 0 || answer < 0 || user < answer {
		return
	}
	u, a := ms[user], ms[answer]
	switch a.Get("finish").String() {
	case "", "tool-calls", "unknown":
		return
	}
	if u.ID >= a.ID {
		return
	}
	why := "written on a clock ahead of this prompt's"
	if u.Created > 0 && a.Created > 0 && u.Created/wrapPeriodMS != a.Created/wrapPeriodMS {
		why = "minted before the id clock wrapped on " + utc(u.Created/wrapPeriodMS*wrapPeriodMS)
	}
	fork := "sessfix fork " + store.ShellArg(c.Session.ID)
	if p := c.Session.Store.Path; p != "" {
		fork += " --store " + store.ShellArg(p)
	}
	f := At(u, nil)
	f.Message = fmt.Sprintf("the prompt's id sorts before that of the answer it follows, %s (%s): OpenCode up to 1.18.14 "+
		"ends its turn without sending anything, and every later prompt's; continue in a copy with `%s`, or update "+
		"OpenCode to 1.18.15 or later", quote(a.ID), why, fork)
	c.Report(f)
}

// firstCopy reports whether ms[i] is the first message with its id: a
// message id twice in an export (SF211) counts where its first copy is,
// as opencode import keeps the first record with an id.
func firstCopy(ms []*store.Message, i int) bool {
	for _, m := range ms[:i] {
		if m.ID == ms[i].ID {
			return false
		}
	}
	return true
}

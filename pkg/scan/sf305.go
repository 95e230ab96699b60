package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF305 = &Rule{
	Code:     SF305,
	Name:     "dropped-prompt",
	Severity: Error,
	Summary:  "opencode up to 1.18.14 drops the session's prompts: one written after the last answer sorts before it by id",
	What: "A user message written after the session's newest assistant message (in OpenCode's order), whose id " +
		"sorts before that message's, and that no assistant message answers, while that assistant message is " +
		"finished (a `finish` other than `tool-calls` and `unknown`). OpenCode up to 1.18.14 ends a turn as soon " +
		"as the newest user message's id sorts before the newest finished answer's (SQLite versions, which order " +
		"by `time.created`, meet the prompt last; JSON-era versions, which order by id, put it first, where the " +
		"loop never looks), so it sends nothing for the prompt and stores no answer. Message ids carry " +
		"their creation time in 48 bits that wrapped on 2026-08-14 11:19:55 UTC (every 2^36 ms): every prompt " +
		"after the wrap to a session answered before it is dropped this way, and so is a prompt from a client " +
		"whose clock is behind the one that wrote the answer.",
	Why: "Every new prompt to the session is dropped without an error: `opencode run --session` exits 0 with no " +
		"output and the TUI shows no answer (OpenCode issues #43277, #46792). Seen on real OpenCode: 1.1.65, " +
		"1.17.19, 1.18.3, 1.18.10, 1.18.11 and 1.18.14 drop the prompt; 1.18.15, 1.18.16, 1.18.17 and 1.18.33 " +
		"answer it.",
	FixDoc: "Report only: the answer's id cannot change in place without rewriting every record that names it. " +
		"Update OpenCode to 1.18.15 or later, or continue in a copy whose ids are minted now: the finding names " +
		"the `sessfix fork` command for the session.",
	Fixable: false,
	Check:   checkDroppedPrompt,
}

func checkDroppedPrompt(c *Context) {
	ms := c.Session.Messages
	// The newest answer in OpenCode's order: what its run loop compares the
	// newest prompt with.
	var a *store.Message
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == "assistant" && firstCopy(ms, i) {
			a = ms[i]
			break
		}
	}
	if a == nil || a.Created <= 0 {
		return
	}
	switch a.Get("finish").String() {
	case "", "tool-calls", "unknown":
		return
	}
	// The prompts written after it whose ids sort before it, unanswered.
	// In OpenCode's order they come after it (SQLite versions: by
	// time.created) or first of all (JSON-era versions: by id), where the
	// loop never sees them.
	var first *store.Message
	n := 0
	for i, m := range ms {
		if m.Role != "user" || m.Created <= a.Created || m.ID >= a.ID || !firstCopy(ms, i) || answered(ms, m.ID) {
			continue
		}
		if n++; first == nil || m.Created < first.Created {
			first = m
		}
	}
	if first == nil {
		return
	}
	why := "written on a clock ahead of this prompt's"
	if first.Created/wrapPeriodMS != a.Created/wrapPeriodMS {
		why = "minted before the id clock wrapped on " + utc(first.Created/wrapPeriodMS*wrapPeriodMS)
	}
	later := ""
	if n > 1 {
		later = fmt.Sprintf(" (and %d later %s)", n-1, plural.Word(n-1, "prompt", "prompts"))
	}
	fork := "sessfix fork " + store.ShellArg(c.Session.ID)
	if p := c.Session.Store.Path; p != "" {
		fork += " --store " + store.ShellArg(p)
	}
	f := At(first, nil)
	f.Message = fmt.Sprintf("prompt%s written after the answer %s sorts before it by id (%s): OpenCode up to 1.18.14 "+
		"ends its turn without sending anything, and every later prompt's; continue in a copy with `%s`, or update "+
		"OpenCode to 1.18.15 or later", later, quote(a.ID), why, fork)
	c.Report(f)
}

// answered reports whether an assistant message of ms answers the user
// message id (its parentID).
func answered(ms []*store.Message, id string) bool {
	for _, m := range ms {
		if m.Role == "assistant" && m.Get("parentID").String() == id {
			return true
		}
	}
	return false
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

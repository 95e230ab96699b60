package scan

import (
	"fmt"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF204 = &Rule{
	Code:     SF204,
	Name:     "message-order",
	Severity: Warning,
	Summary:  "opencode's message order disagrees with the order they were written in",
	What: "An assistant message that OpenCode orders before the user message it answers (its `parentID`), or " +
		"two neighbouring messages whose id order and `time.created` order disagree. Message ids encode the " +
		"creation time in 48 bits that wrap every 2^36 ms (about 795 days: 2024-06-10, 2026-08-14, " +
		"2028-10-17); a disagreement explained by such a wrap, with the messages created on either side of it, " +
		"is not reported.",
	Why: "OpenCode sends messages in stored order: by `time.created` then id in SQLite versions, by id in " +
		"JSON-era versions. When that order is not causal, the model sees answers before questions or tool " +
		"results before their calls, and providers that check turn order reject the history. A clock that " +
		"jumped, a copied session or a hand edit leaves this behind.",
	FixDoc:  "Report only: sessfix cannot know the intended order. Check the session by hand, or `sessfix fix` the other findings and continue in a new session.",
	Fixable: false,
	Check:   checkMessageOrder,
}

// wrapPeriodMS is the period of the 48-bit id clock: 2^36 milliseconds.
const wrapPeriodMS = int64(1) << 36

func checkMessageOrder(c *Context) {
	ms := c.Session.Messages
	// A message id twice in an export (SF211) counts where its first copy
	// is: opencode import keeps the first record with an id.
	pos := map[string]int{}
	for i, m := range ms {
		if _, dup := pos[m.ID]; !dup {
			pos[m.ID] = i
		}
	}
	for i, m := range ms {
		if m.Role != "assistant" {
			continue
		}
		parent := m.Get("parentID").String()
		if j, ok := pos[parent]; ok && j > i {
			f := At(m, nil)
			f.Message = "assistant message comes before the message it answers, " + quote(parent)
			c.Report(f)
		}
	}
	for i := 1; i < len(ms); i++ {
		a, b := ms[i-1], ms[i]
		if a.Created <= 0 || b.Created <= 0 || a.Created == b.Created {
			continue
		}
		if !store.ValidID(a.ID, store.PrefixMessage) || !store.ValidID(b.ID, store.PrefixMessage) {
			continue
		}
		idBefore := a.ID < b.ID
		createdBefore := a.Created < b.Created
		if idBefore == createdBefore {
			continue
		}
		// A wrap between the two creation times inverts the id order.
		if a.Created/wrapPeriodMS != b.Created/wrapPeriodMS {
			continue
		}
		f := At(b, nil)
		if createdBefore {
			f.Message = fmt.Sprintf("message was created after %s (%s) but its id sorts before it", quote(a.ID), utc(a.Created))
		} else {
			f.Message = fmt.Sprintf("message comes after %s but was created before it (%s)", quote(a.ID), utc(b.Created))
		}
		c.Report(f)
	}
}

func utc(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000 utc")
}

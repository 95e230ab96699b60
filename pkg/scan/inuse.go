package scan

import (
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// sentView answers, for the content rules, whether OpenCode sends a message
// and whether it may still be streaming.
type sentView struct {
	c       *Context
	history map[string]bool
}

func newSentView(c *Context) *sentView {
	cc := c.shared()
	if cc.history == nil {
		cc.history = opencode.History(c.Session)
	}
	return &sentView{c: c, history: cc.history}
}

// sent reports whether OpenCode includes the message in the next request.
func (v *sentView) sent(m *store.Message) bool {
	return v.history[m.ID] && !opencode.SkippedByOpenCode(m)
}

// Streaming reports whether an assistant message may still be being
// written: it is the session's open newest assistant message (OpenMessage)
// and the settle policy says the session is in use (InUse). Rules never
// flag such a message's parts as damage.
func Streaming(c *Context, m *store.Message) bool {
	if m.Role != "assistant" {
		return false
	}
	// Rules ask for every message: the session's open message is found
	// once per check.
	cc := c.shared()
	if !cc.openDone {
		cc.open, cc.openDone = opencode.OpenMessage(c.Session), true
	}
	return m == cc.open && InUse(c).InUse
}

// InUse is the settle policy's verdict on the session (SettlePolicy.Check
// with the scan's options and clock), computed once per check.
func InUse(c *Context) opencode.Use {
	cc := c.shared()
	if !cc.useDone {
		cc.use, cc.useDone = c.Opts.Policy().Check(c.Session, c.Now()), true
	}
	return cc.use
}

// reportNoFix reports a finding that `sessfix fix` cannot repair, even for a
// rule that is otherwise fixable.
func (c *Context) reportNoFix(f Finding) {
	c.Report(f)
	(*c.out)[len(*c.out)-1].Fix = ""
}

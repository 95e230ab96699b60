package scan

import (
	"fmt"
	"slices"

	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF404 = &Rule{
	Code:      SF404,
	Name:      "not-understood",
	Severity:  Info,
	OpenCode2: true,
	Summary:   "sessfix does not understand part of an opencode 2 session",
	What: "In an OpenCode 2 database: a `session_message` row whose `type` is not one OpenCode 2's source " +
		"defines (`user`, `assistant`, `system`, `synthetic`, `shell`, `compaction`, `agent-switched`, " +
		"`model-switched`), an assistant message whose `content` is not an array, a content item whose " +
		"`type` is not `text`, `reasoning` or `tool`, a tool item whose `state.status` is not `pending`, " +
		"`running`, `completed` or `error`, or a row or item that is not a JSON object. `idle` and " +
		"`location-switched` rows appear in captures of OpenCode 2.0 databases but not in the source sessfix " +
		"follows, so they are reported too.",
	Why: "sessfix reads OpenCode 2 sessions by the schema in OpenCode's source " +
		"(packages/core/src/session/message.ts of anomalyco/opencode) and reports what it does not understand " +
		"instead of guessing: it checks nothing in such a record. What OpenCode 2 does with it cannot be " +
		"checked here, since no OpenCode 2 build can be installed.",
	FixDoc: "Nothing to repair: the finding says what sessfix read past. A newer sessfix may know it; if " +
		"OpenCode 2 wrote it, it is worth reporting to sessfix.",
	Check: checkNotUnderstood,
}

// What OpenCode 2's source defines (packages/core/src/session/message.ts,
// commit 08e3e1f96710): the message types, an assistant message's content
// items, and a tool item's states.
var (
	openCode2Types    = []string{"user", "assistant", "system", "synthetic", "shell", "compaction", "agent-switched", "model-switched"}
	openCode2Content  = []string{"text", "reasoning", "tool"}
	openCode2Statuses = []string{"pending", "running", "completed", "error"}
)

func checkNotUnderstood(c *Context) {
	s := c.Session
	if s.OpenCode2 == nil || !s.OpenCode2.V2 {
		return
	}
	for _, b := range s.Broken {
		what := "this message's data"
		f := Finding{Location: b.Loc}
		switch b.Kind {
		case store.KindMessage:
			f.MessageID = b.ID
		case store.KindPart:
			what, f.PartID = "a content item of this message", b.ID
		}
		f.Message = what + " is not a JSON object (" + errText(b.Err) + "); sessfix reads past it"
		c.Report(f)
	}
	for _, m := range s.Messages {
		if !slices.Contains(openCode2Types, m.Role) {
			f := At(m, nil)
			f.Message = "message type " + quote(m.Role) + " is not in opencode 2's source; sessfix reads past it"
			c.Report(f)
			continue
		}
		if m.Role != "assistant" {
			continue
		}
		if content := m.Get("content"); !content.IsArray() {
			f := At(m, nil)
			f.Message = "this assistant message's content is not an array; sessfix reads past it"
			c.Report(f)
			continue
		}
		for _, p := range m.Parts {
			f := At(m, p)
			switch {
			case !slices.Contains(openCode2Content, p.Type):
				f.Message = fmt.Sprintf("a content item of this message has type %s, which is not in opencode 2's source; sessfix reads past it", quote(p.Type))
			case p.Type == "tool" && !slices.Contains(openCode2Statuses, p.Get("state.status").Str):
				f.Message = fmt.Sprintf("tool call %s has state %s, which is not in opencode 2's source; sessfix reads past it", quote(p.ID), quote(p.Get("state.status").Str))
			default:
				continue
			}
			c.Report(f)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return "unreadable"
	}
	return err.Error()
}

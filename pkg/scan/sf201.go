package scan

import (
	"errors"

	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF201 = &Rule{
	Code:     SF201,
	Name:     "unreadable-record",
	Severity: Error,
	Summary:  "a stored record cannot be read",
	What: "A session, message or part record that is not a usable JSON object: a 0-byte file, a NUL-filled or " +
		"truncated file, invalid JSON, JSON that is not an object, a part without `type` or a message without " +
		"`role`. Also a session that could not be loaded at all. JSON-era OpenCode wrote files without atomic " +
		"renames, so a crash or a full disk leaves these behind.",
	Why: "OpenCode fails before any request is made (`SyntaxError … JSON`): the session, and in some versions " +
		"the whole session list, cannot be opened, and `opencode export` fails too.",
	FixDoc: "`quarantine` moves the record out of the store into sessfix's backup area, so it can be inspected " +
		"or restored with `undo`; the rest of the session loads again. An entry that is not a readable record " +
		"file (a directory, FIFO or link where a record belongs, a file where a directory belongs, a file " +
		"sessfix may not read) cannot be backed up, and a record without an id (an export entry with no `info`) " +
		"cannot be named: both are reported without a fix, to be handled by hand.",
	Fixable: true,
	Fix:     "quarantine",
	Check:   checkUnreadable,
}

func checkUnreadable(c *Context) {
	for _, b := range c.Session.Broken {
		f := Finding{Location: b.Loc}
		switch b.Kind {
		case store.KindMessage:
			f.MessageID = b.ID
		case store.KindPart:
			f.PartID = b.ID
		}
		reason := "unreadable"
		if b.Err != nil {
			reason = b.Err.Error()
		}
		var pe *store.ParseError
		parsed := errors.As(b.Err, &pe)
		if b.Kind == store.KindSession && !parsed {
			f.Message = "session could not be loaded: " + reason
			c.reportNoFix(f)
			continue
		}
		f.Message = string(b.Kind) + " record is unreadable: " + reason
		// quarantine backs a record file up, then removes it: an entry that
		// cannot be backed up, or a record that cannot be named, is left
		// alone.
		switch {
		case parsed && pe.Entry && pe.Reason == "permission denied":
			f.Message += "; sessfix cannot back it up, so it leaves it alone: give sessfix read access, or run it as the store's owner"
		case parsed && pe.Entry:
			f.Message += "; sessfix cannot back it up, so it leaves it alone: move it out of the store by hand"
		case b.ID == "":
			f.Message += "; it has no id, so sessfix cannot tell which record it is and leaves it alone: repair or remove it by hand"
		default:
			c.Report(f)
			continue
		}
		c.reportNoFix(f)
	}
}

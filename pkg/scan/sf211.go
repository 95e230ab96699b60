package scan

import (
	"bytes"

	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF211 = &Rule{
	Code:     SF211,
	Name:     "duplicate-id",
	Severity: Error,
	Summary:  "two records of a session share an id",
	What: "One part id under two messages (an export's parts arrays, a JSON tree's part directories), or one " +
		"message id twice in an export. OpenCode's database cannot hold either (ids are its primary keys); " +
		"exports edited by hand or merged by other tools, and JSON trees copied over each other, can. Every " +
		"copy after the first is reported.",
	Why: "`opencode import` keeps only the first record with an id and drops the rest without a word " +
		"(observed on OpenCode 1.18.33, exit 0 and no warning): a message loses its part, and the resumed " +
		"session was rejected (`The final block in an assistant message cannot be thinking`) because the " +
		"text that ended the turn was gone. In an export that is an error. In a JSON tree OpenCode 1.1.65 shows both parts and resumes " +
		"fine, so it is a warning there: the tree cannot move into a database as it is. A message id twice in " +
		"an export with identical copies loses nothing (info); differing copies lose one (warning).",
	FixDoc: "`rekey` gives the duplicate part a new id that sorts where it was among its message's parts, so " +
		"every copy survives an import. Shown on real OpenCode 1.18.33 with `sessfix fix` run on an export " +
		"holding a duplicate part and a duplicate message: the fixed file imports with every part, the " +
		"session loads (`GET /session/:id/message` 200, `opencode export`), a resume sends every answer and " +
		"the strict mock accepts it, and `sessfix undo` puts the file back byte for byte. " +
		"Duplicate messages are reported only: an identical copy needs nothing, and which of two differing " +
		"copies is the real one cannot be known; remove the wrong one from the export by hand. Two copies of " +
		"a part inside one message are reported only too.",
	Fixable: true,
	Fix:     "rekey",
	Check:   checkDuplicateIDs,
}

func checkDuplicateIDs(c *Context) {
	s := c.Session
	export := s.Store.Shape == store.ShapeExport
	msgs := map[string]*store.Message{}
	parts := map[string]*store.Message{}
	for _, m := range s.Messages {
		if first, ok := msgs[m.ID]; ok {
			f := At(m, nil)
			f.Message = "message id is used twice in the export"
			if sameMessage(first, m) {
				f.Severity = Info
				f.Message += "; the copies are identical, and opencode import keeps one, so nothing is lost"
			} else {
				f.Severity = Warning
				f.Message += "; the copies differ, and opencode import keeps only the first, so this one would be lost: remove the wrong copy by hand"
			}
			c.reportNoFix(f)
			continue
		}
		msgs[m.ID] = m
		for _, p := range m.Parts {
			owner, ok := parts[p.ID]
			if !ok {
				parts[p.ID] = m
				continue
			}
			f := At(m, p)
			switch {
			case owner == m:
				f.Message = "part id is used twice in this message; sessfix cannot tell the copies apart to re-key one: remove the wrong one by hand"
				c.reportNoFix(f)
				continue
			case export:
				f.Message = "part id is also used by a part of message " + quote(owner.ID) + "; opencode import keeps only the first, so this message would lose its part"
			default:
				f.Severity = Warning
				f.Message = "part id is also used by a part of message " + quote(owner.ID) + "; opencode's database holds one part per id, so a copy would be lost in a move into it"
			}
			c.Report(f)
		}
	}
}

// sameMessage reports whether two messages hold the same bytes and parts.
func sameMessage(a, b *store.Message) bool {
	if !bytes.Equal(a.Raw, b.Raw) || len(a.Parts) != len(b.Parts) {
		return false
	}
	for i := range a.Parts {
		if a.Parts[i].ID != b.Parts[i].ID || !bytes.Equal(a.Parts[i].Raw, b.Parts[i].Raw) {
			return false
		}
	}
	return true
}

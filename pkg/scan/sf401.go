package scan

import (
	"time"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF401 = &Rule{
	Code:      SF401,
	Name:      "not-imported",
	Severity:  Warning,
	OpenCode2: true,
	Summary:   "a 1.x session, or what opencode 1.x added to it, is not in opencode 2",
	What: "In an OpenCode 2 database: a session of the 1.x tables that `session_v2` does not have although " +
		"OpenCode 2's one-shot import of the 1.x sessions has completed (`kv['migration.v1-v2']` is " +
		"`{\"phase\":\"completed\"}`), or an imported session whose 1.x copy has messages written after that " +
		"import. Both happen when an OpenCode 1.x client keeps using the data dir after OpenCode 2 ran " +
		"(#49641, #50130). A 1.x session older than the import that `session_v2` lacks is reported as info: " +
		"the import copies every session, so it was most likely deleted in OpenCode 2.",
	Why: "OpenCode 2 reads only its own tables and imports the 1.x sessions once: after the import has " +
		"completed it never looks at the 1.x tables again, so these sessions, or their later turns, never " +
		"appear in OpenCode 2. The rows are intact in the 1.x tables.",
	FixDoc: "Report only: sessfix never writes an OpenCode 2 database. What you can do: keep using OpenCode " +
		"1.x for these sessions, which still reads its tables; or export each with OpenCode 1.x (`opencode " +
		"export ID > ID.json`) and import the file into OpenCode 2 (`opencode import ID.json`; not confirmed: " +
		"no OpenCode 2 build can be installed to try it). Do not delete or reset `kv['migration.v1-v2']` to " +
		"make OpenCode 2 import again: without that record its importer first deletes every row of the " +
		"`event` table, and for each session it imports it deletes the session's `session_message` rows and " +
		"writes the 1.x copy in their place, so every session continued in OpenCode 2 loses what OpenCode 2 " +
		"added to it.",
	Check: checkNotInOpenCode2,
}

func checkNotInOpenCode2(c *Context) {
	s := c.Session
	oc := s.OpenCode2
	if oc == nil || oc.Import.Phase != store.ImportCompleted {
		return
	}
	at := oc.Import.Updated
	if !oc.V2 {
		f := Finding{}
		if s.Info != nil {
			f.Location = s.Info.Loc
		} else if len(s.Messages) > 0 {
			f = At(s.Messages[0], nil)
		}
		created := v1Created(s)
		switch {
		case created.IsZero() || created.After(at):
			f.Message = "opencode 2 does not have this session: opencode 1.x wrote it after opencode 2 imported the 1.x sessions (" +
				when(at) + "), and opencode 2 never imports again"
		default:
			f.Severity = Info
			f.Message = "opencode 2 does not have this session, though it is older than opencode 2's import of the 1.x sessions (" +
				when(at) + "): the import copies every session, so it was most likely deleted in opencode 2; its 1.x rows are intact"
		}
		c.Report(f)
		return
	}
	if oc.V1 == nil {
		return
	}
	have := map[string]bool{}
	for _, m := range s.Messages {
		have[m.ID] = true
	}
	var later []*store.Message
	for _, m := range oc.V1.Messages {
		if time.UnixMilli(m.Created).After(at) && !have[m.ID] {
			later = append(later, m)
		}
	}
	if len(later) == 0 {
		return
	}
	f := At(later[0], nil)
	f.Message = plural.Count(len(later), "message", "messages") + " that opencode 1.x wrote to this session after opencode 2 imported it (" +
		when(at) + ") " + plural.Word(len(later), "is", "are") + " not in opencode 2, which never imports again"
	c.Report(f)
}

// v1Created is when a 1.x session was created: its row's time_created,
// else its first message's; zero when neither is known.
func v1Created(s *store.Session) time.Time {
	if s.Info != nil {
		if ms := s.Info.Get("time_created").Int(); ms > 0 {
			return time.UnixMilli(ms)
		}
	}
	var first int64
	for _, m := range s.Messages {
		if m.Created > 0 && (first == 0 || m.Created < first) {
			first = m.Created
		}
	}
	if first == 0 {
		return time.Time{}
	}
	return time.UnixMilli(first)
}

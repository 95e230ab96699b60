package scan

import (
	"strings"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF202 = &Rule{
	Code:     SF202,
	Name:     "invalid-id",
	Severity: Error,
	Lower:    Warning,
	LowerWhen: "a part id without its prefix in an OpenCode 1.1 session, which 1.1 still serves, and an id " +
		"with its prefix but not OpenCode's shape, which loads",
	Summary: "a record id is not in opencode's format",
	What: "A session, message or part id that lacks its prefix (`ses_`, `msg_`, `prt_`) or is not in " +
		"OpenCode's format: the prefix, an underscore, 12 lowercase hex digits and 14 base62 characters. Hand " +
		"edits and other repair tools leave ids like `prt_0000000000_thinking`.",
	Why: "OpenCode rejects an id without its prefix: a part id that does not start with `prt` still resumes " +
		"from `opencode run`, but the server API the TUI uses answers HTTP 400 (\"Expected a string starting " +
		"with \\\"prt\\\"\") and the session cannot be opened. OpenCode 1.1 (the JSON `storage/` era) still " +
		"serves such a part, so in a session of that version it is a warning: the versions that follow reject " +
		"it. An id with the right prefix but the wrong shape loads (a warning), but sorts unpredictably, so the " +
		"part or message may sit in the wrong place.",
	FixDoc: "`rekey` gives the record a new id in OpenCode's format that sorts at the same position, and updates " +
		"the ids that point at it.",
	Fixable: true,
	Fix:     "rekey",
	Check:   checkInvalidID,
}

func checkInvalidID(c *Context) {
	s := c.Session
	v := sent.VersionOf(s)
	if s.ID != "" {
		if f, ok := idFinding(store.KindSession, s.ID, v); ok {
			if s.Info != nil {
				f.Location = s.Info.Loc
			}
			c.Report(f)
		}
	}
	for _, m := range s.Messages {
		if f, ok := idFinding(store.KindMessage, m.ID, v); ok {
			g := At(m, nil)
			g.Message, g.Severity = f.Message, f.Severity
			c.Report(g)
		}
		for _, p := range m.Parts {
			if f, ok := idFinding(store.KindPart, p.ID, v); ok {
				g := At(m, p)
				g.Message, g.Severity = f.Message, f.Severity
				c.Report(g)
			}
		}
	}
	for _, p := range s.Orphans {
		if f, ok := idFinding(store.KindPart, p.ID, v); ok {
			g := At(nil, p)
			g.Message, g.Severity = f.Message, f.Severity
			c.Report(g)
		}
	}
}

// idFinding checks one id of a session that OpenCode version v reads.
func idFinding(k store.Kind, id string, v sent.Version) (Finding, bool) {
	prefix := store.PrefixFor(k)
	if store.ValidID(id, prefix) {
		return Finding{}, false
	}
	if !strings.HasPrefix(id, prefix) {
		what := string(k) + " id " + quote(id) + " does not start with \"" + prefix + "\""
		if k == store.KindPart && v == sent.V11 {
			// Seen with real OpenCode 1.1.65 (e2e part-id-without-prefix).
			return Finding{Severity: Warning, Message: what + "; opencode 1.1 still serves it, later versions reject it"}, true
		}
		return Finding{Severity: Error, Message: what + "; opencode rejects it"}, true
	}
	return Finding{Severity: Warning, Message: string(k) + " id " + quote(id) + " is not in opencode's format (" + prefix + "_ + 12 lowercase hex digits + 14 base62 characters)"}, true
}

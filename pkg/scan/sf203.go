package scan

import (
	"errors"
	"fmt"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF203 = &Rule{
	Code:     SF203,
	Name:     "orphan-record",
	Severity: Warning,
	Summary:  "a record belongs to no parent, or its ids disagree with where it is stored",
	What: "A part whose message does not exist; messages whose session record is missing; a part whose " +
		"session (path or `session_id` column) differs from its message's session; a record body whose " +
		"`id`, `sessionID` or `messageID` differs from the id its path or columns give. Ids inside the body " +
		"are only checked when the body carries them (SQLite rows normally do not). The parts of a message entry " +
		"sessfix does not read (a symlink out of the store, a special file) are not orphans: SF201 reports the " +
		"message and both are left alone.",
	Why: "OpenCode never shows an orphan, so the data is silently lost, and a session without its record is " +
		"missing from the session list. A body whose ids disagree with its place makes JSON-era OpenCode file " +
		"the record under the wrong message or session, and confuses queries that go by `session_id`.",
	FixDoc: "`quarantine` moves orphan parts into the backup area (restorable with `undo`). Disagreeing body ids are " +
		"rewritten from the path or columns (`rewriteBodyIDs`), which are authoritative. A missing session record " +
		"of the OpenCode 1.0–1.1 `storage/` tree is rebuilt from its messages (`rebuildSessionRecord`) when they " +
		"say with confidence where it goes: every assistant message that records `path.cwd` and `path.root` " +
		"records the same ones, and exactly one project has `path.root` as its worktree (`global` for `/`, else " +
		"the one `storage/project/<id>.json` whose `worktree` it is; OpenCode's project cache in `.git/opencode`, " +
		"when the directory is on this machine, must agree). The record is written to " +
		"`storage/session/<project>/<id>.json` with `id`, `slug` `recovered`, `version` `sessfix`, `projectID`, " +
		"`directory` (`path.cwd`), `title` (the first line of the first prompt, cut to 60 characters, or " +
		"\"" + opencode.RebuiltTitleFallback + "\" when there is no prompt text) and `time.created`/`time.updated` " +
		"(the first message's creation, the latest time a message records); it has no `parentID`, so a " +
		"subagent's session comes back as a top-level one. Otherwise, and in the oldest per-project tree, the " +
		"finding is report only and says why: restore the record from a backup, or `opencode import` an " +
		"export of the session. A database's foreign keys keep a session row for every message. When an " +
		"unreadable session record is quarantined (SF201), the rebuilt record takes its place in the same " +
		"plan; without one the quarantine is refused, as it would leave the session unlisted.",
	Fixable: true,
	Fix:     "quarantine|rewriteBodyIDs|rebuildSessionRecord",
	Check:   checkOrphans,
}

func checkOrphans(c *Context) {
	s := c.Session
	if s.InfoMissing && len(s.Messages) > 0 {
		f := Finding{Location: s.Messages[0].Loc, Fix: "rebuildSessionRecord"}
		f.Message = "session record is missing, so opencode does not list this session or its " + plural.Count(len(s.Messages), "message", "messages")
		if _, why := opencode.SessionRecordRebuild(s, c.Opts.OpenCode); why != "" {
			f.Message += "; sessfix cannot rebuild it: " + why
			c.reportNoFix(f)
		} else {
			c.Report(f)
		}
	}
	unreadable, leftAlone := map[string]bool{}, map[string]bool{}
	for _, b := range s.Broken {
		if b.Kind == store.KindMessage && b.ID != "" {
			unreadable[b.ID] = true
			// A message entry sessfix does not read (a symlink out of the
			// store, a special file, one it may not read) still exists:
			// SF201 reports it, left alone, and its parts are not orphans.
			var pe *store.ParseError
			leftAlone[b.ID] = errors.As(b.Err, &pe) && pe.Entry
		}
	}
	for _, p := range s.Orphans {
		if leftAlone[p.MessageID] {
			continue
		}
		f := At(nil, p)
		f.Fix = "quarantine"
		if unreadable[p.MessageID] {
			f.Message = "part belongs to message " + quote(p.MessageID) + ", which is unreadable"
		} else {
			f.Message = "part belongs to message " + quote(p.MessageID) + ", which does not exist in this session"
		}
		c.Report(f)
	}
	for _, m := range s.Messages {
		bodyIDs(c, m, nil, [3]string{m.ID, "", m.SessionID})
		for _, p := range m.Parts {
			if p.SessionID != "" && m.SessionID != "" && p.SessionID != m.SessionID {
				f := At(m, p)
				f.Fix = "rewriteBodyIDs"
				f.Message = fmt.Sprintf("part is stored under session %s, but its message belongs to session %s", quote(p.SessionID), quote(m.SessionID))
				c.Report(f)
			}
			bodyIDs(c, m, p, [3]string{p.ID, m.ID, m.SessionID})
		}
	}
}

// bodyIDKeys are the body's id fields, in the order bodyIDs checks them.
var bodyIDKeys = [3]string{"id", "messageID", "sessionID"}

// bodyIDs reports body id fields that disagree with the stored ids: want
// holds the stored id for each of bodyIDKeys ("" when not checked). Fields
// are checked in a fixed order so findings are stable.
func bodyIDs(c *Context, m *store.Message, p *store.Part, want [3]string) {
	rec, kind := &m.Record, "message"
	if p != nil {
		rec, kind = &p.Record, "part"
	}
	for i, key := range bodyIDKeys {
		w := want[i]
		if w == "" {
			continue
		}
		got := rec.Get(key)
		if !got.Exists() || got.String() == w {
			continue
		}
		f := At(m, p)
		f.Fix = "rewriteBodyIDs"
		f.Message = fmt.Sprintf("%s body has %s %s, but it is stored as %s", kind, key, quote(got.String()), quote(w))
		c.Report(f)
	}
}

package surgery

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// ForkOptions configure PlanFork.
type ForkOptions struct {
	// To is the last message copied (an id or unique prefix); empty copies
	// the whole history.
	To string
	// Title is the new session's title; empty means OpenCode's default
	// for a fork (ForkTitle).
	Title string
	// Now mints the new ids and stamps the new session; zero means
	// time.Now.
	Now time.Time
	// Scan holds the settle window and clock the copy is checked with.
	Scan *scan.Options
}

// ForkPlan is a planned fork: the change set that creates the new session
// (in SessionPlan.Changes, whose SessionID is the new session's), and what
// it holds.
type ForkPlan struct {
	*fix.SessionPlan
	// NewID is the new session's id; Title its title.
	NewID, Title string
	// Messages and Parts pair each copied record's id with its copy's, in
	// order.
	Messages, Parts []IDPair
}

// IDPair is an original record id and its copy's.
type IDPair struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// forkSuffix is OpenCode's fork title suffix: "title (fork #N)".
var forkSuffix = regexp.MustCompile(`^(.+) \(fork #(\d+)\)$`)

// ForkTitle is the title OpenCode gives a fork of a session titled title:
// "title (fork #1)", and a fork of a fork counts up ("(fork #2)").
func ForkTitle(title string) string {
	if m := forkSuffix.FindStringSubmatch(title); m != nil {
		if n, err := strconv.Atoi(m[2]); err == nil {
			return fmt.Sprintf("%s (fork #%d)", m[1], n+1)
		}
	}
	return title + " (fork #1)"
}

// PlanFork plans a new session in s's store holding a copy of s's history
// up to and including the message opts.To names (all of it without To):
// fresh ids minted as OpenCode mints them (the session's descending, then
// each message's followed by its parts' ascending, in order), every
// reference to the copied records rewritten (a message's sessionID and
// parentID, a part's sessionID and messageID, a compaction's
// tail_start_id), and a session record copied from s's with a new id,
// title and creation time, and without the state that belongs to s alone:
// its parent, share link, pending revert, change summary, compaction and
// archive times. The change set only adds records: s is not touched.
func PlanFork(s *store.Session, opts ForkOptions) (*ForkPlan, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if len(s.Messages) == 0 {
		return nil, &RefusedError{Verb: "fork", SessionID: s.ID, Reason: "it has no message to copy"}
	}
	if s.InfoMissing {
		return nil, &RefusedError{Verb: "fork", SessionID: s.ID, Reason: "its session record is missing; sessfix cannot tell which project the copy belongs to"}
	}
	if len(s.Broken) > 0 {
		return nil, &RefusedError{Verb: "fork", SessionID: s.ID, Reason: fmt.Sprintf("%s cannot be read, so the copy would lose %s; repair the session with `sessfix fix` first",
			plural.Count(len(s.Broken), "record", "records"), plural.Word(len(s.Broken), "it", "them"))}
	}
	last := len(s.Messages) - 1
	if opts.To != "" {
		i, err := messageIndex(s, opts.To)
		if err != nil {
			return nil, err
		}
		last = i
	}
	if r := revertOf(s); r != nil {
		if i := slices.IndexFunc(s.Messages, func(m *store.Message) bool { return m.ID == r.MessageID }); i >= 0 && i <= last {
			return nil, &RefusedError{Verb: "fork", SessionID: s.ID, Reason: fmt.Sprintf(
				"OpenCode's pending revert (/undo) hides the messages from %s on, which the copy would bring back; name the last message to copy with --to (one before %s), or send a prompt or /redo in OpenCode first",
				r.MessageID, r.MessageID)}
		}
	}
	if err := checkPrefix(s, last, opts.Scan); err != nil {
		return nil, err
	}

	ids := store.NewIDSeq(now)
	newID := ids.Descending(store.PrefixSession)
	title := opts.Title
	if title == "" {
		title = ForkTitle(s.Title)
	}
	cs := &store.ChangeSet{Store: s.Store, SessionID: newID}
	if s.Store.Shape == store.ShapeExport {
		// An export file holds one session: the fork is a new file.
		cs.Store = store.Info{Shape: store.ShapeExport, Path: ForkExportPath(s.Store.Path, newID)}
	}
	plan := &ForkPlan{
		SessionPlan: &fix.SessionPlan{Store: s.Store, SessionID: s.ID, Changes: cs},
		NewID:       newID, Title: title,
	}
	copied := s.Messages[:last+1]
	if s.Info != nil {
		info, err := forkInfo(s, newID, title, copied, now)
		if err != nil {
			return nil, err
		}
		cs.Edits = append(cs.Edits, store.Edit{
			Op: store.OpAdd, Kind: store.KindSession, ID: newID, SessionID: newID, After: info,
			Created: now.UnixMilli(), Rule: "fork", Mutation: "forkSession",
			Reason: "a copy of session " + s.ID,
		})
	}
	msgIDs := map[string]string{}
	for _, m := range copied {
		mid := ids.Ascending(store.PrefixMessage)
		msgIDs[m.ID] = mid
		plan.Messages = append(plan.Messages, IDPair{From: m.ID, To: mid})
		body, err := rewriteRefs(s, m.Raw, map[string]string{"id": mid, "sessionID": newID}, msgIDs, "parentID")
		if err != nil {
			return nil, fmt.Errorf("message %s: %w", m.ID, err)
		}
		cs.Edits = append(cs.Edits, store.Edit{
			Op: store.OpAdd, Kind: store.KindMessage, ID: mid, SessionID: newID, After: body,
			Created: m.Created, Rule: "fork", Mutation: "copyMessage", Reason: "a copy of message " + m.ID,
		})
		for _, p := range m.Parts {
			pid := ids.Ascending(store.PrefixPart)
			plan.Parts = append(plan.Parts, IDPair{From: p.ID, To: pid})
			body, err := rewriteRefs(s, p.Raw, map[string]string{"id": pid, "sessionID": newID, "messageID": mid}, msgIDs, "tail_start_id")
			if err != nil {
				return nil, fmt.Errorf("part %s: %w", p.ID, err)
			}
			cs.Edits = append(cs.Edits, store.Edit{
				Op: store.OpAdd, Kind: store.KindPart, ID: pid, SessionID: newID, MessageID: mid, After: body,
				Created: now.UnixMilli(), Rule: "fork", Mutation: "copyPart", Reason: "a copy of part " + p.ID,
			})
		}
	}
	parts := 0
	for _, m := range copied {
		parts += len(m.Parts)
	}
	plan.Notes = append(plan.Notes, fmt.Sprintf("new session %s %q: a copy of %s and %s of session %s, up to message %s",
		newID, title, plural.Count(len(copied), "message", "messages"), plural.Count(parts, "part", "parts"), s.ID, copied[last].ID))
	if n := len(s.Messages) - len(copied); n > 0 {
		what := "the message"
		if n > 1 {
			what = fmt.Sprintf("the %d messages", n)
		}
		plan.Notes = append(plan.Notes, fmt.Sprintf("not copied: %s after %s", what, copied[last].ID))
	}
	if len(s.Orphans) > 0 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("not copied: %s whose message does not exist", plural.Count(len(s.Orphans), "part", "parts")))
	}
	return plan, nil
}

// ForkExportPath is the export file a fork of the session in the export
// file path is written to: next to it, named after it and the new session
// ("session.json" → "session.fork-ses_….json").
func ForkExportPath(path, newID string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".fork-" + newID + cmp.Or(ext, ".json")
}

// checkPrefix refuses a copy up to message last that would hold an error
// the session does not have: the history it keeps is checked as rewind
// checks what it leaves.
func checkPrefix(s *store.Session, last int, so *scan.Options) error {
	if last == len(s.Messages)-1 {
		return nil
	}
	c := newCut(s, "fork", CutOptions{Scan: so})
	cs := &store.ChangeSet{Store: s.Store, SessionID: s.ID}
	for _, m := range s.Messages[last+1:] {
		cs.Edits = append(cs.Edits, store.Edit{Op: store.OpDelete, Kind: store.KindMessage, ID: m.ID, SessionID: s.ID, Loc: m.Loc, Before: m.Raw})
	}
	if err := c.validate(cs); err != nil {
		if r, ok := err.(*RefusedError); ok {
			r.Verb, r.Reason = "fork", "the copy would be broken:"
		}
		return err
	}
	return nil
}

// rewriteRefs gives a copied message or part body its new ids: set are the
// keys to set (the record's own id and its parents'); ref is a key holding
// a message id of the session, rewritten to its copy's when it was copied.
// Shapes that keep ids in the body (every one but SQLite) get every key of
// set; a SQLite data column only those it already holds.
func rewriteRefs(s *store.Session, raw []byte, set map[string]string, msgIDs map[string]string, ref string) ([]byte, error) {
	out := raw
	var err error
	for _, k := range []string{"id", "sessionID", "messageID"} {
		v, ok := set[k]
		if !ok {
			continue
		}
		if s.Store.Shape == store.ShapeSQLite && !gjson.GetBytes(out, k).Exists() {
			continue
		}
		if out, err = fix.SetJSON(out, v, k); err != nil {
			return nil, err
		}
	}
	if old := gjson.GetBytes(out, ref); old.Type == gjson.String {
		if nid, ok := msgIDs[old.Str]; ok {
			if out, err = fix.SetJSON(out, nid, ref); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// forkInfo is the new session's record: s's, with the new id, title and
// times, totals over the copied messages, and none of the state that
// belongs to s alone.
func forkInfo(s *store.Session, newID, title string, copied []*store.Message, now time.Time) ([]byte, error) {
	raw := s.Info.Raw
	ms := now.UnixMilli()
	type kv struct {
		key string
		v   any
	}
	var sets []kv
	var drops []string
	if columns(s) {
		sets = []kv{{"id", newID}, {"title", title}, {"time_created", ms}, {"time_updated", ms}}
		for _, c := range []string{"parent_id", "share_url", "revert", "summary_additions", "summary_deletions",
			"summary_files", "summary_diffs", "time_compacting", "time_archived"} {
			sets = append(sets, kv{c, nil})
		}
		var err error
		for _, e := range sets {
			if !gjson.GetBytes(raw, e.key).Exists() && e.key != "id" && e.key != "title" {
				continue
			}
			if raw, err = fix.SetJSON(raw, e.v, e.key); err != nil {
				return nil, err
			}
		}
		return setTotals(s, raw, sumTotals(copied))
	}
	sets = []kv{{"id", newID}, {"title", title}}
	drops = []string{"parentID", "share", "revert", "summary"}
	var err error
	for _, e := range sets {
		if raw, err = fix.SetJSON(raw, e.v, e.key); err != nil {
			return nil, err
		}
	}
	for _, k := range drops {
		raw = fix.DeleteJSON(raw, k)
	}
	if t := gjson.GetBytes(raw, "time"); t.IsObject() && t.Index > 0 {
		// Splice the time object back byte for byte, without the state
		// that belongs to the original.
		tb := fix.DeleteJSON(fix.DeleteJSON([]byte(t.Raw), "compacting"), "archived")
		raw = append(append(append([]byte{}, raw[:t.Index]...), tb...), raw[t.Index+len(t.Raw):]...)
	}
	for _, k := range []string{"created", "updated"} {
		if raw, err = fix.SetJSON(raw, ms, "time", k); err != nil {
			return nil, err
		}
	}
	return setTotals(s, raw, sumTotals(copied))
}

// VerifyFork reads a written fork back from st, the store it was written
// to: the store lists the new session, and it holds exactly the copies the
// plan made, in order.
func VerifyFork(ctx context.Context, st store.Store, p *ForkPlan) error {
	refs, err := st.List(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(refs, func(r store.SessionRef) bool { return r.ID == p.NewID })
	if i < 0 {
		return fmt.Errorf("verification failed: %s does not list the new session %s", st.Info().Path, p.NewID)
	}
	s, err := st.Load(ctx, refs[i])
	if err != nil {
		return fmt.Errorf("the new session %s cannot be loaded: %w", p.NewID, err)
	}
	var msgs, parts []string
	for _, m := range s.Messages {
		msgs = append(msgs, m.ID)
		for _, q := range m.Parts {
			parts = append(parts, q.ID)
		}
	}
	if !slices.Equal(msgs, pairTo(p.Messages)) || !slices.Equal(parts, pairTo(p.Parts)) || len(s.Broken) > 0 {
		return fmt.Errorf("verification failed: the new session %s holds %s and %s, not the %d and %d copied",
			p.NewID, plural.Count(len(msgs), "message", "messages"), plural.Count(len(parts), "part", "parts"), len(p.Messages), len(p.Parts))
	}
	return nil
}

func pairTo(ps []IDPair) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.To
	}
	return out
}

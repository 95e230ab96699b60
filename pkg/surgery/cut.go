package surgery

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// CutOptions configure PlanDrop and PlanRewind.
type CutOptions struct {
	// KeepReplies keeps the assistant replies of a dropped user message:
	// they answer the closest earlier user message instead.
	KeepReplies bool
	// Scan holds the settle window and clock the session is checked with
	// before and after the cut; its rule filters are ignored.
	Scan *scan.Options
}

// RefusedError says why a cut was not planned: it would leave the session
// broken or inconsistent. Findings are the errors the cut would add.
type RefusedError struct {
	SessionID string
	Reason    string
	Findings  []scan.Finding
	// Verb is what was refused ("fork"); empty means a cut.
	Verb string
}

func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("refused to %s session %s: %s", cmp.Or(e.Verb, "cut"), e.SessionID, e.Reason)
	for _, f := range e.Findings {
		where := f.MessageID
		if f.PartID != "" {
			where += " " + f.PartID
		}
		msg += fmt.Sprintf("\n  %s %s (%s)", f.Code, f.Message, strings.TrimSpace(where))
	}
	return msg
}

// PlanDrop plans removing messages and parts of s, named by id or unique
// id prefix. A dropped message takes its parts along, and a dropped user
// message its assistant replies (their parentID), unless KeepReplies: then
// the replies answer the closest earlier user message that stays.
func PlanDrop(s *store.Session, messages, parts []string, opts CutOptions) (*fix.SessionPlan, error) {
	if len(messages) == 0 && len(parts) == 0 {
		return nil, fmt.Errorf("nothing to drop: name messages, or parts with --part")
	}
	c := newCut(s, "drop", opts)
	for _, id := range messages {
		i, err := messageIndex(s, id)
		if err != nil {
			return nil, err
		}
		c.drop(s.Messages[i], "dropped")
	}
	if !opts.KeepReplies {
		for _, m := range s.Messages {
			if m.Role == "assistant" && c.gone[m.Get("parentID").String()] && !c.gone[m.ID] {
				c.drop(m, "reply to a dropped message")
			}
		}
	}
	for _, id := range parts {
		m, p, err := findPart(s, id)
		if err != nil {
			return nil, err
		}
		if !c.gone[m.ID] {
			c.dropPart(m, p)
		}
	}
	return c.plan()
}

// PlanRewind plans discarding every message after the message named to (by
// id or unique id prefix): the cut OpenCode's revert promises, done now.
func PlanRewind(s *store.Session, to string, opts CutOptions) (*fix.SessionPlan, error) {
	i, err := messageIndex(s, to)
	if err != nil {
		return nil, err
	}
	c := newCut(s, "rewind", opts)
	for _, m := range s.Messages[i+1:] {
		c.drop(m, "after "+s.Messages[i].ID)
	}
	return c.plan()
}

// cut collects what a drop or rewind removes, then turns it into a plan.
type cut struct {
	s    *store.Session
	verb string // the edits' Rule: "drop", "rewind"
	opts CutOptions
	gone map[string]bool // messages dropped
	// dropped lists the messages dropped, in the order named, with why;
	// parts the parts dropped from messages that stay.
	dropped []droppedMessage
	parts   map[string][]*store.Part
}

type droppedMessage struct {
	m   *store.Message
	why string
}

func newCut(s *store.Session, verb string, opts CutOptions) *cut {
	return &cut{s: s, verb: verb, opts: opts, gone: map[string]bool{}, parts: map[string][]*store.Part{}}
}

func (c *cut) drop(m *store.Message, why string) {
	if !c.gone[m.ID] {
		c.gone[m.ID] = true
		c.dropped = append(c.dropped, droppedMessage{m, why})
	}
}

func (c *cut) dropPart(m *store.Message, p *store.Part) {
	if !slices.Contains(c.parts[m.ID], p) {
		c.parts[m.ID] = append(c.parts[m.ID], p)
	}
}

func (c *cut) refuse(format string, args ...any) error {
	return &RefusedError{SessionID: c.s.ID, Reason: fmt.Sprintf(format, args...)}
}

// plan builds the change set in OpenCode's message order, checks what the
// session relies on, and validates the result in memory.
func (c *cut) plan() (*fix.SessionPlan, error) {
	s := c.s
	if len(c.dropped) == 0 && len(c.parts) == 0 {
		return &fix.SessionPlan{Store: s.Store, SessionID: s.ID, Changes: &store.ChangeSet{Store: s.Store, SessionID: s.ID}}, nil
	}
	if len(c.gone) == len(s.Messages) {
		return nil, c.refuse("it would leave no message; the session would be empty")
	}
	if err := c.consistent(); err != nil {
		return nil, err
	}
	cs := &store.ChangeSet{Store: s.Store, SessionID: s.ID}
	plan := &fix.SessionPlan{Store: s.Store, SessionID: s.ID, Changes: cs}
	lastUser := ""
	for _, m := range s.Messages {
		switch {
		case c.gone[m.ID]:
			// The parts first, each named, so the diff and the backup show
			// every record that goes; the writers would take them along.
			for _, p := range m.Parts {
				cs.Edits = append(cs.Edits, store.Edit{
					Op: store.OpDelete, Kind: store.KindPart, ID: p.ID, SessionID: s.ID, MessageID: m.ID,
					Loc: p.Loc, Before: p.Raw, Rule: c.verb, Mutation: "dropMessage", Reason: "part of a dropped message",
				})
			}
			cs.Edits = append(cs.Edits, store.Edit{
				Op: store.OpDelete, Kind: store.KindMessage, ID: m.ID, SessionID: s.ID,
				Loc: m.Loc, Before: m.Raw, Rule: c.verb, Mutation: "dropMessage", Reason: c.why(m),
			})
			plan.Notes = append(plan.Notes, fmt.Sprintf("drop %s message %s (%s): %s",
				m.Role, m.ID, plural.Count(len(m.Parts), "part", "parts"), c.why(m)))
			continue
		case m.Role == "assistant" && c.gone[m.Get("parentID").String()]:
			// KeepReplies: the reply answers the closest earlier user
			// message that stays.
			if lastUser == "" {
				return nil, c.refuse("assistant message %s would answer no user message (drop it too, or leave out --keep-replies)", m.ID)
			}
			after, err := fix.SetJSON(m.Raw, lastUser, "parentID")
			if err != nil {
				return nil, fmt.Errorf("message %s: %w", m.ID, err)
			}
			cs.Edits = append(cs.Edits, store.Edit{
				Op: store.OpUpdate, Kind: store.KindMessage, ID: m.ID, SessionID: s.ID,
				Loc: m.Loc, Before: m.Raw, After: after, Rule: c.verb, Mutation: "reparentMessage",
				Reason: "its user message is dropped; it now answers " + lastUser,
			})
			plan.Notes = append(plan.Notes, fmt.Sprintf("keep assistant message %s: it now answers %s", m.ID, lastUser))
		}
		if m.Role == "user" {
			lastUser = m.ID
		}
		for _, p := range c.parts[m.ID] {
			cs.Edits = append(cs.Edits, store.Edit{
				Op: store.OpDelete, Kind: store.KindPart, ID: p.ID, SessionID: s.ID, MessageID: m.ID,
				Loc: p.Loc, Before: p.Raw, Rule: c.verb, Mutation: "dropPart", Reason: "dropped",
			})
			plan.Notes = append(plan.Notes, fmt.Sprintf("drop %s part %s of message %s", p.Type, p.ID, m.ID))
		}
	}
	ed, note, err := totalsEdit(s, c.gone, c.verb)
	if err != nil {
		return nil, err
	}
	if ed != nil {
		cs.Edits = append(cs.Edits, *ed)
		plan.Notes = append(plan.Notes, note)
	}
	if err := c.validate(cs); err != nil {
		return nil, err
	}
	return plan, nil
}

func (c *cut) why(m *store.Message) string {
	for _, d := range c.dropped {
		if d.m == m {
			return d.why
		}
	}
	return "dropped"
}

// consistent refuses a cut that would leave a reference OpenCode follows
// pointing at nothing: a message left without parts, a pending revert
// (/undo) whose message or part goes, a compaction whose kept tail starts
// at a dropped message.
func (c *cut) consistent() error {
	s := c.s
	for _, m := range s.Messages {
		if c.gone[m.ID] || len(c.parts[m.ID]) == 0 {
			continue
		}
		if len(c.parts[m.ID]) == len(m.Parts) {
			return c.refuse("message %s would have no part left; drop the message instead", m.ID)
		}
	}
	if r := revertOf(s); r != nil {
		gonePart := false
		if m := s.Message(r.MessageID); m != nil && r.PartID != "" {
			gonePart = slices.ContainsFunc(c.parts[m.ID], func(p *store.Part) bool { return p.ID == r.PartID })
		}
		if c.gone[r.MessageID] || gonePart {
			return c.refuse("OpenCode's pending revert (/undo) starts at %s, which this removes; send a prompt or /redo in OpenCode first, then cut", r.MessageID)
		}
	}
	for _, m := range s.Messages {
		if c.gone[m.ID] {
			continue
		}
		for _, p := range m.Parts {
			if p.Type != "compaction" || slices.Contains(c.parts[m.ID], p) {
				continue
			}
			if tail := p.Get("tail_start_id").String(); tail != "" && c.gone[tail] {
				return c.refuse("the compaction in message %s keeps the history from %s, which this removes; cut from the compaction instead", m.ID, tail)
			}
		}
	}
	return nil
}

// validate applies the change set to a copy of the session and runs every
// rule on it: an error the session did not have refuses the cut.
func (c *cut) validate(cs *store.ChangeSet) error {
	after, err := fix.ApplyInMemory(c.s, cs)
	if err != nil {
		return fmt.Errorf("session %s: the cut does not apply: %w", c.s.ID, err)
	}
	var so scan.Options
	if c.opts.Scan != nil {
		so.Settle, so.Now = c.opts.Scan.Settle, c.opts.Scan.Now
	}
	had := map[string]bool{}
	for _, f := range scan.CheckSession(c.s, &so) {
		had[f.Code+"\x00"+f.MessageID+"\x00"+f.PartID] = true
	}
	var added []scan.Finding
	for _, f := range scan.CheckSession(after, &so) {
		if f.Severity == scan.Error && !had[f.Code+"\x00"+f.MessageID+"\x00"+f.PartID] {
			added = append(added, f)
		}
	}
	if len(added) > 0 {
		return &RefusedError{SessionID: c.s.ID, Reason: "the session left would be broken:", Findings: added}
	}
	return nil
}

// messageIndex finds a message of the session by id or unique id prefix,
// and returns its position in OpenCode's order.
func messageIndex(s *store.Session, id string) (int, error) {
	at := -1
	var matches []string
	for i, m := range s.Messages {
		if m.ID == id {
			return i, nil
		}
		if id != "" && strings.HasPrefix(m.ID, id) {
			at = i
			matches = append(matches, m.ID)
		}
	}
	switch len(matches) {
	case 0:
		return -1, &NoRecordError{SessionID: s.ID, ID: id, What: "message"}
	case 1:
		return at, nil
	}
	return -1, &AmbiguousError{Prefix: id, IDs: matches, What: "messages of session " + s.ID}
}

// findPart finds a part of the session by id or unique id prefix.
func findPart(s *store.Session, id string) (*store.Message, *store.Part, error) {
	var hits [][2]int
	var ids []string
	for i, m := range s.Messages {
		for j, p := range m.Parts {
			if p.ID == id {
				return m, p, nil
			}
			if id != "" && strings.HasPrefix(p.ID, id) {
				hits = append(hits, [2]int{i, j})
				ids = append(ids, p.ID)
			}
		}
	}
	switch len(hits) {
	case 0:
		return nil, nil, &NoRecordError{SessionID: s.ID, ID: id, What: "part"}
	case 1:
		m := s.Messages[hits[0][0]]
		return m, m.Parts[hits[0][1]], nil
	}
	return nil, nil, &AmbiguousError{Prefix: id, IDs: ids, What: "parts of session " + s.ID}
}

package fix

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/sessfix/sessfix/pkg/store"
)

// ApplyInMemory returns a copy of the session with the change set applied,
// the way a store Writer would apply it: updates replace bodies, adds insert
// parts at their id's sort position, deletes and quarantines remove records,
// re-keys give records their new id (a part moves to its new sort position).
// The input session is not modified. It fails when an edit's Before does not
// match the record (the plan is stale) or its target does not exist.
//
// The copy shares the messages the change set does not touch (and their
// parts) with the input: records are never changed in place, so a copy costs
// the messages it edits, not the session. Neither session may be changed in
// place afterwards.
func ApplyInMemory(s *store.Session, cs *store.ChangeSet) (*store.Session, error) {
	a := &applier{s: shallowClone(s)}
	if cs == nil {
		return a.s, nil
	}
	for i, ed := range cs.Edits {
		if err := a.apply(ed); err != nil {
			return nil, fmt.Errorf("edit %d (%s %s %s): %w", i+1, ed.Op, ed.Kind, ed.ID, err)
		}
	}
	return a.s, nil
}

// shallowClone copies the session and its lists of records, sharing the
// messages and records themselves.
func shallowClone(s *store.Session) *store.Session {
	c := *s
	if s.Info != nil {
		info := *s.Info
		c.Info = &info
	}
	c.Messages = slices.Clone(s.Messages)
	c.Broken = slices.Clone(s.Broken)
	c.Orphans = slices.Clone(s.Orphans)
	return &c
}

// applier applies edits to a shallow copy, copying each message before it
// changes it.
type applier struct {
	s     *store.Session
	owned map[*store.Message]bool
}

// own returns message i of the copy as a copy of its own (with its own list
// of parts), made on first use.
func (a *applier) own(i int) *store.Message {
	m := a.s.Messages[i]
	if a.owned[m] {
		return m
	}
	c := *m
	c.Parts = slices.Clone(m.Parts)
	if a.owned == nil {
		a.owned = map[*store.Message]bool{}
	}
	a.owned[&c] = true
	a.s.Messages[i] = &c
	return &c
}

// locatePart finds the message index and part of a part edit: in the
// message the edit names first, then anywhere.
func (a *applier) locatePart(ed store.Edit) (int, *store.Part) {
	if i := msgIndex(a.s, ed.MessageID); i >= 0 {
		for _, p := range a.s.Messages[i].Parts {
			if p.ID == ed.ID {
				return i, p
			}
		}
	}
	for i, m := range a.s.Messages {
		for _, p := range m.Parts {
			if p.ID == ed.ID {
				return i, p
			}
		}
	}
	return -1, nil
}

func (a *applier) apply(ed store.Edit) error {
	switch ed.Op {
	case store.OpAdd:
		return a.add(ed)
	case store.OpUpdate, store.OpRekey:
		return a.update(ed)
	case store.OpDelete, store.OpQuarantine:
		return a.remove(ed)
	}
	return fmt.Errorf("unknown edit op %q", ed.Op)
}

func checkBefore(rec *store.Record, ed store.Edit) error {
	if ed.Before != nil && !bytes.Equal(rec.Raw, ed.Before) {
		return fmt.Errorf("the record changed since the plan was made")
	}
	return nil
}

func (a *applier) add(ed store.Edit) error {
	if ed.Kind == store.KindSession {
		return a.addSession(ed)
	}
	if ed.Kind != store.KindPart {
		return fmt.Errorf("only parts and session records can be added")
	}
	i := msgIndex(a.s, ed.MessageID)
	if i < 0 {
		return fmt.Errorf("message %s does not exist", ed.MessageID)
	}
	if _, p := findPart(a.s, ed.ID); p != nil {
		return fmt.Errorf("part %s already exists", ed.ID)
	}
	m := a.s.Messages[i]
	p, err := store.NewPart(store.Record{ID: ed.ID, Raw: ed.After}, m.ID, ed.SessionID)
	if err != nil {
		return err
	}
	insertPart(a.own(i), p)
	return nil
}

// addSession puts a session record (rebuildSessionRecord) in place of a
// missing one.
func (a *applier) addSession(ed store.Edit) error {
	s := a.s
	if ed.ID != s.ID || s.Info != nil {
		return fmt.Errorf("session %s already has a record", ed.ID)
	}
	rec := &store.Record{Kind: store.KindSession, ID: ed.ID, Raw: ed.After}
	if err := store.CheckBody(rec.Raw); err != nil {
		return fmt.Errorf("session %s: %w", ed.ID, err)
	}
	s.Info, s.InfoMissing, s.Title = rec, false, rec.Get("title").String()
	return nil
}

// insertPart puts p before the first part whose id sorts after it.
func insertPart(m *store.Message, p *store.Part) {
	i := 0
	for i < len(m.Parts) && m.Parts[i].ID < p.ID {
		i++
	}
	m.Parts = append(m.Parts, nil)
	copy(m.Parts[i+1:], m.Parts[i:])
	m.Parts[i] = p
}

func removePart(m *store.Message, id string) {
	for i, p := range m.Parts {
		if p.ID == id {
			m.Parts = append(m.Parts[:i], m.Parts[i+1:]...)
			return
		}
	}
}

func (a *applier) update(ed store.Edit) error {
	s := a.s
	switch ed.Kind {
	case store.KindSession:
		if s.Info == nil {
			return fmt.Errorf("the session has no info record")
		}
		if err := checkBefore(s.Info, ed); err != nil {
			return err
		}
		s.Info.Raw = ed.After // s.Info is the copy's own
		return nil
	case store.KindMessage:
		i := msgIndex(s, ed.ID)
		if i < 0 {
			return fmt.Errorf("message does not exist")
		}
		old := s.Messages[i]
		if err := checkBefore(&old.Record, ed); err != nil {
			return err
		}
		rec := old.Record
		rec.Raw = ed.After
		if ed.Op == store.OpRekey {
			rec.ID = ed.NewID
		}
		nm, err := store.NewMessage(rec, old.SessionID)
		if err != nil {
			return err
		}
		nm.Parts = make([]*store.Part, len(old.Parts))
		for j, p := range old.Parts {
			if p.MessageID != nm.ID {
				pc := *p
				pc.MessageID = nm.ID
				p = &pc
			}
			nm.Parts[j] = p
		}
		if a.owned == nil {
			a.owned = map[*store.Message]bool{}
		}
		a.owned[nm] = true
		s.Messages[i] = nm
		return nil
	case store.KindPart:
		i, p := a.locatePart(ed)
		if p == nil {
			return fmt.Errorf("part does not exist")
		}
		if err := checkBefore(&p.Record, ed); err != nil {
			return err
		}
		m := a.own(i)
		rec := p.Record
		rec.Raw = ed.After
		if ed.Op == store.OpRekey {
			rec.ID = ed.NewID
		}
		np, err := store.NewPart(rec, m.ID, p.SessionID)
		if err != nil {
			return err
		}
		removePart(m, p.ID)
		insertPart(m, np)
		return nil
	}
	return fmt.Errorf("unknown record kind %q", ed.Kind)
}

// remove deletes or quarantines a record. Removing a message removes its
// parts too, loaded or orphaned, as writers do (SQLite's ON DELETE CASCADE;
// the JSON writers remove the message's parts directory).
func (a *applier) remove(ed store.Edit) error {
	s := a.s // its Broken and Orphans lists are the copy's own
	for i, b := range s.Broken {
		if b.ID == ed.ID && b.Loc == ed.Loc {
			s.Broken = append(s.Broken[:i], s.Broken[i+1:]...)
			switch b.Kind {
			case store.KindMessage:
				dropOrphansOf(s, b.ID)
			case store.KindSession:
				// A duplicate leaves the record read first (Info, or
				// another unreadable one) in place.
				s.InfoMissing = s.Info == nil && !slices.ContainsFunc(s.Broken, func(o *store.Record) bool { return o.Kind == store.KindSession }) &&
					keepsSessionRecords(s.Store.Shape)
			}
			return nil
		}
	}
	switch ed.Kind {
	case store.KindPart:
		for i, o := range s.Orphans {
			if o.ID == ed.ID {
				s.Orphans = append(s.Orphans[:i], s.Orphans[i+1:]...)
				return nil
			}
		}
		i, p := a.locatePart(ed)
		if p == nil {
			return fmt.Errorf("part does not exist")
		}
		if err := checkBefore(&p.Record, ed); err != nil {
			return err
		}
		removePart(a.own(i), p.ID)
		return nil
	case store.KindMessage:
		i := msgIndex(s, ed.ID)
		if i < 0 {
			return fmt.Errorf("message does not exist")
		}
		if err := checkBefore(&s.Messages[i].Record, ed); err != nil {
			return err
		}
		s.Messages = append(s.Messages[:i], s.Messages[i+1:]...)
		dropOrphansOf(s, ed.ID)
		return nil
	case store.KindSession:
		if s.Info != nil && s.Info.ID == ed.ID {
			s.Info, s.InfoMissing = nil, keepsSessionRecords(s.Store.Shape)
			return nil
		}
	}
	return fmt.Errorf("record does not exist")
}

// dropOrphansOf removes from s what removing a message takes along besides
// its loaded parts: its orphaned parts and its unreadable ones (their
// Broken records name it as their Parent). A plan then holds no edit of a
// record an earlier edit of it removed.
func dropOrphansOf(s *store.Session, messageID string) {
	keep := s.Orphans[:0:0]
	for _, o := range s.Orphans {
		if o.MessageID != messageID {
			keep = append(keep, o)
		}
	}
	s.Orphans = keep
	broken := s.Broken[:0:0]
	for _, b := range s.Broken {
		if b.Kind != store.KindPart || b.Parent != messageID {
			broken = append(broken, b)
		}
	}
	s.Broken = broken
}

// keepsSessionRecords reports whether every session of the shape has a
// session record, so that one removed leaves its messages without it (the
// readers' InfoMissing): the storage and project layouts and the
// databases. The sessions layout's session.json is optional, and an export
// file holds one session.
func keepsSessionRecords(sh store.Shape) bool {
	switch sh {
	case store.ShapeStorage, store.ShapeProject, store.ShapeSQLite:
		return true
	}
	return false
}

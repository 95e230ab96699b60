package fix

import (
	"bytes"
	"fmt"

	"github.com/sessfix/sessfix/pkg/store"
)

// ApplyInMemory returns a copy of the session with the change set applied,
// the way a store Writer would apply it: updates replace bodies, adds insert
// parts at their id's sort position, deletes and quarantines remove records,
// re-keys give records their new id (a part moves to its new sort position).
// The input session is not modified. It fails when an edit's Before does not
// match the record (the plan is stale) or its target does not exist.
func ApplyInMemory(s *store.Session, cs *store.ChangeSet) (*store.Session, error) {
	out := cloneSession(s)
	if cs == nil {
		return out, nil
	}
	for i, ed := range cs.Edits {
		if err := applyEdit(out, ed); err != nil {
			return nil, fmt.Errorf("edit %d (%s %s %s): %w", i+1, ed.Op, ed.Kind, ed.ID, err)
		}
	}
	return out, nil
}

func cloneSession(s *store.Session) *store.Session {
	c := *s
	if s.Info != nil {
		info := *s.Info
		c.Info = &info
	}
	c.Messages = make([]*store.Message, len(s.Messages))
	for i, m := range s.Messages {
		mc := *m
		mc.Parts = make([]*store.Part, len(m.Parts))
		for j, p := range m.Parts {
			pc := *p
			mc.Parts[j] = &pc
		}
		c.Messages[i] = &mc
	}
	c.Broken = append([]*store.Record(nil), s.Broken...)
	c.Orphans = append([]*store.Part(nil), s.Orphans...)
	return &c
}

func applyEdit(s *store.Session, ed store.Edit) error {
	switch ed.Op {
	case store.OpAdd:
		return applyAdd(s, ed)
	case store.OpUpdate, store.OpRekey:
		return applyUpdate(s, ed)
	case store.OpDelete, store.OpQuarantine:
		return applyRemove(s, ed)
	}
	return fmt.Errorf("unknown edit op %q", ed.Op)
}

func checkBefore(rec *store.Record, ed store.Edit) error {
	if ed.Before != nil && !bytes.Equal(rec.Raw, ed.Before) {
		return fmt.Errorf("the record changed since the plan was made")
	}
	return nil
}

func applyAdd(s *store.Session, ed store.Edit) error {
	if ed.Kind != store.KindPart {
		return fmt.Errorf("only parts can be added")
	}
	m := s.Message(ed.MessageID)
	if m == nil {
		return fmt.Errorf("message %s does not exist", ed.MessageID)
	}
	if _, p := findPart(s, ed.ID); p != nil {
		return fmt.Errorf("part %s already exists", ed.ID)
	}
	p, err := store.NewPart(store.Record{ID: ed.ID, Raw: ed.After}, m.ID, ed.SessionID)
	if err != nil {
		return err
	}
	insertPart(m, p)
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

func applyUpdate(s *store.Session, ed store.Edit) error {
	switch ed.Kind {
	case store.KindSession:
		if s.Info == nil {
			return fmt.Errorf("the session has no info record")
		}
		if err := checkBefore(s.Info, ed); err != nil {
			return err
		}
		s.Info.Raw = ed.After
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
		nm.Parts = old.Parts
		for _, p := range nm.Parts {
			p.MessageID = nm.ID
		}
		s.Messages[i] = nm
		return nil
	case store.KindPart:
		m, p := findPartIn(s, ed.MessageID, ed.ID)
		if p == nil {
			return fmt.Errorf("part does not exist")
		}
		if err := checkBefore(&p.Record, ed); err != nil {
			return err
		}
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

// applyRemove deletes or quarantines a record. Removing a message removes
// its parts too, loaded or orphaned, as writers do (SQLite's ON DELETE
// CASCADE; the JSON writers remove the message's parts directory).
func applyRemove(s *store.Session, ed store.Edit) error {
	for i, b := range s.Broken {
		if b.ID == ed.ID && b.Loc == ed.Loc {
			s.Broken = append(s.Broken[:i], s.Broken[i+1:]...)
			if b.Kind == store.KindMessage {
				dropOrphansOf(s, b.ID)
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
		m, p := findPartIn(s, ed.MessageID, ed.ID)
		if p == nil {
			return fmt.Errorf("part does not exist")
		}
		if err := checkBefore(&p.Record, ed); err != nil {
			return err
		}
		removePart(m, p.ID)
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
			s.Info = nil
			return nil
		}
	}
	return fmt.Errorf("record does not exist")
}

func dropOrphansOf(s *store.Session, messageID string) {
	keep := s.Orphans[:0:0]
	for _, o := range s.Orphans {
		if o.MessageID != messageID {
			keep = append(keep, o)
		}
	}
	s.Orphans = keep
}

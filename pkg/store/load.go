package store

import (
	"cmp"
	"slices"
)

// What the shapes' readers build sessions with.

// Check classifies the record's Raw like CheckBody and sets Err when the
// body is unusable; a usable body gets its key index, built in the same
// pass, so NewMessage and NewPart (through AddMessage and MakePart) and
// Get do not scan it again.
func (r *Record) Check() {
	r.idx, r.Err = checkBody(r.Raw)
	r.valid = r.Err == nil
}

// AddMessage turns a record a reader just read into a message of the
// session (appended to Messages), or files it under Broken and returns
// nil: a record whose Err is set, or whose body lacks a role.
func (s *Session) AddMessage(rec *Record, sessionID string) *Message {
	if rec.Err != nil {
		s.Broken = append(s.Broken, rec)
		return nil
	}
	m, err := loadedMessage(*rec, sessionID)
	if err != nil {
		rec.Err = err
		s.Broken = append(s.Broken, rec)
		return nil
	}
	s.Messages = append(s.Messages, m)
	return m
}

// MakePart turns a record a reader just read into a part, or files it
// under Broken and returns nil. The reader puts the part under its message,
// or among the Orphans.
func (s *Session) MakePart(rec *Record, messageID, sessionID string) *Part {
	if rec.Err != nil {
		rec.Parent = messageID
		s.Broken = append(s.Broken, rec)
		return nil
	}
	p, err := loadedPart(*rec, messageID, sessionID)
	if err != nil {
		rec.Err, rec.Parent = err, messageID
		s.Broken = append(s.Broken, rec)
		return nil
	}
	return p
}

// AddMessageRecord is AddMessage for a record held by value (a reader that
// builds one record per row): only a record filed under Broken is copied to
// the heap, so a usable one costs no allocation besides its Message.
func (s *Session) AddMessageRecord(rec Record, sessionID string) *Message {
	if rec.Err == nil {
		m, err := loadedMessage(rec, sessionID)
		if err == nil {
			s.Messages = append(s.Messages, m)
			return m
		}
		rec.Err = err
	}
	s.Broken = append(s.Broken, heapRecord(rec))
	return nil
}

// MakePartRecord is MakePart for a record held by value (see
// AddMessageRecord).
func (s *Session) MakePartRecord(rec Record, messageID, sessionID string) *Part {
	if rec.Err == nil {
		p, err := loadedPart(rec, messageID, sessionID)
		if err == nil {
			return p
		}
		rec.Err = err
	}
	rec.Parent = messageID
	s.Broken = append(s.Broken, heapRecord(rec))
	return nil
}

// heapRecord copies rec to the heap (a parameter whose address escapes
// would be moved there on every call, not only on this path).
func heapRecord(rec Record) *Record {
	r := new(Record)
	*r = rec
	return r
}

// loadedMessage is NewMessage for a record a reader just read: the index
// Check built with the validation is kept instead of built again.
func loadedMessage(rec Record, sessionID string) (*Message, error) {
	if rec.idx == nil {
		return NewMessage(rec, sessionID)
	}
	return newMessage(rec, sessionID)
}

// loadedPart is NewPart for a record a reader just read (see loadedMessage).
func loadedPart(rec Record, messageID, sessionID string) (*Part, error) {
	if rec.idx == nil {
		return NewPart(rec, messageID, sessionID)
	}
	return newPart(rec, messageID, sessionID)
}

// SortRefs orders session refs by id (then key, for groups without id),
// the order Store.List promises.
func SortRefs(refs []SessionRef) {
	slices.SortFunc(refs, func(a, b SessionRef) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Key, b.Key))
	})
}

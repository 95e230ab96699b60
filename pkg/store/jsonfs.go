package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Helpers shared by the JSON directory shapes (storage, project, sessions).

// addMessage turns a read record into a message of the session, or files it
// under Broken. It returns nil for broken records.
func (s *Session) addMessage(rec *Record, sessionID string) *Message {
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

// loadedMessage is NewMessage for a record a loader just read: the index
// checkBody built with the validation is kept instead of built again.
func loadedMessage(rec Record, sessionID string) (*Message, error) {
	if rec.idx == nil {
		return NewMessage(rec, sessionID)
	}
	return newMessage(rec, sessionID)
}

// loadedPart is NewPart for a record a loader just read (see loadedMessage).
func loadedPart(rec Record, messageID, sessionID string) (*Part, error) {
	if rec.idx == nil {
		return NewPart(rec, messageID, sessionID)
	}
	return newPart(rec, messageID, sessionID)
}

// newPartFrom turns a read record into a part, or files it under Broken.
func (s *Session) newPartFrom(rec *Record, messageID, sessionID string) *Part {
	if rec.Err != nil {
		s.Broken = append(s.Broken, rec)
		return nil
	}
	p, err := loadedPart(*rec, messageID, sessionID)
	if err != nil {
		rec.Err = err
		s.Broken = append(s.Broken, rec)
		return nil
	}
	return p
}

// readParts reads the part files of one message directory, in id order.
// Parts that cannot be used go to s.Broken.
func (r *fsRoot) readParts(s *Session, dir, messageID, sessionID string) []*Part {
	entries, release, derr := r.readDirHeld(dir)
	defer release()
	if derr != nil {
		s.Broken = append(s.Broken, &Record{Kind: KindPart, Loc: Location{Path: dir}, Err: derr})
		return nil
	}
	var parts []*Part
	for _, e := range jsonFiles(entries) {
		rec := r.readRecord(e, KindPart, recordID(e.Name))
		if p := s.newPartFrom(rec, messageID, sessionID); p != nil {
			parts = append(parts, p)
		}
	}
	return parts
}

// readMessages reads the message files of one session's message directory
// (in file name order, i.e. id order) and each message's parts from
// partDir(messageID). partSession is the session id the layout gives parts
// ("" when the part path does not say).
func (r *fsRoot) readMessages(ctx context.Context, s *Session, dir string, partDir func(string) string, partSession string) error {
	entries, release, derr := r.readDirHeld(dir)
	defer release()
	if derr != nil {
		s.Broken = append(s.Broken, &Record{Kind: KindMessage, Loc: Location{Path: dir}, Err: derr})
		return nil
	}
	for _, e := range jsonFiles(entries) {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := r.readRecord(e, KindMessage, recordID(e.Name))
		if m := s.addMessage(rec, s.ID); m != nil {
			m.Parts = r.readParts(s, partDir(m.ID), m.ID, partSession)
		} else {
			// The parts of an unreadable message are still reported.
			s.Orphans = append(s.Orphans, r.readParts(s, partDir(rec.ID), rec.ID, partSession)...)
		}
	}
	return nil
}

// readOrphanParts reads part directories under parent whose message id is
// not a loaded message of s, as Orphans. sessionID is what the layout says
// about their session ("" when nothing).
func (r *fsRoot) readOrphanParts(s *Session, parent, sessionID string) {
	entries, derr := r.readDir(parent)
	if derr != nil {
		s.Broken = append(s.Broken, &Record{Kind: KindPart, Loc: Location{Path: parent}, Err: derr})
		return
	}
	known := make(map[string]bool, len(s.Messages))
	for _, m := range s.Messages {
		known[m.ID] = true
	}
	for _, b := range s.Broken {
		if b.Kind == KindMessage {
			known[b.ID] = true // its parts were read as orphans already
		}
	}
	for _, e := range subdirs(entries) {
		if known[e.Name] {
			continue
		}
		if e.Err != nil {
			s.Broken = append(s.Broken, &Record{Kind: KindPart, Loc: Location{Path: e.Path}, Err: e.Err})
			continue
		}
		s.Orphans = append(s.Orphans, r.readParts(s, e.Path, e.Name, sessionID)...)
	}
}

// sortByTime orders messages by (time.created, id), the order OpenCode's
// SQLite versions use.
func sortByTime(ms []*Message) {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Created != ms[j].Created {
			return ms[i].Created < ms[j].Created
		}
		return ms[i].ID < ms[j].ID
	})
}

// sortRefs orders session refs by id (then key, for groups without id).
func sortRefs(refs []SessionRef) {
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].ID != refs[j].ID {
			return refs[i].ID < refs[j].ID
		}
		return refs[i].Key < refs[j].Key
	})
}

// readInfo reads a session info file into s (Info and Title), or files it
// under Broken. A missing file leaves s untouched and returns false.
func (r *fsRoot) readInfo(s *Session, path string) bool {
	e, ok := r.entryFor(path)
	if !ok {
		return false
	}
	rec := r.readRecord(e, KindSession, s.ID)
	if rec.Err != nil {
		s.Broken = append(s.Broken, rec)
		return true
	}
	s.Info = rec
	s.Title = rec.Get("title").String()
	return true
}

// checkRefID rejects session ids that cannot be a single path element, so
// a ref never reaches outside the store's directories.
func checkRefID(store, id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) || strings.IndexByte(id, 0) >= 0 {
		return fmt.Errorf("%s: session id %q cannot name a session directory", store, id)
	}
	return nil
}

package jsonfs

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// What the three layouts read alike: message and part directories, orphaned
// part directories, session info files.

// readParts reads the part files of one message directory, in id order.
// Parts that cannot be used go to s.Broken.
func (r *fsRoot) readParts(s *store.Session, dir, messageID, sessionID string) []*store.Part {
	entries, release, derr := r.readDirHeld(dir)
	defer release()
	if derr != nil {
		s.Broken = append(s.Broken, &store.Record{Kind: store.KindPart, Loc: store.Location{Path: dir}, Err: derr})
		return nil
	}
	var parts []*store.Part
	for e := range jsonFiles(entries) {
		rec := r.readRecord(e, store.KindPart, recordID(e.Name))
		if p := s.MakePart(rec, messageID, sessionID); p != nil {
			parts = append(parts, p)
		}
	}
	return parts
}

// readMessages reads the message files of one session's message directory
// (in file name order, i.e. id order) and each message's parts from
// partDir(messageID). partSession is the session id the layout gives parts
// ("" when the part path does not say).
func (r *fsRoot) readMessages(ctx context.Context, s *store.Session, dir string, partDir func(string) string, partSession string) error {
	entries, release, derr := r.readDirHeld(dir)
	defer release()
	if derr != nil {
		s.Broken = append(s.Broken, &store.Record{Kind: store.KindMessage, Loc: store.Location{Path: dir}, Err: derr})
		return nil
	}
	for e := range jsonFiles(entries) {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := r.readRecord(e, store.KindMessage, recordID(e.Name))
		if m := s.AddMessage(rec, s.ID); m != nil {
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
func (r *fsRoot) readOrphanParts(s *store.Session, parent, sessionID string) {
	entries, derr := r.readDir(parent)
	if derr != nil {
		s.Broken = append(s.Broken, &store.Record{Kind: store.KindPart, Loc: store.Location{Path: parent}, Err: derr})
		return
	}
	known := make(map[string]bool, len(s.Messages))
	for _, m := range s.Messages {
		known[m.ID] = true
	}
	for _, b := range s.Broken {
		if b.Kind == store.KindMessage {
			known[b.ID] = true // its parts were read as orphans already
		}
	}
	for e := range subdirs(entries) {
		if known[e.Name] {
			continue
		}
		if e.Err != nil {
			s.Broken = append(s.Broken, &store.Record{Kind: store.KindPart, Loc: store.Location{Path: e.Path}, Err: e.Err})
			continue
		}
		s.Orphans = append(s.Orphans, r.readParts(s, e.Path, e.Name, sessionID)...)
	}
}

// sortByTime orders messages by (time.created, id), the order OpenCode's
// SQLite versions use.
func sortByTime(ms []*store.Message) {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Created != ms[j].Created {
			return ms[i].Created < ms[j].Created
		}
		return ms[i].ID < ms[j].ID
	})
}

// readInfo reads a session info file into s (Info and Title), or files it
// under Broken. A missing file leaves s untouched and returns false.
func (r *fsRoot) readInfo(s *store.Session, path string) bool {
	e, ok := r.entryFor(path)
	if !ok {
		return false
	}
	rec := r.readRecord(e, store.KindSession, s.ID)
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

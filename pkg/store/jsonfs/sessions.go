package jsonfs

import (
	"context"
	"path/filepath"

	"github.com/sessfix/sessfix/pkg/store"
)

// sessionsStore reads the sessions/ layout used by sessfix's fixtures (and
// named in its brief). dir is the sessions directory itself:
//
//	<sessionID>/session.json                  (optional session info)
//	<sessionID>/messages/<messageID>.json
//	<sessionID>/parts/<messageID>/<partID>.json
//
// Messages are ordered by (time.created, id), parts by id. A session without
// session.json has Info nil and InfoMissing false: the layout does not
// require one. Part directories without a message file are Orphans.
type sessionsStore struct {
	info store.Info
	dir  string
	fs   *fsRoot
}

func openSessions(dir string) (*sessionsStore, error) {
	r, err := newFSRoot(dir)
	if err != nil {
		return nil, err
	}
	return &sessionsStore{info: store.Info{Shape: store.ShapeSessions, Path: dir}, dir: dir, fs: r}, nil
}

func (s *sessionsStore) Info() store.Info { return s.fs.withNotes(s.info) }
func (s *sessionsStore) Close() error     { return nil }

// List returns one ref per session directory, with the title from
// session.json when there is one.
func (s *sessionsStore) List(ctx context.Context) ([]store.SessionRef, error) {
	ds, derr := s.fs.readDir(s.dir)
	if derr != nil {
		return nil, derr
	}
	var out []store.SessionRef
	for d := range subdirs(ds) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := store.SessionRef{ID: d.Name}
		if e, ok := s.fs.entryFor(filepath.Join(d.Path, "session.json")); ok {
			rec := s.fs.readRecord(e, store.KindSession, d.Name)
			r.Updated = rec.Modified
			if rec.Err == nil {
				r.Title = rec.Get("title").String()
			}
		}
		out = append(out, r)
	}
	store.SortRefs(out)
	return out, nil
}

// Load reads one session directory.
func (s *sessionsStore) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	if err := checkRefID(s.dir, ref.ID); err != nil {
		return nil, err
	}
	sess := &store.Session{Store: s.info, ID: ref.ID}
	root := filepath.Join(s.dir, ref.ID)
	if e, ok := s.fs.entryFor(root); ok && e.Err != nil {
		sess.Broken = append(sess.Broken, &store.Record{Kind: store.KindSession, ID: ref.ID, Loc: store.Location{Path: root}, Err: e.Err})
		return sess, nil
	}
	s.fs.readInfo(sess, filepath.Join(root, "session.json"))
	partDir := func(mid string) string { return filepath.Join(root, "parts", mid) }
	if err := s.fs.readMessages(ctx, sess, filepath.Join(root, "messages"), partDir, ref.ID); err != nil {
		return nil, err
	}
	sortByTime(sess.Messages)
	s.fs.readOrphanParts(sess, filepath.Join(root, "parts"), ref.ID)
	return sess, nil
}

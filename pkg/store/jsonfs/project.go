package jsonfs

import (
	"context"
	"path/filepath"

	"github.com/sessfix/sessfix/pkg/store"
)

// projectStore reads one project tree of OpenCode 0.5 and earlier. dir is
// the tree's storage directory (<data>/project/<slug>/storage):
//
//	session/info/<sessionID>.json
//	session/message/<sessionID>/<messageID>.json
//	session/part/<sessionID>/<messageID>/<partID>.json
//
// Messages and parts are in id order. Part directories whose message does
// not exist are the session's Orphans (their session is known from the path).
type projectStore struct {
	info store.Info
	dir  string
	fs   *fsRoot
}

func openProject(dir string) (*projectStore, error) {
	r, err := newFSRoot(dir)
	if err != nil {
		return nil, err
	}
	return &projectStore{info: store.Info{Shape: store.ShapeProject, Path: dir}, dir: dir, fs: r}, nil
}

func (s *projectStore) Info() store.Info { return s.fs.withNotes(s.info) }
func (s *projectStore) Close() error     { return nil }

func (s *projectStore) sub(parts ...string) string {
	return filepath.Join(append([]string{s.dir, "session"}, parts...)...)
}

// List returns sessions with an info file, a message directory or a part
// directory.
func (s *projectStore) List(ctx context.Context) ([]store.SessionRef, error) {
	refs := map[string]*store.SessionRef{}
	infos, _ := s.fs.readDir(s.sub("info"))
	for f := range jsonFiles(infos) {
		id := recordID(f.Name)
		r := &store.SessionRef{ID: id, Key: f.Path}
		rec := s.fs.readRecord(f, store.KindSession, id)
		r.Updated = rec.Modified
		if rec.Err == nil {
			r.Title = rec.Get("title").String()
		}
		refs[id] = r
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, dir := range []string{s.sub("message"), s.sub("part")} {
		ds, _ := s.fs.readDir(dir)
		for d := range subdirs(ds) {
			if refs[d.Name] == nil {
				refs[d.Name] = &store.SessionRef{ID: d.Name}
			}
		}
	}
	out := make([]store.SessionRef, 0, len(refs))
	for _, r := range refs {
		out = append(out, *r)
	}
	store.SortRefs(out)
	return out, nil
}

// Load reads one session: info, messages with their parts, orphaned parts.
func (s *projectStore) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	if err := checkRefID(s.dir, ref.ID); err != nil {
		return nil, err
	}
	sess := &store.Session{Store: s.info, ID: ref.ID}
	sess.InfoMissing = !s.fs.readInfo(sess, s.sub("info", ref.ID+".json"))
	partDir := func(mid string) string { return s.sub("part", ref.ID, mid) }
	if err := s.fs.readMessages(ctx, sess, s.sub("message", ref.ID), partDir, ref.ID); err != nil {
		return nil, err
	}
	s.fs.readOrphanParts(sess, s.sub("part", ref.ID), ref.ID)
	return sess, nil
}

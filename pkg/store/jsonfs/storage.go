package jsonfs

import (
	"context"
	"path/filepath"
	"slices"
	"sync"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/tidwall/gjson"
)

// storageStore reads the JSON storage/ tree of OpenCode 1.0–1.1:
//
//	storage/session/<projectID>/<sessionID>.json
//	storage/message/<sessionID>/<messageID>.json
//	storage/part/<messageID>/<partID>.json
//
// Messages are in id order (JSON-era OpenCode sorted message files by id),
// parts in id order. A part directory whose message exists nowhere is
// attached, as Orphans, to the session its first readable part names in
// its body; when that session does not exist either, List reports a
// session-less group for it (ID from the body, possibly "").
type storageStore struct {
	info store.Info
	dir  string
	fs   *fsRoot

	mu  sync.Mutex
	idx *storageIndex
}

type storageIndex struct {
	// files maps a session id to its session files (more than one when
	// the same session appears under two projects).
	files map[string][]string
	// orphans maps a session id (from a part body, possibly "") to the
	// message ids of part directories whose message exists nowhere.
	orphans map[string][]string
	refs    []store.SessionRef
	// projects are the project records (storage/project/<id>.json): what
	// rebuilding a missing session record files it under.
	projects []store.Project
}

func openStorage(dir string) (*storageStore, error) {
	r, err := newFSRoot(dir)
	if err != nil {
		return nil, err
	}
	return &storageStore{info: store.Info{Shape: store.ShapeStorage, Path: dir}, dir: dir, fs: r}, nil
}

func (s *storageStore) Info() store.Info { return s.fs.withNotes(s.info) }
func (s *storageStore) Close() error     { return nil }

// List reads the session files, the message directory names and the part
// directory names; it opens message files never, and part files only for
// part directories whose message exists nowhere.
func (s *storageStore) List(ctx context.Context) ([]store.SessionRef, error) {
	idx, err := s.buildIndex(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.idx = idx
	s.mu.Unlock()
	return append([]store.SessionRef(nil), idx.refs...), nil
}

func (s *storageStore) index(ctx context.Context) (*storageIndex, error) {
	s.mu.Lock()
	idx := s.idx
	s.mu.Unlock()
	if idx != nil {
		return idx, nil
	}
	return s.buildIndex(ctx)
}

func (s *storageStore) buildIndex(ctx context.Context) (*storageIndex, error) {
	idx := &storageIndex{files: map[string][]string{}, orphans: map[string][]string{}}
	refs := map[string]*store.SessionRef{}
	ref := func(id string) *store.SessionRef {
		if r := refs[id]; r != nil {
			return r
		}
		r := &store.SessionRef{ID: id}
		refs[id] = r
		return r
	}

	projects, _ := s.fs.readDir(filepath.Join(s.dir, "session"))
	for p := range subdirs(projects) {
		files, _ := s.fs.readDir(p.Path)
		for f := range jsonFiles(files) {
			id := recordID(f.Name)
			idx.files[id] = append(idx.files[id], f.Path)
			r := ref(id)
			if r.Key == "" {
				r.Key = f.Path
			}
			rec := s.fs.readRecord(f, store.KindSession, id)
			if rec.Modified.After(r.Updated) {
				r.Updated = rec.Modified
			}
			if rec.Err == nil && r.Title == "" {
				r.Title = rec.Get("title").String()
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}

	known := map[string]bool{} // message ids that have a message file
	msgDirs, _ := s.fs.readDir(filepath.Join(s.dir, "message"))
	for d := range subdirs(msgDirs) {
		ref(d.Name)
		files, _ := s.fs.readDir(d.Path)
		for f := range jsonFiles(files) {
			known[recordID(f.Name)] = true
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}

	partDirs, _ := s.fs.readDir(filepath.Join(s.dir, "part"))
	for d := range subdirs(partDirs) {
		if known[d.Name] {
			continue
		}
		sid := s.orphanSession(d)
		idx.orphans[sid] = append(idx.orphans[sid], d.Name)
		ref(sid)
	}

	idx.projects = s.projects()
	for _, r := range refs {
		idx.refs = append(idx.refs, *r)
	}
	store.SortRefs(idx.refs)
	return idx, nil
}

// sessionFiles looks for the record files of session id under every
// project, on disk.
func (s *storageStore) sessionFiles(id string) []string {
	var out []string
	projects, _ := s.fs.readDir(filepath.Join(s.dir, "session"))
	for p := range subdirs(projects) {
		files, _ := s.fs.readDir(p.Path)
		for f := range jsonFiles(files) {
			if recordID(f.Name) == id {
				out = append(out, f.Path)
			}
		}
	}
	return out
}

// projects reads the project records, skipping unreadable ones and those
// whose id or worktree is not a string; never nil.
func (s *storageStore) projects() []store.Project {
	out := []store.Project{}
	files, _ := s.fs.readDir(filepath.Join(s.dir, "project"))
	for f := range jsonFiles(files) {
		raw, _, perr := s.fs.readFile(f.Path)
		if perr != nil || store.CheckBody(raw) != nil {
			continue
		}
		id, wt := gjson.GetBytes(raw, "id"), gjson.GetBytes(raw, "worktree")
		if id.Type == gjson.String && id.Str == recordID(f.Name) && wt.Type == gjson.String {
			out = append(out, store.Project{ID: id.Str, Worktree: wt.Str})
		}
	}
	return out
}

// orphanSession returns the session id named by the first readable part
// body in an orphaned part directory, or "".
func (s *storageStore) orphanSession(d entry) string {
	if d.Err != nil {
		return ""
	}
	files, _ := s.fs.readDir(d.Path)
	for f := range jsonFiles(files) {
		raw, _, perr := s.fs.readFile(f.Path)
		if perr != nil || store.CheckBody(raw) != nil {
			continue
		}
		if v := gjson.GetBytes(raw, "sessionID"); v.Type == gjson.String {
			return v.Str
		}
	}
	return ""
}

// Load reads the session's file, its messages and their parts, and the
// orphaned part directories attached to it.
func (s *storageStore) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	if ref.ID != "" {
		if err := checkRefID(s.dir, ref.ID); err != nil {
			return nil, err
		}
	}
	idx, err := s.index(ctx)
	if err != nil {
		return nil, err
	}
	sess := &store.Session{Store: s.info, ID: ref.ID, Projects: slices.Clone(idx.projects)}
	files := idx.files[ref.ID]
	if len(files) == 0 && ref.ID != "" {
		// Written since the index was built (a rebuilt session record).
		files = s.sessionFiles(ref.ID)
	}
	if len(files) == 0 && ref.Key != "" {
		files = []string{ref.Key}
	}
	found, first := false, ""
	for _, f := range files {
		// The first file still there is the record; the listing may
		// name files a fix removed since.
		if !found {
			found, first = s.fs.readInfo(sess, f), f
			continue
		}
		if _, ok := s.fs.entryFor(f); !ok {
			continue
		}
		sess.Broken = append(sess.Broken, &store.Record{Kind: store.KindSession, ID: ref.ID, Loc: store.Location{Path: f},
			Err: &store.ParseError{Reason: "duplicate session record", Detail: "the session is also stored in " + first}})
	}
	sess.InfoMissing = !found
	if ref.ID != "" {
		partDir := func(mid string) string { return filepath.Join(s.dir, "part", mid) }
		if err := s.fs.readMessages(ctx, sess, filepath.Join(s.dir, "message", ref.ID), partDir, ref.ID); err != nil {
			return nil, err
		}
	}
	for _, mid := range idx.orphans[ref.ID] {
		parts := s.fs.readParts(sess, filepath.Join(s.dir, "part", mid), mid, "")
		sess.Orphans = append(sess.Orphans, parts...)
	}
	return sess, nil
}

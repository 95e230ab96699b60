package jsonfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/pkg/store"
)

// jsonWriter writes the one-file-per-record shapes: storage, project and
// sessions. Each file is replaced atomically (atomicfile.Write). A change set
// touches several files, so it is not atomic as a whole: Apply checks every
// edit first, then applies them in order, and if one fails it puts back
// every file it already changed from the images it read before starting.
type jsonWriter struct {
	info store.Info
	root string
	ops  atomicfile.Ops
	seen store.Listing
}

func newJSONWriter(info store.Info, ops atomicfile.Ops) (*jsonWriter, error) {
	root, err := filepath.Abs(info.Path)
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", info.Path, err)
	}
	fi, err := ops.Lstat(root)
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", info.Path, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := filepath.EvalSymlinks(root)
		return nil, fmt.Errorf("cannot write %s: it is a symbolic link, and sessfix does not write through links; run it on the directory the link points to (%s)", info.Path, target)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("cannot write %s: not a directory (a %s store is a directory)", info.Path, info.Shape)
	}
	return &jsonWriter{info: info, root: root, ops: ops}, nil
}

func (w *jsonWriter) Close() error { return nil }

// messagePath is where a message file of the shape lives.
func (w *jsonWriter) messagePath(sessionID, id string) string {
	switch w.info.Shape {
	case store.ShapeStorage:
		return filepath.Join(w.root, "message", sessionID, id+".json")
	case store.ShapeProject:
		return filepath.Join(w.root, "session", "message", sessionID, id+".json")
	default:
		return filepath.Join(w.root, sessionID, "messages", id+".json")
	}
}

// partsDir is the directory holding a message's part files.
func (w *jsonWriter) partsDir(sessionID, messageID string) string {
	switch w.info.Shape {
	case store.ShapeStorage:
		return filepath.Join(w.root, "part", messageID)
	case store.ShapeProject:
		return filepath.Join(w.root, "session", "part", sessionID, messageID)
	default:
		return filepath.Join(w.root, sessionID, "parts", messageID)
	}
}

// sessionPath is where the shape keeps the file of session e adds:
// storage/session/<projectID>/<id>.json (the project from the body's
// projectID), the project tree's session/info/<id>.json, or the sessions
// layout's <id>/session.json.
func (w *jsonWriter) sessionPath(e *store.Edit) (string, error) {
	switch w.info.Shape {
	case store.ShapeStorage:
		project := gjson.GetBytes(e.After, "projectID")
		if project.Type != gjson.String || !safeName(project.Str) {
			return "", fmt.Errorf("cannot add session %s: the storage tree files a session under its project, and the body's projectID (%s) is not a project id; nothing was written", e.ID, project.Raw)
		}
		return filepath.Join(w.root, "session", project.Str, e.ID+".json"), nil
	case store.ShapeProject:
		return filepath.Join(w.root, "session", "info", e.ID+".json"), nil
	default:
		return filepath.Join(w.root, e.ID, "session.json"), nil
	}
}

// safeName reports whether s can name one directory of a store: not
// empty, no separator, not . or .., no leading dot.
func safeName(s string) bool {
	return s != "" && !strings.ContainsAny(s, `/\`+"\x00") && s[0] != '.'
}

// partsDirOf is the parts directory of the message stored at msgPath.
func (w *jsonWriter) partsDirOf(msgPath, messageID string) string {
	switch w.info.Shape {
	case store.ShapeStorage:
		return filepath.Join(w.root, "part", messageID)
	case store.ShapeProject:
		return filepath.Join(w.root, "session", "part", filepath.Base(filepath.Dir(msgPath)), messageID)
	default:
		return filepath.Join(filepath.Dir(filepath.Dir(msgPath)), "parts", messageID)
	}
}

// recordPath is the file of an edit's record: its location when known,
// otherwise where the shape keeps it.
func (w *jsonWriter) recordPath(cs *store.ChangeSet, e *store.Edit) (string, error) {
	p := e.Loc.Path
	if p == "" {
		ses := e.SessionID
		if ses == "" {
			ses = cs.SessionID
		}
		switch e.Kind {
		case store.KindMessage:
			p = w.messagePath(ses, e.ID)
		case store.KindPart:
			if e.MessageID == "" {
				return "", fmt.Errorf("part %s: no message id to place it under", e.ID)
			}
			p = filepath.Join(w.partsDir(ses, e.MessageID), e.ID+".json")
		default:
			if e.Op != store.OpAdd {
				return "", fmt.Errorf("session %s: no file location in the change set", e.ID)
			}
			sp, err := w.sessionPath(e)
			if err != nil {
				return "", err
			}
			p = sp
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(w.root, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("refusing to write %s: it is outside the store %s", p, w.info.Path)
	}
	if err := w.realDirs(filepath.Dir(abs)); err != nil {
		return "", err
	}
	return abs, nil
}

// realDirs checks that dir, a directory inside the store, and every
// directory between it and the store's root are real directories, not
// symbolic links: creating, moving or removing a record through a linked
// directory would change files outside the store. Directories that do not
// exist yet are fine (the writer creates them).
func (w *jsonWriter) realDirs(dir string) error {
	rel, err := filepath.Rel(w.root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("refusing to write in %s: it is outside the store %s", dir, w.info.Path)
	}
	if rel == "." {
		return nil
	}
	cur := w.root
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, name)
		fi, err := w.ops.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot write in %s: %w", dir, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("refusing to write in %s: %s is a symbolic link, and sessfix does not write through links in a store; nothing was written (replace the link with the directory itself to repair this session)", dir, cur)
		}
	}
	return nil
}

// fileStep is one primitive file operation of a plan.
type fileStep struct {
	path   string
	data   []byte // what to write, unless remove
	remove bool
	edit   int // index of the edit it belongs to
}

// jsonPlan is a change set turned into file steps, checked against the
// files as they are now.
type jsonPlan struct {
	steps   []fileStep
	targets []store.Target
	// addLoc is the file each store.OpAdd/store.OpRekey edit creates.
	addLoc map[int]string
	// emptied are parts directories a message re-key or delete empties.
	emptied []string
}

// overlay is the store as the plan would leave it: a path maps to its new
// bytes, or to nil when the plan removes it.
type overlay struct {
	w     *jsonWriter
	state map[string]*[]byte
}

func (o *overlay) get(path string) ([]byte, bool, error) {
	if v, ok := o.state[path]; ok {
		if v == nil {
			return nil, false, nil
		}
		return *v, true, nil
	}
	data, _, exists, err := atomicfile.ReadRegular(o.w.ops, path)
	return data, exists, err
}

func (o *overlay) set(path string, data []byte) { o.state[path] = &data }
func (o *overlay) del(path string)              { o.state[path] = nil }

// list returns the .json files of dir as the plan would leave it, sorted.
func (o *overlay) list(dir string) ([]string, error) {
	seen := map[string]bool{}
	ents, err := o.w.ops.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			seen[filepath.Join(dir, e.Name())] = true
		}
	}
	for p, v := range o.state {
		if filepath.Dir(p) == dir {
			seen[p] = v != nil
		}
	}
	var out []string
	for p, ok := range seen {
		if ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// planner turns one change set into a jsonPlan, edit by edit, against the
// overlay of what the edits before it leave.
type planner struct {
	w    *jsonWriter
	p    *jsonPlan
	ov   *overlay
	seen map[string]bool
	// moved maps the part files a message re-key moved to their new paths,
	// so later edits of those parts (which name the old location) follow.
	moved map[string]string
}

func (w *jsonWriter) plan(cs *store.ChangeSet) (*jsonPlan, error) {
	if err := cs.Check(); err != nil {
		return nil, err
	}
	pl := &planner{
		w:     w,
		p:     &jsonPlan{addLoc: map[int]string{}},
		ov:    &overlay{w: w, state: map[string]*[]byte{}},
		seen:  map[string]bool{},
		moved: map[string]string{},
	}
	if cs == nil {
		return pl.p, nil
	}
	for i := range cs.Edits {
		if err := pl.edit(cs, i); err != nil {
			return nil, err
		}
	}
	for i := range cs.Edits {
		if err := pl.sessionDelete(&cs.Edits[i]); err != nil {
			return nil, err
		}
	}
	return pl.p, nil
}

func (pl *planner) target(path string, kind store.Kind, id string) {
	if !pl.seen[path] {
		pl.seen[path] = true
		pl.p.targets = append(pl.p.targets, store.Target{Kind: kind, ID: id, Path: path})
	}
}

func (pl *planner) write(i int, path string, kind store.Kind, id string, data []byte) {
	pl.target(path, kind, id)
	pl.ov.set(path, data)
	pl.p.steps = append(pl.p.steps, fileStep{path: path, data: data, edit: i})
}

func (pl *planner) remove(i int, path string, kind store.Kind, id string) {
	pl.target(path, kind, id)
	pl.ov.del(path)
	pl.p.steps = append(pl.p.steps, fileStep{path: path, remove: true, edit: i})
}

// edit plans edit i of cs.
func (pl *planner) edit(cs *store.ChangeSet, i int) error {
	e := &cs.Edits[i]
	path, err := pl.w.recordPath(cs, e)
	if err != nil {
		return err
	}
	if np, ok := pl.moved[path]; ok {
		path = np
	}
	cur, exists, err := pl.ov.get(path)
	if err != nil {
		return err
	}
	if e.Op == store.OpAdd {
		if exists {
			return fmt.Errorf("cannot add %s %s: %s already exists; nothing was written", e.Kind, e.ID, path)
		}
		if e.Kind == store.KindSession {
			if err := pl.w.checkNewSession(pl.ov, e, path); err != nil {
				return err
			}
		}
		pl.write(i, path, e.Kind, e.ID, e.After)
		pl.p.addLoc[i] = path
		return nil
	}
	if !exists {
		return store.Changed(path, e.Kind, e.ID, "was removed")
	}
	if !bytes.Equal(cur, e.Before) && !(e.Op == store.OpQuarantine && e.Before == nil) {
		return store.Changed(path, e.Kind, e.ID, "was modified")
	}
	switch e.Op {
	case store.OpUpdate:
		pl.write(i, path, e.Kind, e.ID, e.After)
	case store.OpDelete, store.OpQuarantine:
		pl.remove(i, path, e.Kind, e.ID)
		if e.Kind == store.KindMessage {
			// As SQLite's ON DELETE CASCADE does: a message's parts go with it.
			return pl.removeParts(i, pl.w.partsDirOf(path, e.ID))
		}
	case store.OpRekey:
		return pl.rekey(i, e, path, cur)
	}
	return nil
}

// removeParts removes every part file of dir, the parts directory of a
// message edit i removes.
func (pl *planner) removeParts(i int, dir string) error {
	if err := pl.w.realDirs(dir); err != nil {
		return err
	}
	files, err := pl.ov.list(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		pl.remove(i, f, store.KindPart, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	pl.p.emptied = append(pl.p.emptied, dir)
	return nil
}

// rekey plans edit i, which gives the record at path (holding cur) a new id.
func (pl *planner) rekey(i int, e *store.Edit, path string, cur []byte) error {
	if e.Kind == store.KindSession {
		return fmt.Errorf("session %s: sessfix does not re-key sessions", e.ID)
	}
	newPath := filepath.Join(filepath.Dir(path), e.NewID+filepath.Ext(path))
	if _, ok, err := pl.ov.get(newPath); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("cannot re-key %s %s: %s already exists; nothing was written", e.Kind, e.ID, newPath)
	}
	body, err := e.RekeyedBody(cur)
	if err != nil {
		return fmt.Errorf("re-key %s %s: %w", e.Kind, e.ID, err)
	}
	pl.write(i, newPath, e.Kind, e.NewID, body)
	pl.remove(i, path, e.Kind, e.ID)
	pl.p.addLoc[i] = newPath
	if e.Kind == store.KindMessage {
		return pl.moveParts(i, e, pl.w.partsDirOf(path, e.ID), pl.w.partsDirOf(path, e.NewID))
	}
	return nil
}

// moveParts moves the part files of a re-keyed message from oldDir to
// newDir, unchanged: the planner's part updates that follow rewrite the
// messageID in their bodies.
func (pl *planner) moveParts(i int, e *store.Edit, oldDir, newDir string) error {
	for _, d := range []string{oldDir, newDir} {
		if err := pl.w.realDirs(d); err != nil {
			return err
		}
	}
	files, err := pl.ov.list(oldDir)
	if err != nil {
		return err
	}
	for _, f := range files {
		np := filepath.Join(newDir, filepath.Base(f))
		if _, ok, err := pl.ov.get(np); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("cannot re-key message %s: %s already exists; nothing was written", e.ID, np)
		}
		b, _, err := pl.ov.get(f)
		if err != nil {
			return err
		}
		pid := strings.TrimSuffix(filepath.Base(f), ".json")
		pl.write(i, np, store.KindPart, pid, b)
		pl.remove(i, f, store.KindPart, pid)
		pl.moved[f] = np
	}
	pl.p.emptied = append(pl.p.emptied, oldDir)
	return nil
}

// sessionDelete checks a session file's removal once every edit is planned:
// a session file goes only with every message of the session, as the
// SQLite writer requires (a session record deleted alone would leave its
// messages orphaned), and takes the directories that would still list it.
func (pl *planner) sessionDelete(e *store.Edit) error {
	if e.Kind != store.KindSession || e.Op != store.OpDelete {
		return nil
	}
	w := pl.w
	dir := filepath.Dir(w.messagePath(e.ID, "x"))
	if err := w.realDirs(dir); err != nil {
		return err
	}
	left, err := pl.ov.list(dir)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("cannot %s session %s: its message %s stays (sessfix removes a session record only with every message of it); nothing was written",
			e.Op, e.ID, strings.TrimSuffix(filepath.Base(left[0]), ".json"))
	}
	pl.p.emptied = append(pl.p.emptied, dir)
	switch w.info.Shape {
	case store.ShapeSessions:
		pl.p.emptied = append(pl.p.emptied, filepath.Join(w.root, e.ID, "parts"), filepath.Join(w.root, e.ID))
	case store.ShapeProject:
		pl.p.emptied = append(pl.p.emptied, filepath.Join(w.root, "session", "part", e.ID))
	}
	return nil
}

func (w *jsonWriter) Targets(_ context.Context, cs *store.ChangeSet) ([]store.Target, error) {
	p, err := w.plan(cs)
	if err != nil {
		return nil, err
	}
	w.seen.Remember(cs, p.targets)
	return p.targets, nil
}

func (w *jsonWriter) Read(ctx context.Context, targets []store.Target) ([]store.Image, error) {
	out, err := w.read(ctx, targets)
	if err == nil {
		w.seen.Saw(out)
	}
	return out, err
}

func (w *jsonWriter) read(ctx context.Context, targets []store.Target) ([]store.Image, error) {
	out := make([]store.Image, 0, len(targets))
	for _, t := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, mode, exists, err := atomicfile.ReadRegular(w.ops, t.Path)
		if err != nil {
			return nil, err
		}
		im := store.Image{Target: t, Exists: exists, Mode: mode, Data: data}
		if !exists {
			_, err := w.ops.Lstat(filepath.Dir(t.Path))
			im.KeepDir = err == nil
			if !im.KeepDir {
				im.MadeDir = w.madeDir(filepath.Dir(t.Path))
			}
		}
		out = append(out, im)
	}
	return out, nil
}

// Planned is every target as the plan of cs leaves it: the bytes its last
// step writes, or absent when it removes it; a target no step touches
// keeps its image.
func (w *jsonWriter) Planned(_ context.Context, cs *store.ChangeSet, before []store.Image) ([]store.Image, error) {
	p, err := w.plan(cs)
	if err != nil {
		return nil, err
	}
	last := map[string]fileStep{}
	for _, st := range p.steps {
		last[st.path] = st
	}
	out := make([]store.Image, len(before))
	for i, im := range before {
		out[i] = store.Image{Target: im.Target, Exists: im.Exists, Mode: im.Mode, Data: im.Data, KeepDir: im.KeepDir, MadeDir: im.MadeDir}
		st, ok := last[im.Path]
		switch {
		case !ok:
		case st.remove:
			out[i].Exists, out[i].Data = false, nil
		default:
			out[i].Exists, out[i].Data = true, st.data
			if !im.Exists {
				out[i].Mode, _ = w.newFileAttrs(filepath.Dir(im.Path))
			}
		}
	}
	return out, nil
}

func (w *jsonWriter) Apply(ctx context.Context, cs *store.ChangeSet) error {
	p, err := w.plan(cs)
	if err != nil {
		return err
	}
	if len(p.steps) == 0 {
		return nil
	}
	if t, ok := w.seen.Uncovered(cs, p.targets); ok {
		return store.NotBackedUp(t)
	}
	before, err := w.read(ctx, p.targets)
	if err != nil {
		return err
	}
	// Parts a message delete or re-key takes along have no Before bytes of
	// their own: they must still be what the backup holds.
	if err := w.seen.Changed(cs, before); err != nil {
		return err
	}
	for _, st := range p.steps {
		if err := ctx.Err(); err != nil {
			return w.rollback(before, fmt.Errorf("interrupted: %w", err))
		}
		if st.remove {
			err = atomicfile.Remove(w.ops, st.path)
		} else {
			err = w.writeFile(st.path, st.data)
		}
		if err != nil {
			e := cs.Edits[st.edit]
			return w.rollback(before, fmt.Errorf("%s %s %s: %w", e.Op, e.Kind, e.ID, err))
		}
	}
	for _, dir := range p.emptied {
		w.removeEmptyDir(dir)
	}
	for i, path := range p.addLoc {
		cs.Edits[i].Loc = store.Location{Path: path, Line: 1}
	}
	return nil
}

// rollback puts every target back as it was before Apply started.
func (w *jsonWriter) rollback(before []store.Image, cause error) error {
	if rerr := w.restore(before); rerr != nil {
		return store.WriteFailed(fmt.Errorf("%w; putting the files back also failed: %v (restore them from the backup with `sessfix undo`)", cause, rerr), false)
	}
	return store.WriteFailed(fmt.Errorf("%w; every file was put back as it was", cause), true)
}

// writeFile writes a record file, creating its directory like its siblings
// and giving a new file the mode (and owner) of the files next to it.
func (w *jsonWriter) writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := atomicfile.MkdirLike(w.ops, dir); err != nil {
		return err
	}
	atomicfile.CleanTemps(w.ops, dir)
	perm, own := w.newFileAttrs(dir)
	return atomicfile.Write(w.ops, path, data, perm, own)
}

// newFileAttrs is the mode and owner for a new file in dir: those of a
// sibling record file, else 0644 and the directory's owner.
func (w *jsonWriter) newFileAttrs(dir string) (fs.FileMode, *atomicfile.Owner) {
	ents, _ := w.ops.ReadDir(dir)
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
			if fi, err := w.ops.Lstat(filepath.Join(dir, e.Name())); err == nil {
				return fi.Mode().Perm(), atomicfile.OwnerOf(fi)
			}
		}
	}
	if fi, err := w.ops.Lstat(dir); err == nil {
		return 0o644, atomicfile.OwnerOf(fi)
	}
	return 0o644, nil
}

// removeEmptyDir removes a directory inside the store if it is empty, and
// reports whether it did.
func (w *jsonWriter) removeEmptyDir(dir string) bool {
	if dir == w.root || !strings.HasPrefix(dir, w.root+string(filepath.Separator)) {
		return false
	}
	if ents, err := w.ops.ReadDir(dir); err == nil && len(ents) == 0 {
		if w.ops.Remove(dir) == nil {
			_ = w.ops.SyncDir(filepath.Dir(dir))
			return true
		}
	}
	return false
}

// madeDir is the outermost directory from dir up that does not exist
// (dir, which does not exist, when its parent does).
func (w *jsonWriter) madeDir(dir string) string {
	made := dir
	for d := filepath.Dir(dir); d != w.root && strings.HasPrefix(d, w.root+string(filepath.Separator)); d = filepath.Dir(d) {
		if _, err := w.ops.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		made = d
	}
	return made
}

// removeMadeDirs removes the empty directories from dir up to made (dir
// alone when made is not one of its ancestors): those a file's creation
// made.
func (w *jsonWriter) removeMadeDirs(dir, made string) {
	rel, err := filepath.Rel(made, dir)
	within := made != "" && err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	for d := dir; ; d = filepath.Dir(d) {
		if !w.removeEmptyDir(d) || !within || d == made {
			return
		}
	}
}

func (w *jsonWriter) Restore(ctx context.Context, images []store.Image) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, im := range images {
		if _, err := w.recordPath(&store.ChangeSet{}, &store.Edit{Kind: im.Kind, ID: im.ID, Loc: store.Location{Path: im.Path}}); err != nil {
			return err
		}
	}
	if err := store.CheckExpected(ctx, w.read, images); err != nil {
		return err
	}
	return store.WriteFailed(w.restore(images), false)
}

// restore makes each file its image, skipping files that already are.
// It tries every image and reports the first failure.
func (w *jsonWriter) restore(images []store.Image) error {
	var first error
	for i := len(images) - 1; i >= 0; i-- {
		im := images[i]
		cur, mode, exists, err := atomicfile.ReadRegular(w.ops, im.Path)
		if err == nil {
			switch {
			case im.Exists && exists && bytes.Equal(cur, im.Data) && mode == im.Mode:
			case im.Exists:
				dir := filepath.Dir(im.Path)
				if err = atomicfile.MkdirLike(w.ops, dir); err == nil {
					perm, own := w.newFileAttrs(dir)
					if im.Mode != 0 {
						perm = im.Mode
					}
					err = atomicfile.WriteMode(w.ops, im.Path, im.Data, perm, own)
				}
			case exists:
				if err = atomicfile.Remove(w.ops, im.Path); err == nil && !im.KeepDir {
					w.removeMadeDirs(filepath.Dir(im.Path), im.MadeDir)
				}
			case !im.KeepDir:
				// Absent as it was, in a directory that was not there:
				// those a killed run created are removed if they are empty.
				w.removeMadeDirs(filepath.Dir(im.Path), im.MadeDir)
			}
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// checkNewSession refuses to add session e at path when its body names
// another id, or when the store already holds a session with its id (the
// storage tree under another project).
func (w *jsonWriter) checkNewSession(ov *overlay, e *store.Edit, path string) error {
	if id := gjson.GetBytes(e.After, "id"); id.Type != gjson.String || id.Str != e.ID {
		return fmt.Errorf("cannot add session %s: the body's id is %s, not the session's; nothing was written", e.ID, id.Raw)
	}
	if w.info.Shape != store.ShapeStorage {
		return nil
	}
	projects, err := w.ops.ReadDir(filepath.Join(w.root, "session"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot add session %s: %w", e.ID, err)
	}
	for _, p := range projects {
		other := filepath.Join(w.root, "session", p.Name(), e.ID+".json")
		if other == path {
			continue
		}
		if _, ok, err := ov.get(other); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("cannot add session %s: %s already holds it; nothing was written", e.ID, other)
		}
	}
	return nil
}

var _ store.Writer = (*jsonWriter)(nil)

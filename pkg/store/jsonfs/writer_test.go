package jsonfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/internal/atomicfile/atomicfiletest"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/writertest"
)

// jsonFixture is a hand-built JSON store of one session with messages A
// (part 1) and B (parts 2 and 3).
type jsonFixture struct {
	info  store.Info
	root  string
	paths map[string]string // record id → file
	body  map[string]string // record id → body
}

// messageFile and partFile spell out each shape's layout independently of
// the writer.
func messageFile(shape store.Shape, root, ses, id string) string {
	switch shape {
	case store.ShapeStorage:
		return filepath.Join(root, "message", ses, id+".json")
	case store.ShapeProject:
		return filepath.Join(root, "session", "message", ses, id+".json")
	}
	return filepath.Join(root, ses, "messages", id+".json")
}

func partFile(shape store.Shape, root, ses, msg, id string) string {
	switch shape {
	case store.ShapeStorage:
		return filepath.Join(root, "part", msg, id+".json")
	case store.ShapeProject:
		return filepath.Join(root, "session", "part", ses, msg, id+".json")
	}
	return filepath.Join(root, ses, "parts", msg, id+".json")
}

func newJSONFixture(t *testing.T, shape store.Shape) *jsonFixture {
	t.Helper()
	root := filepath.Join(t.TempDir(), "store")
	f := &jsonFixture{info: store.Info{Shape: shape, Path: root}, root: root, paths: map[string]string{}, body: map[string]string{}}
	add := func(id, path, body string) {
		f.paths[id], f.body[id] = path, body
		atomicfiletest.WriteFile(t, path, body, 0o640)
	}
	add(writertest.MsgA, messageFile(shape, root, writertest.Ses, writertest.MsgA), "{\n  \"id\": \""+writertest.MsgA+"\",\n  \"sessionID\": \""+writertest.Ses+"\",\n  \"role\": \"user\"\n}")
	add(writertest.MsgB, messageFile(shape, root, writertest.Ses, writertest.MsgB), "{\n  \"id\": \""+writertest.MsgB+"\",\n  \"sessionID\": \""+writertest.Ses+"\",\n  \"role\": \"assistant\",\n  \"unknown\": [1, 2]\n}")
	add(writertest.Prt1, partFile(shape, root, writertest.Ses, writertest.MsgA, writertest.Prt1), "{\n  \"id\": \""+writertest.Prt1+"\",\n  \"messageID\": \""+writertest.MsgA+"\",\n  \"type\": \"text\",\n  \"text\": \"hi\"\n}")
	add(writertest.Prt2, partFile(shape, root, writertest.Ses, writertest.MsgB, writertest.Prt2), "{\n  \"id\": \""+writertest.Prt2+"\",\n  \"messageID\": \""+writertest.MsgB+"\",\n  \"type\": \"reasoning\",\n  \"text\": \"\"\n}")
	add(writertest.Prt3, partFile(shape, root, writertest.Ses, writertest.MsgB, writertest.Prt3), "{\n  \"id\": \""+writertest.Prt3+"\",\n  \"messageID\": \""+writertest.MsgB+"\",\n  \"type\": \"text\",\n  \"text\": \"\"\n}")
	return f
}

func (f *jsonFixture) edit(op store.Op, kind store.Kind, id, msg string) store.Edit {
	e := store.Edit{Op: op, Kind: kind, ID: id, SessionID: writertest.Ses, MessageID: msg}
	if op != store.OpAdd {
		e.Loc = store.Location{Path: f.paths[id], Line: 1}
		e.Before = []byte(f.body[id])
	}
	return e
}

func (f *jsonFixture) writer(t *testing.T, ops atomicfile.Ops) *jsonWriter {
	t.Helper()
	w, err := newJSONWriter(f.info, ops)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var jsonShapes = []store.Shape{store.ShapeSessions, store.ShapeStorage, store.ShapeProject}

func TestJSONWriterAppliesEveryOp(t *testing.T) {
	ctx := context.Background()
	for _, shape := range jsonShapes {
		t.Run(string(shape), func(t *testing.T) {
			f := newJSONFixture(t, shape)
			before := atomicfiletest.TreeState(t, f.root)
			w := f.writer(t, atomicfile.OS{})

			up := f.edit(store.OpUpdate, store.KindPart, writertest.Prt3, writertest.MsgB)
			up.After = []byte(strings.Replace(f.body[writertest.Prt3], `"text": ""`, `"text": "[user interrupted]"`, 1))
			add := f.edit(store.OpAdd, store.KindPart, writertest.PrtNew, writertest.MsgB)
			add.After = []byte("{\n  \"id\": \"" + writertest.PrtNew + "\",\n  \"type\": \"text\",\n  \"text\": \"added\"\n}")
			del := f.edit(store.OpDelete, store.KindPart, writertest.Prt2, writertest.MsgB)
			rkm := f.edit(store.OpRekey, store.KindMessage, writertest.MsgA, "")
			rkm.NewID = writertest.MsgNew
			rkm.After = []byte(strings.Replace(f.body[writertest.MsgA], writertest.MsgA, writertest.MsgNew, 1))
			// As the planner does: the moved part's body follows in an update
			// that still names its old location.
			fol := f.edit(store.OpUpdate, store.KindPart, writertest.Prt1, writertest.MsgNew)
			fol.After = []byte(strings.Replace(f.body[writertest.Prt1], writertest.MsgA, writertest.MsgNew, 1))
			cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{up, add, del, rkm, fol}}

			_, images := writertest.ApplyBackedUp(t, w, cs)

			if got := atomicfiletest.ReadFile(t, f.paths[writertest.Prt3]); got != string(up.After) {
				t.Errorf("updated part = %q", got)
			}
			if fi, _ := os.Stat(f.paths[writertest.Prt3]); fi.Mode().Perm() != 0o640 {
				t.Errorf("updated part mode = %v, want 0640 kept", fi.Mode().Perm())
			}
			newPart := partFile(shape, f.root, writertest.Ses, writertest.MsgB, writertest.PrtNew)
			if got := atomicfiletest.ReadFile(t, newPart); got != string(add.After) {
				t.Errorf("added part at %s = %q", newPart, got)
			}
			if fi, _ := os.Stat(newPart); fi.Mode().Perm() != 0o640 {
				t.Errorf("added part mode = %v, want its siblings' 0640", fi.Mode().Perm())
			}
			if cs.Edits[1].Loc.Path != newPart {
				t.Errorf("added part location = %q, want %q", cs.Edits[1].Loc.Path, newPart)
			}
			if _, err := os.Lstat(f.paths[writertest.Prt2]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("deleted part still there: %v", err)
			}
			if _, err := os.Lstat(f.paths[writertest.MsgA]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("re-keyed message still at its old path: %v", err)
			}
			if got := atomicfiletest.ReadFile(t, messageFile(shape, f.root, writertest.Ses, writertest.MsgNew)); got != string(rkm.After) {
				t.Errorf("re-keyed message = %q", got)
			}
			moved := partFile(shape, f.root, writertest.Ses, writertest.MsgNew, writertest.Prt1)
			if got := atomicfiletest.ReadFile(t, moved); got != string(fol.After) {
				t.Errorf("moved part at %s = %q, want its follow-up update", moved, got)
			}
			if _, err := os.Lstat(filepath.Dir(f.paths[writertest.Prt1])); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the old parts directory of the re-keyed message is still there: %v", err)
			}
			if left := atomicfiletest.TempLeft(t, f.root); len(left) > 0 {
				t.Fatalf("temp files left: %v", left)
			}

			// Restoring the images taken before puts back every byte.
			if err := w.Restore(ctx, images); err != nil {
				t.Fatal(err)
			}
			atomicfiletest.AssertSameTree(t, "after restore", before, atomicfiletest.TreeState(t, f.root))
		})
	}
}

func TestJSONWriterMessageDeleteTakesItsParts(t *testing.T) {
	ctx := context.Background()
	f := newJSONFixture(t, store.ShapeSessions)
	before := atomicfiletest.TreeState(t, f.root)
	w := f.writer(t, atomicfile.OS{})
	cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{f.edit(store.OpQuarantine, store.KindMessage, writertest.MsgB, "")}}
	targets, images := writertest.ApplyBackedUp(t, w, cs)
	var ids []string
	for _, tg := range targets {
		ids = append(ids, tg.ID)
	}
	if strings.Join(ids, ",") != writertest.MsgB+","+writertest.Prt2+","+writertest.Prt3 {
		t.Fatalf("targets = %v, want the message and both its parts", ids)
	}
	for _, id := range []string{writertest.MsgB, writertest.Prt2, writertest.Prt3} {
		if _, err := os.Lstat(f.paths[id]); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there after its message was quarantined", id)
		}
	}
	if err := w.Restore(ctx, images); err != nil {
		t.Fatal(err)
	}
	atomicfiletest.AssertSameTree(t, "after restore", before, atomicfiletest.TreeState(t, f.root))
}

func TestJSONRestoreChecksExpectFirst(t *testing.T) {
	ctx := context.Background()
	f := newJSONFixture(t, store.ShapeStorage)
	original := atomicfiletest.TreeState(t, f.root)
	w := f.writer(t, atomicfile.OS{})
	cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{f.edit(store.OpQuarantine, store.KindMessage, writertest.MsgB, "")}}
	targets, images := writertest.ApplyBackedUp(t, w, cs)
	writertest.ExpectNow(t, w, targets, images) // the state an undo checked: the files are gone
	// OpenCode writes one of those files again after the check.
	atomicfiletest.WriteFile(t, f.paths[writertest.Prt3], `{"type":"text","text":"late"}`, 0o644)
	changed := atomicfiletest.TreeState(t, f.root)
	err := w.Restore(ctx, images)
	if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), f.paths[writertest.Prt3]) || !strings.Contains(err.Error(), "was created") {
		t.Fatalf("err = %v, want store.ErrChanged naming the file created after the check", err)
	}
	atomicfiletest.AssertSameTree(t, "after a refused restore", changed, atomicfiletest.TreeState(t, f.root))

	if err := os.Remove(f.paths[writertest.Prt3]); err != nil {
		t.Fatal(err)
	}
	if err := w.Restore(ctx, images); err != nil {
		t.Fatal(err)
	}
	atomicfiletest.AssertSameTree(t, "after restore", original, atomicfiletest.TreeState(t, f.root))
}

// TestJSONRestoreLeavesADirectoryThatExisted: undoing an added part
// removes the directory the add created, but not one that was there, empty,
// before.
func TestJSONRestoreLeavesADirectoryThatExisted(t *testing.T) {
	for _, existed := range []bool{true, false} {
		f := newJSONFixture(t, store.ShapeStorage)
		dir := filepath.Dir(partFile(store.ShapeStorage, f.root, writertest.Ses, writertest.MsgNew, writertest.PrtNew))
		if existed {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		before := atomicfiletest.TreeState(t, f.root)
		w := f.writer(t, atomicfile.OS{})
		add := f.edit(store.OpAdd, store.KindPart, writertest.PrtNew, writertest.MsgNew)
		add.After = []byte(`{"id":"` + writertest.PrtNew + `","type":"text","text":"x"}`)
		_, images := writertest.ApplyBackedUp(t, w, &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{add}})
		if err := w.Restore(context.Background(), images); err != nil {
			t.Fatal(err)
		}
		atomicfiletest.AssertSameTree(t, fmt.Sprintf("after restore (directory existed: %v)", existed), before, atomicfiletest.TreeState(t, f.root))
	}
}

func TestJSONWriterCreatesMissingDirectories(t *testing.T) {
	f := newJSONFixture(t, store.ShapeSessions)
	if err := os.Chmod(filepath.Join(f.root, writertest.Ses, "parts"), 0o750); err != nil {
		t.Fatal(err)
	}
	w := f.writer(t, atomicfile.OS{})
	// Message B's first part in a directory that does not exist yet: a
	// new message C with no parts.
	msgC := "msg_0000000000030000000000000c"
	add := store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: writertest.PrtNew, SessionID: writertest.Ses, MessageID: msgC, After: []byte(`{"type":"text","text":"x"}`)}
	if err := w.Apply(context.Background(), &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{add}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.root, writertest.Ses, "parts", msgC)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("new directory mode = %v, want its parent's 0750", fi.Mode().Perm())
	}
	if got := atomicfiletest.ReadFile(t, filepath.Join(dir, writertest.PrtNew+".json")); got != `{"type":"text","text":"x"}` {
		t.Errorf("new part = %q", got)
	}
}

func TestJSONWriterRefusesChangedRecord(t *testing.T) {
	f := newJSONFixture(t, store.ShapeStorage)
	w := f.writer(t, atomicfile.OS{})
	up := f.edit(store.OpUpdate, store.KindPart, writertest.Prt3, writertest.MsgB)
	up.After = []byte(`{"changed":true}`)
	stale := f.edit(store.OpUpdate, store.KindPart, writertest.Prt2, writertest.MsgB)
	stale.Before = []byte(`{"what the scan saw":true}`)
	stale.After = []byte(`{}`)
	before := atomicfiletest.TreeState(t, f.root)
	err := w.Apply(context.Background(), &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{up, stale}})
	if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), writertest.Prt2) || !strings.Contains(err.Error(), f.paths[writertest.Prt2]) {
		t.Fatalf("err = %v, want store.ErrChanged naming part %s and its file", err, writertest.Prt2)
	}
	if ce := (*store.ChangedError)(nil); !errors.As(err, &ce) || ce.Restoring {
		t.Errorf("err = %#v, want a ChangedError refusing the change set", err)
	}
	atomicfiletest.AssertSameTree(t, "refused change set", before, atomicfiletest.TreeState(t, f.root))

	gone := f.edit(store.OpDelete, store.KindPart, writertest.Prt1, writertest.MsgA)
	os.Remove(f.paths[writertest.Prt1])
	before = atomicfiletest.TreeState(t, f.root)
	err = w.Apply(context.Background(), &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{up, gone}})
	if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), "removed") {
		t.Fatalf("err = %v, want store.ErrChanged saying the part was removed", err)
	}
	atomicfiletest.AssertSameTree(t, "refused change set", before, atomicfiletest.TreeState(t, f.root))
}

func TestJSONWriterRefusesUnsafePaths(t *testing.T) {
	f := newJSONFixture(t, store.ShapeSessions)
	w := f.writer(t, atomicfile.OS{})
	outside := filepath.Join(t.TempDir(), "victim.json")
	atomicfiletest.WriteFile(t, outside, `{"precious":true}`, 0o644)

	// A part file replaced by a symlink to a file outside the store.
	os.Remove(f.paths[writertest.Prt1])
	if err := os.Symlink(outside, f.paths[writertest.Prt1]); err != nil {
		t.Fatal(err)
	}
	up := f.edit(store.OpUpdate, store.KindPart, writertest.Prt1, writertest.MsgA)
	up.Before = []byte(`{"precious":true}`)
	up.After = []byte(`{}`)
	err := w.Apply(context.Background(), &store.ChangeSet{Store: f.info, Edits: []store.Edit{up}})
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("err = %v, want a symlink refusal", err)
	}
	// A location outside the store.
	esc := store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: writertest.Prt2, Loc: store.Location{Path: outside}, Before: []byte(`{"precious":true}`), After: []byte(`{}`)}
	err = w.Apply(context.Background(), &store.ChangeSet{Store: f.info, Edits: []store.Edit{esc}})
	if err == nil || !strings.Contains(err.Error(), "outside the store") {
		t.Fatalf("err = %v, want an outside-the-store refusal", err)
	}
	if got := atomicfiletest.ReadFile(t, outside); got != `{"precious":true}` {
		t.Fatalf("file outside the store was written: %q", got)
	}
}

func TestJSONWriterRejectsMalformedEdits(t *testing.T) {
	f := newJSONFixture(t, store.ShapeSessions)
	w := f.writer(t, atomicfile.OS{})
	before := atomicfiletest.TreeState(t, f.root)
	bad := []store.Edit{
		{Op: store.OpUpdate, Kind: store.KindPart, ID: writertest.Prt1, Loc: store.Location{Path: f.paths[writertest.Prt1]}, Before: []byte(f.body[writertest.Prt1]), After: []byte(`{"truncated":`)},
		{Op: store.OpAdd, Kind: store.KindPart, ID: "prt_0000000000_thinking", MessageID: writertest.MsgA, After: []byte(`{}`)},
		{Op: store.OpRekey, Kind: store.KindPart, ID: writertest.Prt1, NewID: "bogus", Loc: store.Location{Path: f.paths[writertest.Prt1]}, Before: []byte(f.body[writertest.Prt1])},
		{Op: "move", Kind: store.KindPart, ID: writertest.Prt1},
		{Op: store.OpAdd, Kind: store.KindPart, ID: writertest.Prt2, MessageID: writertest.MsgB, After: []byte(`{}`)}, // exists already
	}
	for _, e := range bad {
		if err := w.Apply(context.Background(), &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{e}}); err == nil {
			t.Errorf("%s %s %s: applied, want a refusal", e.Op, e.Kind, e.ID)
		}
	}
	atomicfiletest.AssertSameTree(t, "malformed edits", before, atomicfiletest.TreeState(t, f.root))
}

// TestJSONWriterFaults injects a failure into the second file of a change
// set: the first file must be put back, and no temp file may remain.
func TestJSONWriterFaults(t *testing.T) {
	cases := []struct {
		name string
		ops  *atomicfiletest.FaultOps
		want string
		// cause is the system error the command's hint is chosen by.
		cause error
	}{
		{"disk full on the second write", &atomicfiletest.FaultOps{WriteErr: syscall.ENOSPC, FailWriteAt: 2}, "no space left", syscall.ENOSPC},
		{"fsync fails on the second file", &atomicfiletest.FaultOps{SyncErr: syscall.EIO, FailSyncAt: 2}, "fsync", nil},
		{"crash before the second rename", &atomicfiletest.FaultOps{RenameErr: errors.New("killed"), FailRenameAt: 2}, "rename into place", nil},
		{"read-only store", &atomicfiletest.FaultOps{CreateErr: syscall.EROFS}, "read-only file system", syscall.EROFS},
		{"read-only file on delete", &atomicfiletest.FaultOps{RemoveErr: syscall.EACCES, FailRemoveAt: 1}, "permission denied", fs.ErrPermission},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newJSONFixture(t, store.ShapeSessions)
			u1 := f.edit(store.OpUpdate, store.KindPart, writertest.Prt2, writertest.MsgB)
			u1.After = []byte(`{"first":true}`)
			u2 := f.edit(store.OpUpdate, store.KindPart, writertest.Prt3, writertest.MsgB)
			u2.After = []byte(`{"second":true}`)
			add := f.edit(store.OpAdd, store.KindPart, writertest.PrtNew, writertest.MsgB)
			add.After = []byte(`{"third":true}`)
			del := f.edit(store.OpDelete, store.KindPart, writertest.Prt1, writertest.MsgA)
			cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{u1, u2, add, del}}
			before := atomicfiletest.TreeState(t, f.root)
			err := f.writer(t, c.ops).Apply(context.Background(), cs)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			t.Log(err)
			var we *store.WriteError
			if !errors.As(err, &we) || !we.Unchanged || (c.cause != nil && !errors.Is(err, c.cause)) {
				t.Errorf("err = %#v, want a WriteError that left the store unchanged, caused by %v", err, c.cause)
			}
			if !strings.Contains(err.Error(), "every file was put back") {
				t.Errorf("err = %v, want it to say the files were put back", err)
			}
			atomicfiletest.AssertSameTree(t, c.name, before, atomicfiletest.TreeState(t, f.root))
			if left := atomicfiletest.TempLeft(t, f.root); len(left) > 0 {
				t.Fatalf("temp files left: %v", left)
			}
		})
	}
}

func TestJSONWriterReportsFailedRollback(t *testing.T) {
	f := newJSONFixture(t, store.ShapeSessions)
	add := f.edit(store.OpAdd, store.KindPart, writertest.PrtNew, writertest.MsgB)
	add.After = []byte(`{}`)
	del := f.edit(store.OpDelete, store.KindPart, writertest.Prt1, writertest.MsgA)
	// Nothing can be removed: the delete fails, and so does taking the
	// added file back out.
	err := f.writer(t, &atomicfiletest.FaultOps{RemoveErr: syscall.EACCES}).Apply(context.Background(),
		&store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{add, del}})
	if err == nil || !strings.Contains(err.Error(), "putting the files back also failed") || !strings.Contains(err.Error(), "sessfix undo") {
		t.Fatalf("err = %v, want it to say the rollback failed and point at undo", err)
	}
	if we := (*store.WriteError)(nil); !errors.As(err, &we) || we.Unchanged {
		t.Fatalf("err = %#v claims nothing changed", err)
	}
}

func TestJSONWriterCleansLeftoverTemps(t *testing.T) {
	f := newJSONFixture(t, store.ShapeSessions)
	// A sessfix killed between writing its temp file and the rename.
	crashed := filepath.Join(filepath.Dir(f.paths[writertest.Prt3]), ".sessfix-4242.tmp")
	atomicfiletest.WriteFile(t, crashed, `{"half`, 0o600)
	up := f.edit(store.OpUpdate, store.KindPart, writertest.Prt3, writertest.MsgB)
	up.After = []byte(`{}`)
	if err := f.writer(t, atomicfile.OS{}).Apply(context.Background(), &store.ChangeSet{Store: f.info, Edits: []store.Edit{up}}); err != nil {
		t.Fatal(err)
	}
	if left := atomicfiletest.TempLeft(t, f.root); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestJSONWriterRefusesWhatTheBackupMissed(t *testing.T) {
	ctx := context.Background()
	f := newJSONFixture(t, store.ShapeStorage)
	w := f.writer(t, atomicfile.OS{})
	cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{f.edit(store.OpDelete, store.KindMessage, writertest.MsgB, "")}}
	if _, err := w.Targets(ctx, cs); err != nil {
		t.Fatal(err)
	}
	// OpenCode adds a part to the message between the backup and the write.
	late := partFile(store.ShapeStorage, f.root, writertest.Ses, writertest.MsgB, writertest.PrtNew)
	atomicfiletest.WriteFile(t, late, `{"type":"text","text":"late"}`, 0o644)
	before := atomicfiletest.TreeState(t, f.root)
	err := w.Apply(ctx, cs)
	if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), writertest.PrtNew) || !strings.Contains(err.Error(), "after the backup") {
		t.Fatalf("err = %v, want store.ErrChanged naming the part the backup missed", err)
	}
	atomicfiletest.AssertSameTree(t, "refused change set", before, atomicfiletest.TreeState(t, f.root))
}

func TestJSONWriterRefusesAPartChangedAfterTheBackup(t *testing.T) {
	ctx := context.Background()
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeSessions} {
		t.Run(string(shape), func(t *testing.T) {
			f := newJSONFixture(t, shape)
			w := f.writer(t, atomicfile.OS{})
			cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{f.edit(store.OpDelete, store.KindMessage, writertest.MsgB, "")}}
			writertest.BackedUp(t, w, cs)
			// OpenCode rewrites a part the delete takes along, after the backup.
			atomicfiletest.WriteFile(t, f.paths[writertest.Prt3], `{"type":"text","text":"late edit"}`, 0o644)
			before := atomicfiletest.TreeState(t, f.root)
			err := w.Apply(ctx, cs)
			if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), writertest.Prt3) || !strings.Contains(err.Error(), "was modified") {
				t.Fatalf("err = %v, want store.ErrChanged naming the part modified after the backup", err)
			}
			atomicfiletest.AssertSameTree(t, "refused change set", before, atomicfiletest.TreeState(t, f.root))
		})
	}
}

func TestJSONWriterNewFilesBelongToTheStoreOwner(t *testing.T) {
	f := newJSONFixture(t, store.ShapeSessions)
	uid, gid := os.Getuid(), os.Getgid()
	if os.Geteuid() == 0 {
		// sessfix run with sudo must not leave root-owned files in a user's store.
		uid, gid = 4321, 4322
		filepath.Walk(f.root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, gid) })
	}
	msgC := "msg_0000000000030000000000000c"
	add := store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: writertest.PrtNew, SessionID: writertest.Ses, MessageID: msgC, After: []byte(`{}`)}
	if err := f.writer(t, atomicfile.OS{}).Apply(context.Background(), &store.ChangeSet{Store: f.info, Edits: []store.Edit{add}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.root, writertest.Ses, "parts", msgC)
	for _, p := range []string{dir, filepath.Join(dir, writertest.PrtNew+".json")} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if o := atomicfile.OwnerOf(fi); o != nil && (o.UID != uid || o.GID != gid) {
			t.Errorf("%s is owned by %d:%d, want the store owner %d:%d", p, o.UID, o.GID, uid, gid)
		}
	}
}

// TestJSONWriterRefusesLinkedDirectories: a directory of the store that is
// a symbolic link (to somewhere outside) is never written through, for an
// added record, an updated one or the parts a deleted message takes along;
// nothing changes on either side of the link.
func TestJSONWriterRefusesLinkedDirectories(t *testing.T) {
	link := func(t *testing.T, dir string) (outside string) {
		t.Helper()
		outside = filepath.Join(t.TempDir(), "outside")
		if err := os.Rename(dir, outside); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, dir); err != nil {
			t.Fatal(err)
		}
		return outside
	}
	ctx := context.Background()
	t.Run("parts dir of a deleted message", func(t *testing.T) {
		f := newJSONFixture(t, store.ShapeSessions)
		outside := link(t, filepath.Dir(f.paths[writertest.Prt2]))
		victims, before := atomicfiletest.TreeState(t, outside), atomicfiletest.TreeState(t, f.root)
		w := f.writer(t, atomicfile.OS{})
		err := w.Apply(ctx, &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{f.edit(store.OpDelete, store.KindMessage, writertest.MsgB, "")}})
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("err = %v, want a refusal naming the link", err)
		}
		atomicfiletest.AssertSameTree(t, "outside the store", victims, atomicfiletest.TreeState(t, outside))
		atomicfiletest.AssertSameTree(t, "the store", before, atomicfiletest.TreeState(t, f.root))
	})
	t.Run("part dir of the layout", func(t *testing.T) {
		f := newJSONFixture(t, store.ShapeStorage)
		outside := link(t, filepath.Join(f.root, "part"))
		victims := atomicfiletest.TreeState(t, outside)
		w := f.writer(t, atomicfile.OS{})
		add := store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: writertest.PrtNew, SessionID: writertest.Ses, MessageID: writertest.MsgB, After: []byte(`{"type":"text","text":"x"}`)}
		up := f.edit(store.OpUpdate, store.KindPart, writertest.Prt1, writertest.MsgA)
		up.After = []byte(`{}`)
		for _, e := range []store.Edit{add, up} {
			err := w.Apply(ctx, &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{e}})
			if err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("%s %s: err = %v, want a refusal naming the link", e.Op, e.ID, err)
			}
		}
		atomicfiletest.AssertSameTree(t, "outside the store", victims, atomicfiletest.TreeState(t, outside))
	})
	t.Run("store root", func(t *testing.T) {
		f := newJSONFixture(t, store.ShapeSessions)
		alias := filepath.Join(t.TempDir(), "alias")
		if err := os.Symlink(f.root, alias); err != nil {
			t.Fatal(err)
		}
		_, err := newJSONWriter(store.Info{Shape: store.ShapeSessions, Path: alias}, atomicfile.OS{})
		if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), f.root) {
			t.Fatalf("err = %v, want a refusal naming the directory the link points to", err)
		}
	})
}

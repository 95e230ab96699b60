package store

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
)

const (
	tSes    = "ses_7ffffffffff0aaaaaaaaaaaaaa"
	tMsgA   = "msg_0000000000010000000000000a"
	tMsgB   = "msg_0000000000020000000000000b"
	tMsgNew = "msg_00000000000100000000000009"
	tPrt1   = "prt_0000000000010000000000000a"
	tPrt2   = "prt_0000000000020000000000000a"
	tPrt3   = "prt_0000000000020000000000000b"
	tPrtNew = "prt_0000000000020000000000000c"
	tPrtRk  = "prt_00000000000200000000000001"
)

// jsonFixture is a hand-built JSON store of one session with messages A
// (part 1) and B (parts 2 and 3).
type jsonFixture struct {
	info  Info
	root  string
	paths map[string]string // record id → file
	body  map[string]string // record id → body
}

// messageFile and partFile spell out each shape's layout independently of
// the writer.
func messageFile(shape Shape, root, ses, id string) string {
	switch shape {
	case ShapeStorage:
		return filepath.Join(root, "message", ses, id+".json")
	case ShapeProject:
		return filepath.Join(root, "session", "message", ses, id+".json")
	}
	return filepath.Join(root, ses, "messages", id+".json")
}

func partFile(shape Shape, root, ses, msg, id string) string {
	switch shape {
	case ShapeStorage:
		return filepath.Join(root, "part", msg, id+".json")
	case ShapeProject:
		return filepath.Join(root, "session", "part", ses, msg, id+".json")
	}
	return filepath.Join(root, ses, "parts", msg, id+".json")
}

func newJSONFixture(t *testing.T, shape Shape) *jsonFixture {
	t.Helper()
	root := filepath.Join(t.TempDir(), "store")
	f := &jsonFixture{info: Info{Shape: shape, Path: root}, root: root, paths: map[string]string{}, body: map[string]string{}}
	add := func(id, path, body string) {
		f.paths[id], f.body[id] = path, body
		atomicfiletest.WriteFile(t, path, body, 0o640)
	}
	add(tMsgA, messageFile(shape, root, tSes, tMsgA), "{\n  \"id\": \""+tMsgA+"\",\n  \"sessionID\": \""+tSes+"\",\n  \"role\": \"user\"\n}")
	add(tMsgB, messageFile(shape, root, tSes, tMsgB), "{\n  \"id\": \""+tMsgB+"\",\n  \"sessionID\": \""+tSes+"\",\n  \"role\": \"assistant\",\n  \"unknown\": [1, 2]\n}")
	add(tPrt1, partFile(shape, root, tSes, tMsgA, tPrt1), "{\n  \"id\": \""+tPrt1+"\",\n  \"messageID\": \""+tMsgA+"\",\n  \"type\": \"text\",\n  \"text\": \"hi\"\n}")
	add(tPrt2, partFile(shape, root, tSes, tMsgB, tPrt2), "{\n  \"id\": \""+tPrt2+"\",\n  \"messageID\": \""+tMsgB+"\",\n  \"type\": \"reasoning\",\n  \"text\": \"\"\n}")
	add(tPrt3, partFile(shape, root, tSes, tMsgB, tPrt3), "{\n  \"id\": \""+tPrt3+"\",\n  \"messageID\": \""+tMsgB+"\",\n  \"type\": \"text\",\n  \"text\": \"\"\n}")
	return f
}

func (f *jsonFixture) edit(op Op, kind Kind, id, msg string) Edit {
	e := Edit{Op: op, Kind: kind, ID: id, SessionID: tSes, MessageID: msg}
	if op != OpAdd {
		e.Loc = Location{Path: f.paths[id], Line: 1}
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

var jsonShapes = []Shape{ShapeSessions, ShapeStorage, ShapeProject}

func TestJSONWriterAppliesEveryOp(t *testing.T) {
	ctx := context.Background()
	for _, shape := range jsonShapes {
		t.Run(string(shape), func(t *testing.T) {
			f := newJSONFixture(t, shape)
			before := atomicfiletest.TreeState(t, f.root)
			w := f.writer(t, atomicfile.OS{})

			up := f.edit(OpUpdate, KindPart, tPrt3, tMsgB)
			up.After = []byte(strings.Replace(f.body[tPrt3], `"text": ""`, `"text": "[user interrupted]"`, 1))
			add := f.edit(OpAdd, KindPart, tPrtNew, tMsgB)
			add.After = []byte("{\n  \"id\": \"" + tPrtNew + "\",\n  \"type\": \"text\",\n  \"text\": \"added\"\n}")
			del := f.edit(OpDelete, KindPart, tPrt2, tMsgB)
			rkm := f.edit(OpRekey, KindMessage, tMsgA, "")
			rkm.NewID = tMsgNew
			rkm.After = []byte(strings.Replace(f.body[tMsgA], tMsgA, tMsgNew, 1))
			// As the planner does: the moved part's body follows in an update
			// that still names its old location.
			fol := f.edit(OpUpdate, KindPart, tPrt1, tMsgNew)
			fol.After = []byte(strings.Replace(f.body[tPrt1], tMsgA, tMsgNew, 1))
			cs := &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{up, add, del, rkm, fol}}

			_, images := applyBackedUp(t, w, cs)

			if got := atomicfiletest.ReadFile(t, f.paths[tPrt3]); got != string(up.After) {
				t.Errorf("updated part = %q", got)
			}
			if fi, _ := os.Stat(f.paths[tPrt3]); fi.Mode().Perm() != 0o640 {
				t.Errorf("updated part mode = %v, want 0640 kept", fi.Mode().Perm())
			}
			newPart := partFile(shape, f.root, tSes, tMsgB, tPrtNew)
			if got := atomicfiletest.ReadFile(t, newPart); got != string(add.After) {
				t.Errorf("added part at %s = %q", newPart, got)
			}
			if fi, _ := os.Stat(newPart); fi.Mode().Perm() != 0o640 {
				t.Errorf("added part mode = %v, want its siblings' 0640", fi.Mode().Perm())
			}
			if cs.Edits[1].Loc.Path != newPart {
				t.Errorf("added part location = %q, want %q", cs.Edits[1].Loc.Path, newPart)
			}
			if _, err := os.Lstat(f.paths[tPrt2]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("deleted part still there: %v", err)
			}
			if _, err := os.Lstat(f.paths[tMsgA]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("re-keyed message still at its old path: %v", err)
			}
			if got := atomicfiletest.ReadFile(t, messageFile(shape, f.root, tSes, tMsgNew)); got != string(rkm.After) {
				t.Errorf("re-keyed message = %q", got)
			}
			moved := partFile(shape, f.root, tSes, tMsgNew, tPrt1)
			if got := atomicfiletest.ReadFile(t, moved); got != string(fol.After) {
				t.Errorf("moved part at %s = %q, want its follow-up update", moved, got)
			}
			if _, err := os.Lstat(filepath.Dir(f.paths[tPrt1])); !errors.Is(err, os.ErrNotExist) {
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
	f := newJSONFixture(t, ShapeSessions)
	before := atomicfiletest.TreeState(t, f.root)
	w := f.writer(t, atomicfile.OS{})
	cs := &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{f.edit(OpQuarantine, KindMessage, tMsgB, "")}}
	targets, images := applyBackedUp(t, w, cs)
	var ids []string
	for _, tg := range targets {
		ids = append(ids, tg.ID)
	}
	if strings.Join(ids, ",") != tMsgB+","+tPrt2+","+tPrt3 {
		t.Fatalf("targets = %v, want the message and both its parts", ids)
	}
	for _, id := range []string{tMsgB, tPrt2, tPrt3} {
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
	f := newJSONFixture(t, ShapeStorage)
	original := atomicfiletest.TreeState(t, f.root)
	w := f.writer(t, atomicfile.OS{})
	cs := &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{f.edit(OpQuarantine, KindMessage, tMsgB, "")}}
	targets, images := applyBackedUp(t, w, cs)
	expectNow(t, w, targets, images) // the state an undo checked: the files are gone
	// OpenCode writes one of those files again after the check.
	atomicfiletest.WriteFile(t, f.paths[tPrt3], `{"type":"text","text":"late"}`, 0o644)
	changed := atomicfiletest.TreeState(t, f.root)
	err := w.Restore(ctx, images)
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), f.paths[tPrt3]) || !strings.Contains(err.Error(), "was created") {
		t.Fatalf("err = %v, want ErrChanged naming the file created after the check", err)
	}
	atomicfiletest.AssertSameTree(t, "after a refused restore", changed, atomicfiletest.TreeState(t, f.root))

	if err := os.Remove(f.paths[tPrt3]); err != nil {
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
		f := newJSONFixture(t, ShapeStorage)
		dir := filepath.Dir(partFile(ShapeStorage, f.root, tSes, tMsgNew, tPrtNew))
		if existed {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		before := atomicfiletest.TreeState(t, f.root)
		w := f.writer(t, atomicfile.OS{})
		add := f.edit(OpAdd, KindPart, tPrtNew, tMsgNew)
		add.After = []byte(`{"id":"` + tPrtNew + `","type":"text","text":"x"}`)
		_, images := applyBackedUp(t, w, &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{add}})
		if err := w.Restore(context.Background(), images); err != nil {
			t.Fatal(err)
		}
		atomicfiletest.AssertSameTree(t, fmt.Sprintf("after restore (directory existed: %v)", existed), before, atomicfiletest.TreeState(t, f.root))
	}
}

func TestJSONWriterCreatesMissingDirectories(t *testing.T) {
	f := newJSONFixture(t, ShapeSessions)
	if err := os.Chmod(filepath.Join(f.root, tSes, "parts"), 0o750); err != nil {
		t.Fatal(err)
	}
	w := f.writer(t, atomicfile.OS{})
	// Message B's first part in a directory that does not exist yet: a
	// new message C with no parts.
	msgC := "msg_0000000000030000000000000c"
	add := Edit{Op: OpAdd, Kind: KindPart, ID: tPrtNew, SessionID: tSes, MessageID: msgC, After: []byte(`{"type":"text","text":"x"}`)}
	if err := w.Apply(context.Background(), &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{add}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.root, tSes, "parts", msgC)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("new directory mode = %v, want its parent's 0750", fi.Mode().Perm())
	}
	if got := atomicfiletest.ReadFile(t, filepath.Join(dir, tPrtNew+".json")); got != `{"type":"text","text":"x"}` {
		t.Errorf("new part = %q", got)
	}
}

func TestJSONWriterRefusesChangedRecord(t *testing.T) {
	f := newJSONFixture(t, ShapeStorage)
	w := f.writer(t, atomicfile.OS{})
	up := f.edit(OpUpdate, KindPart, tPrt3, tMsgB)
	up.After = []byte(`{"changed":true}`)
	stale := f.edit(OpUpdate, KindPart, tPrt2, tMsgB)
	stale.Before = []byte(`{"what the scan saw":true}`)
	stale.After = []byte(`{}`)
	before := atomicfiletest.TreeState(t, f.root)
	err := w.Apply(context.Background(), &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{up, stale}})
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), tPrt2) || !strings.Contains(err.Error(), f.paths[tPrt2]) {
		t.Fatalf("err = %v, want ErrChanged naming part %s and its file", err, tPrt2)
	}
	if ce := (*ChangedError)(nil); !errors.As(err, &ce) || ce.Restoring {
		t.Errorf("err = %#v, want a ChangedError refusing the change set", err)
	}
	atomicfiletest.AssertSameTree(t, "refused change set", before, atomicfiletest.TreeState(t, f.root))

	gone := f.edit(OpDelete, KindPart, tPrt1, tMsgA)
	os.Remove(f.paths[tPrt1])
	before = atomicfiletest.TreeState(t, f.root)
	err = w.Apply(context.Background(), &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{up, gone}})
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "removed") {
		t.Fatalf("err = %v, want ErrChanged saying the part was removed", err)
	}
	atomicfiletest.AssertSameTree(t, "refused change set", before, atomicfiletest.TreeState(t, f.root))
}

func TestJSONWriterRefusesUnsafePaths(t *testing.T) {
	f := newJSONFixture(t, ShapeSessions)
	w := f.writer(t, atomicfile.OS{})
	outside := filepath.Join(t.TempDir(), "victim.json")
	atomicfiletest.WriteFile(t, outside, `{"precious":true}`, 0o644)

	// A part file replaced by a symlink to a file outside the store.
	os.Remove(f.paths[tPrt1])
	if err := os.Symlink(outside, f.paths[tPrt1]); err != nil {
		t.Fatal(err)
	}
	up := f.edit(OpUpdate, KindPart, tPrt1, tMsgA)
	up.Before = []byte(`{"precious":true}`)
	up.After = []byte(`{}`)
	err := w.Apply(context.Background(), &ChangeSet{Store: f.info, Edits: []Edit{up}})
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("err = %v, want a symlink refusal", err)
	}
	// A location outside the store.
	esc := Edit{Op: OpUpdate, Kind: KindPart, ID: tPrt2, Loc: Location{Path: outside}, Before: []byte(`{"precious":true}`), After: []byte(`{}`)}
	err = w.Apply(context.Background(), &ChangeSet{Store: f.info, Edits: []Edit{esc}})
	if err == nil || !strings.Contains(err.Error(), "outside the store") {
		t.Fatalf("err = %v, want an outside-the-store refusal", err)
	}
	if got := atomicfiletest.ReadFile(t, outside); got != `{"precious":true}` {
		t.Fatalf("file outside the store was written: %q", got)
	}
}

func TestJSONWriterRejectsMalformedEdits(t *testing.T) {
	f := newJSONFixture(t, ShapeSessions)
	w := f.writer(t, atomicfile.OS{})
	before := atomicfiletest.TreeState(t, f.root)
	bad := []Edit{
		{Op: OpUpdate, Kind: KindPart, ID: tPrt1, Loc: Location{Path: f.paths[tPrt1]}, Before: []byte(f.body[tPrt1]), After: []byte(`{"truncated":`)},
		{Op: OpAdd, Kind: KindPart, ID: "prt_0000000000_thinking", MessageID: tMsgA, After: []byte(`{}`)},
		{Op: OpRekey, Kind: KindPart, ID: tPrt1, NewID: "bogus", Loc: Location{Path: f.paths[tPrt1]}, Before: []byte(f.body[tPrt1])},
		{Op: "move", Kind: KindPart, ID: tPrt1},
		{Op: OpAdd, Kind: KindPart, ID: tPrt2, MessageID: tMsgB, After: []byte(`{}`)}, // exists already
	}
	for _, e := range bad {
		if err := w.Apply(context.Background(), &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{e}}); err == nil {
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
			f := newJSONFixture(t, ShapeSessions)
			u1 := f.edit(OpUpdate, KindPart, tPrt2, tMsgB)
			u1.After = []byte(`{"first":true}`)
			u2 := f.edit(OpUpdate, KindPart, tPrt3, tMsgB)
			u2.After = []byte(`{"second":true}`)
			add := f.edit(OpAdd, KindPart, tPrtNew, tMsgB)
			add.After = []byte(`{"third":true}`)
			del := f.edit(OpDelete, KindPart, tPrt1, tMsgA)
			cs := &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{u1, u2, add, del}}
			before := atomicfiletest.TreeState(t, f.root)
			err := f.writer(t, c.ops).Apply(context.Background(), cs)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			t.Log(err)
			var we *WriteError
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
	f := newJSONFixture(t, ShapeSessions)
	add := f.edit(OpAdd, KindPart, tPrtNew, tMsgB)
	add.After = []byte(`{}`)
	del := f.edit(OpDelete, KindPart, tPrt1, tMsgA)
	// Nothing can be removed: the delete fails, and so does taking the
	// added file back out.
	err := f.writer(t, &atomicfiletest.FaultOps{RemoveErr: syscall.EACCES}).Apply(context.Background(),
		&ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{add, del}})
	if err == nil || !strings.Contains(err.Error(), "putting the files back also failed") || !strings.Contains(err.Error(), "sessfix undo") {
		t.Fatalf("err = %v, want it to say the rollback failed and point at undo", err)
	}
	if we := (*WriteError)(nil); !errors.As(err, &we) || we.Unchanged {
		t.Fatalf("err = %#v claims nothing changed", err)
	}
}

func TestJSONWriterCleansLeftoverTemps(t *testing.T) {
	f := newJSONFixture(t, ShapeSessions)
	// A sessfix killed between writing its temp file and the rename.
	crashed := filepath.Join(filepath.Dir(f.paths[tPrt3]), ".sessfix-4242.tmp")
	atomicfiletest.WriteFile(t, crashed, `{"half`, 0o600)
	up := f.edit(OpUpdate, KindPart, tPrt3, tMsgB)
	up.After = []byte(`{}`)
	if err := f.writer(t, atomicfile.OS{}).Apply(context.Background(), &ChangeSet{Store: f.info, Edits: []Edit{up}}); err != nil {
		t.Fatal(err)
	}
	if left := atomicfiletest.TempLeft(t, f.root); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestJSONWriterRefusesWhatTheBackupMissed(t *testing.T) {
	ctx := context.Background()
	f := newJSONFixture(t, ShapeStorage)
	w := f.writer(t, atomicfile.OS{})
	cs := &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{f.edit(OpDelete, KindMessage, tMsgB, "")}}
	if _, err := w.Targets(ctx, cs); err != nil {
		t.Fatal(err)
	}
	// OpenCode adds a part to the message between the backup and the write.
	late := partFile(ShapeStorage, f.root, tSes, tMsgB, tPrtNew)
	atomicfiletest.WriteFile(t, late, `{"type":"text","text":"late"}`, 0o644)
	before := atomicfiletest.TreeState(t, f.root)
	err := w.Apply(ctx, cs)
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), tPrtNew) || !strings.Contains(err.Error(), "after the backup") {
		t.Fatalf("err = %v, want ErrChanged naming the part the backup missed", err)
	}
	atomicfiletest.AssertSameTree(t, "refused change set", before, atomicfiletest.TreeState(t, f.root))
}

func TestJSONWriterRefusesAPartChangedAfterTheBackup(t *testing.T) {
	ctx := context.Background()
	for _, shape := range []Shape{ShapeStorage, ShapeSessions} {
		t.Run(string(shape), func(t *testing.T) {
			f := newJSONFixture(t, shape)
			w := f.writer(t, atomicfile.OS{})
			cs := &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{f.edit(OpDelete, KindMessage, tMsgB, "")}}
			backedUp(t, w, cs)
			// OpenCode rewrites a part the delete takes along, after the backup.
			atomicfiletest.WriteFile(t, f.paths[tPrt3], `{"type":"text","text":"late edit"}`, 0o644)
			before := atomicfiletest.TreeState(t, f.root)
			err := w.Apply(ctx, cs)
			if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), tPrt3) || !strings.Contains(err.Error(), "was modified") {
				t.Fatalf("err = %v, want ErrChanged naming the part modified after the backup", err)
			}
			atomicfiletest.AssertSameTree(t, "refused change set", before, atomicfiletest.TreeState(t, f.root))
		})
	}
}

func TestJSONWriterNewFilesBelongToTheStoreOwner(t *testing.T) {
	f := newJSONFixture(t, ShapeSessions)
	uid, gid := os.Getuid(), os.Getgid()
	if os.Geteuid() == 0 {
		// sessfix run with sudo must not leave root-owned files in a user's store.
		uid, gid = 4321, 4322
		filepath.Walk(f.root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, gid) })
	}
	msgC := "msg_0000000000030000000000000c"
	add := Edit{Op: OpAdd, Kind: KindPart, ID: tPrtNew, SessionID: tSes, MessageID: msgC, After: []byte(`{}`)}
	if err := f.writer(t, atomicfile.OS{}).Apply(context.Background(), &ChangeSet{Store: f.info, Edits: []Edit{add}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.root, tSes, "parts", msgC)
	for _, p := range []string{dir, filepath.Join(dir, tPrtNew+".json")} {
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
		f := newJSONFixture(t, ShapeSessions)
		outside := link(t, filepath.Dir(f.paths[tPrt2]))
		victims, before := atomicfiletest.TreeState(t, outside), atomicfiletest.TreeState(t, f.root)
		w := f.writer(t, atomicfile.OS{})
		err := w.Apply(ctx, &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{f.edit(OpDelete, KindMessage, tMsgB, "")}})
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("err = %v, want a refusal naming the link", err)
		}
		atomicfiletest.AssertSameTree(t, "outside the store", victims, atomicfiletest.TreeState(t, outside))
		atomicfiletest.AssertSameTree(t, "the store", before, atomicfiletest.TreeState(t, f.root))
	})
	t.Run("part dir of the layout", func(t *testing.T) {
		f := newJSONFixture(t, ShapeStorage)
		outside := link(t, filepath.Join(f.root, "part"))
		victims := atomicfiletest.TreeState(t, outside)
		w := f.writer(t, atomicfile.OS{})
		add := Edit{Op: OpAdd, Kind: KindPart, ID: tPrtNew, SessionID: tSes, MessageID: tMsgB, After: []byte(`{"type":"text","text":"x"}`)}
		up := f.edit(OpUpdate, KindPart, tPrt1, tMsgA)
		up.After = []byte(`{}`)
		for _, e := range []Edit{add, up} {
			err := w.Apply(ctx, &ChangeSet{Store: f.info, SessionID: tSes, Edits: []Edit{e}})
			if err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("%s %s: err = %v, want a refusal naming the link", e.Op, e.ID, err)
			}
		}
		atomicfiletest.AssertSameTree(t, "outside the store", victims, atomicfiletest.TreeState(t, outside))
	})
	t.Run("store root", func(t *testing.T) {
		f := newJSONFixture(t, ShapeSessions)
		alias := filepath.Join(t.TempDir(), "alias")
		if err := os.Symlink(f.root, alias); err != nil {
			t.Fatal(err)
		}
		_, err := newJSONWriter(Info{Shape: ShapeSessions, Path: alias}, atomicfile.OS{})
		if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), f.root) {
			t.Fatalf("err = %v, want a refusal naming the directory the link points to", err)
		}
	})
}

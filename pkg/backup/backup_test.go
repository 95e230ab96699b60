package backup_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
	"github.com/tidwall/sjson"
)

const (
	sesID   = "ses_7ffffffffff0aaaaaaaaaaaaaa"
	msgUser = "msg_0000000000010000000000000a"
	msgAsst = "msg_0000000000020000000000000b"
	prtUser = "prt_0000000000010000000000000a"
	prtStep = "prt_0000000000020000000000000a"
	prtThk  = "prt_0000000000020000000000000b"
	prtText = "prt_0000000000020000000000000c"
	prtNew  = "prt_0000000000020000000000000d"
	prtRk   = "prt_00000000000200000000000009"
)

func fixture() *storetest.Fixture {
	return &storetest.Fixture{
		ID: sesID, Title: "interrupted",
		Info: json.RawMessage(`{"id":"` + sesID + `","title":"interrupted","time":{"created":1767225600000,"updated":1767225609000}}`),
		Messages: []storetest.Message{
			{Body: json.RawMessage(`{"id":"` + msgUser + `","role":"user","time":{"created":1767225601000}}`),
				Parts: []storetest.Part{{Body: json.RawMessage(`{"id":"` + prtUser + `","type":"text","text":"hi"}`)}}},
			{Body: json.RawMessage(`{"id":"` + msgAsst + `","role":"assistant","parentID":"` + msgUser + `","time":{"created":1767225602000},"unknownKey":[1,{"deep":null}]}`),
				Parts: []storetest.Part{
					{Body: json.RawMessage(`{"id":"` + prtStep + `","type":"step-start"}`)},
					{Body: json.RawMessage(`{"id":"` + prtThk + `","type":"reasoning","text":"unsigned","time":{"start":1767225602100}}`)},
					{Body: json.RawMessage(`{"id":"` + prtText + `","type":"text","text":""}`)},
				}},
		},
	}
}

// storeState renders a whole store (storetest.State).
func storeState(t *testing.T, info store.Info) string {
	t.Helper()
	return storetest.State(t, info.Path, info.Shape)
}

func loadSession(t *testing.T, path string) (store.Store, *store.Session) {
	t.Helper()
	st := storetest.OpenOne(t, path)
	refs, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if r.ID == sesID {
			s, err := st.Load(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			return st, s
		}
	}
	t.Fatalf("session %s not in %s", sesID, path)
	return nil, nil
}

func findPart(t *testing.T, s *store.Session, id string) (*store.Message, *store.Part) {
	t.Helper()
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.ID == id {
				return m, p
			}
		}
	}
	return nil, nil
}

// repair plans edits the way pkg/fix does: an update, an added part, a
// deleted part and a re-keyed part, in the store's own body format.
func repair(t *testing.T, s *store.Session) *store.ChangeSet {
	t.Helper()
	m, text := findPart(t, s, prtText)
	_, thk := findPart(t, s, prtThk)
	_, step := findPart(t, s, prtStep)
	if text == nil || thk == nil || step == nil {
		t.Fatalf("fixture parts missing from the loaded session")
	}
	edit := func(op store.Op, p *store.Part) store.Edit {
		return store.Edit{Op: op, Kind: store.KindPart, ID: p.ID, SessionID: sesID, MessageID: m.ID, Loc: p.Loc, Before: p.Raw, Rule: "SF104", Mutation: "test"}
	}
	up := edit(store.OpUpdate, text)
	var err error
	if up.After, err = sjson.SetBytes(text.Raw, "text", "[user interrupted]"); err != nil {
		t.Fatal(err)
	}
	add := store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: prtNew, SessionID: sesID, MessageID: m.ID, Rule: "SF102", Mutation: "injectTextPart"}
	if s.Store.Shape == store.ShapeSQLite {
		add.After = []byte(`{"type":"text","text":"[user interrupted]","synthetic":true}`)
	} else {
		add.After = []byte("{\n  \"id\": \"" + prtNew + "\",\n  \"sessionID\": \"" + sesID + "\",\n  \"messageID\": \"" + msgAsst + "\",\n  \"type\": \"text\",\n  \"text\": \"[user interrupted]\",\n  \"synthetic\": true\n}")
	}
	del := edit(store.OpDelete, thk)
	del.Rule = "SF107"
	rk := edit(store.OpRekey, step)
	rk.NewID = prtRk
	rk.After = step.Raw
	if s.Store.Shape != store.ShapeSQLite {
		if rk.After, err = sjson.SetBytes(step.Raw, "id", prtRk); err != nil {
			t.Fatal(err)
		}
	}
	return &store.ChangeSet{Store: s.Store, SessionID: sesID, Edits: []store.Edit{up, add, del, rk}}
}

func testOptions(t *testing.T) backup.Options {
	return backup.Options{Dir: filepath.Join(t.TempDir(), "state"), Write: store.WriteOptions{BusyTimeout: 200 * time.Millisecond}}
}

// rig is fixture() materialised in one shape and loaded, with the state of
// the store before the test changes it and options with their own state dir.
type rig struct {
	path   string
	info   store.Info
	s      *store.Session
	before string
	opts   backup.Options
}

func newRig(t *testing.T, shape store.Shape) *rig {
	t.Helper()
	path := storetest.Materialize(t, shape, t.TempDir(), fixture())
	st, s := loadSession(t, path)
	return &rig{path: path, info: st.Info(), s: s, before: storeState(t, st.Info()), opts: testOptions(t)}
}

// repairRun applies repair to the rig's session through the journal and
// returns the run id.
func (r *rig) repairRun(t *testing.T) string {
	t.Helper()
	run, err := backup.Apply(context.Background(), r.opts, r.info, []*store.ChangeSet{repair(t, r.s)})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// assertAsBefore fails the test when the store is not byte for byte (row
// for row) what it was when the rig was made.
func (r *rig) assertAsBefore(t *testing.T, when string) {
	t.Helper()
	if got := storeState(t, r.info); got != r.before {
		t.Fatalf("%s the store differs from before:\n%s\nwant:\n%s", when, got, r.before)
	}
}

func TestApplyUndoRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			r := newRig(t, shape)
			info, opts := r.info, r.opts

			cs := repair(t, r.s)
			run, err := backup.Apply(ctx, opts, info, []*store.ChangeSet{cs})
			if err != nil {
				t.Fatal(err)
			}
			if run == "" {
				t.Fatal("no run id for a run that wrote")
			}
			if storeState(t, info) == r.before {
				t.Fatal("the store did not change")
			}
			_, after := loadSession(t, r.path)
			if _, p := findPart(t, after, prtText); p == nil || p.Get("text").Str != "[user interrupted]" {
				t.Errorf("updated part not on disk")
			}
			if _, p := findPart(t, after, prtNew); p == nil {
				t.Errorf("added part not on disk")
			}
			if _, p := findPart(t, after, prtThk); p != nil {
				t.Errorf("deleted part still on disk")
			}
			if _, p := findPart(t, after, prtRk); p == nil {
				t.Errorf("re-keyed part not under its new id")
			}
			checkJournal(t, opts, run, info, cs)

			res, err := backup.Undo(ctx, opts, run, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.RunID != run || len(res.Restored) == 0 || len(res.Refused) != 0 {
				t.Fatalf("undo result = %+v", res)
			}
			r.assertAsBefore(t, "after undo")

			again, err := backup.Undo(ctx, opts, run, false)
			if err != nil || !again.AlreadyUndone || !strings.Contains(again.Message, "already undone") {
				t.Fatalf("second undo = %+v, %v; want a no-op saying it was already undone", again, err)
			}
			r.assertAsBefore(t, "after the second undo")
			runs, _ := backup.List(opts)
			if len(runs) != 1 || runs[0].State != "undone" || runs[0].Undone == nil {
				t.Fatalf("runs = %+v, want the one run marked undone", runs)
			}
		})
	}
}

// checkJournal checks the run folder: private modes, and a manifest that
// names the store and every edit with its hashes.
func checkJournal(t *testing.T, opts backup.Options, run string, info store.Info, cs *store.ChangeSet) {
	t.Helper()
	dir := filepath.Join(opts.Dir, "backups", run)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("run folder mode = %v, want 0700", fi.Mode().Perm())
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, _ := d.Info(); fi.Mode().Perm() != 0o600 {
				t.Errorf("%s mode = %v, want 0600", p, fi.Mode().Perm())
			}
		}
		return nil
	})
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m backup.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.RunID != run || m.Store.Shape != info.Shape || m.Version == "" || m.Time.IsZero() {
		t.Errorf("manifest header = %+v", m)
	}
	if len(m.Sessions) != 1 || m.Sessions[0].State != backup.StateApplied || len(m.Sessions[0].Edits) != len(cs.Edits) {
		t.Fatalf("manifest sessions = %+v", m.Sessions)
	}
	for i, e := range m.Sessions[0].Edits {
		want := cs.Edits[i]
		if e.Op != want.Op || e.ID != want.ID || e.Rule != want.Rule || e.Mutation != want.Mutation {
			t.Errorf("manifest edit %d = %+v, want %s %s", i, e, want.Op, want.ID)
		}
		if e.Location.Path == "" {
			t.Errorf("manifest edit %d (%s %s) has no location", i, e.Op, e.ID)
		}
		if want.Op != store.OpAdd && e.SHA256Before != store.HashBytes(want.Before) {
			t.Errorf("manifest edit %d: sha256 before = %s, want the hash of its Before", i, e.SHA256Before)
		}
		if (want.Op == store.OpUpdate || want.Op == store.OpAdd) && e.SHA256After != store.HashBytes(want.After) {
			t.Errorf("manifest edit %d: sha256 after = %s, want the hash of its After", i, e.SHA256After)
		}
	}
	for _, im := range m.Sessions[0].Images {
		if !im.Existed {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, im.File))
		if err != nil {
			t.Fatalf("backup file of %s: %v", im.Target, err)
		}
		if im.Planned == nil {
			t.Errorf("%s: the manifest does not say what the run planned to write", im.Target)
		}
		if info.Shape == store.ShapeExport {
			// Only what the run replaced in the file is backed up.
			whole, _ := os.ReadFile(info.Path)
			if len(im.Spans) == 0 || store.HashBytes(data) != im.SHA256File || len(data) >= len(whole)/2 {
				t.Errorf("export backup %s: %d bytes in %d spans for a %d-byte file; want the spans only, hashed", im.File, len(data), len(im.Spans), len(whole))
			}
			continue
		}
		if store.HashBytes(data) != im.SHA256Before {
			t.Errorf("backup file %s does not hash to the manifest's sha256", im.File)
		}
		if info.Shape == store.ShapeSQLite && len(im.Columns) == 0 {
			t.Errorf("row %s was backed up without its columns", im.Target)
		}
	}
}

// mutateAfterRun changes one record the run wrote, as OpenCode would.
func mutateAfterRun(t *testing.T, info store.Info, path string) {
	t.Helper()
	_, s := loadSession(t, path)
	_, p := findPart(t, s, prtText)
	after, _ := sjson.SetBytes(p.Raw, "text", "typed by the user later")
	w, err := shapes.OpenWriter(info, store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	err = w.Apply(context.Background(), &store.ChangeSet{Store: info, SessionID: sesID, Edits: []store.Edit{
		{Op: store.OpUpdate, Kind: store.KindPart, ID: p.ID, SessionID: sesID, MessageID: msgAsst, Loc: p.Loc, Before: p.Raw, After: after},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUndoRefusesChangedRecordsUnlessForced(t *testing.T) {
	ctx := context.Background()
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeSessions, store.ShapeExport} {
		t.Run(string(shape), func(t *testing.T) {
			r := newRig(t, shape)
			info, opts := r.info, r.opts
			run := r.repairRun(t)
			mutateAfterRun(t, info, r.path)
			changed := storeState(t, info)

			res, err := backup.Undo(ctx, opts, run, false)
			t.Log(err)
			if !errors.Is(err, store.ErrChanged) {
				t.Fatalf("err = %v, want ErrChanged", err)
			}
			var refused *backup.RefusedError
			if res == nil || len(res.Refused) != 1 || !strings.Contains(err.Error(), res.Refused[0].Target.String()) || !errors.As(err, &refused) || len(refused.Refused) != 1 {
				t.Fatalf("refusal = %+v, err = %v; want the one changed record named, as a RefusedError", res, err)
			}
			if storeState(t, info) != changed {
				t.Fatal("a refused undo changed the store")
			}
			forceUndo(t, r, run, changed)
		})
	}
}

// forceUndo undoes a run with --force after a record it wrote changed:
// the store is as before, except an export file, which cannot be restored
// from a backup of only the parts the run replaced: undo says so and
// changes nothing.
func forceUndo(t *testing.T, r *rig, run, changed string) {
	t.Helper()
	_, err := backup.Undo(context.Background(), r.opts, run, true)
	if r.info.Shape == store.ShapeExport {
		if err == nil || !strings.Contains(err.Error(), "cannot be restored, even with --force") {
			t.Fatalf("forced undo of a changed export file: err = %v, want why it cannot be restored", err)
		}
		if storeState(t, r.info) != changed {
			t.Fatal("a failed forced undo changed the export file")
		}
		return
	}
	if err != nil {
		t.Fatalf("forced undo: %v", err)
	}
	r.assertAsBefore(t, "after a forced undo")
}

// TestUndoRefusesAWriteDuringTheUndo changes a record after Undo checked
// the store and before it restores: nothing may be restored over it.
func TestUndoRefusesAWriteDuringTheUndo(t *testing.T) {
	ctx := context.Background()
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeSessions, store.ShapeExport} {
		t.Run(string(shape), func(t *testing.T) {
			r := newRig(t, shape)
			info, opts := r.info, r.opts
			run := r.repairRun(t)
			var changed string
			backup.SetBeforeRestore(t, func() {
				mutateAfterRun(t, info, r.path)
				changed = storeState(t, info)
			})
			_, err := backup.Undo(ctx, opts, run, false)
			if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), "while it was being restored") {
				t.Fatalf("err = %v, want ErrChanged for the write during the undo", err)
			}
			if changed == "" || storeState(t, info) != changed {
				t.Fatal("the undo restored over a write made after its check")
			}
			backup.SetBeforeRestore(t, nil)
			forceUndo(t, r, run, changed)
		})
	}
}

// TestUndoRestoresABlobDataColumn: OpenCode writes data as TEXT, but a
// row holding a BLOB (another tool's write) must come back a BLOB.
func TestUndoRestoresABlobDataColumn(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, store.ShapeSQLite)
	db, err := sql.Open("sqlite", r.info.Path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`UPDATE part SET data = CAST(data AS BLOB) WHERE id = ?`, prtThk) // a part the repair deletes
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, r.s = loadSession(t, r.path)
	r.before = storeState(t, r.info)
	run := r.repairRun(t)
	if _, err := backup.Undo(ctx, r.opts, run, false); err != nil {
		t.Fatal(err)
	}
	r.assertAsBefore(t, "after undo")
}

// TestUndoLeavesADirectoryThatExisted: a part added into an empty
// directory is removed by undo, the directory stays, as it was.
func TestUndoLeavesADirectoryThatExisted(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, store.ShapeStorage)
	const msg = "msg_0000000000030000000000000f"
	if err := os.Mkdir(filepath.Join(r.path, "part", msg), 0o755); err != nil {
		t.Fatal(err)
	}
	r.before = storeState(t, r.info)
	add := store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: prtNew, SessionID: sesID, MessageID: msg,
		After: []byte("{\n  \"id\": \"" + prtNew + "\",\n  \"type\": \"text\",\n  \"text\": \"x\"\n}"), Rule: "SF101", Mutation: "injectTextPart"}
	run, err := backup.Apply(ctx, r.opts, r.info, []*store.ChangeSet{{Store: r.info, SessionID: sesID, Edits: []store.Edit{add}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Undo(ctx, r.opts, run, false); err != nil {
		t.Fatal(err)
	}
	r.assertAsBefore(t, "after undo")
}

// TestUndoOfAMovedStore: the store the run changed is gone; undo says
// where it was and where the backup is, and creates nothing there.
func TestUndoOfAMovedStore(t *testing.T) {
	ctx := context.Background()
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeSessions} {
		t.Run(string(shape), func(t *testing.T) {
			r := newRig(t, shape)
			run := r.repairRun(t)
			moved := r.path + ".moved"
			if err := os.Rename(r.path, moved); err != nil {
				t.Fatal(err)
			}
			_, err := backup.Undo(ctx, r.opts, run, false)
			var gone *backup.StoreGoneError
			if !errors.As(err, &gone) || !strings.Contains(err.Error(), "is gone") || !strings.Contains(err.Error(), r.info.Path) || !strings.HasSuffix(gone.Before, filepath.Join(run, "before")) {
				t.Fatalf("err = %v, want the store's old path and the backup named", err)
			}
			if _, err := os.Lstat(r.path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("undo created %s: %v", r.path, err)
			}
		})
	}
}

// TestUndoOfAnIncompleteRun: a sessfix killed after applying a change set
// but before recording what it left: the manifest says what it planned to
// write, so undo restores it without --force, and refuses (unless forced)
// when a record holds something else.
func TestUndoOfAnIncompleteRun(t *testing.T) {
	ctx := context.Background()
	for _, shape := range storetest.Shapes {
		for _, touched := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/changed-after=%v", shape, touched), func(t *testing.T) {
				r := newRig(t, shape)
				info, opts := r.info, r.opts
				w, err := shapes.OpenWriter(info, store.WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				j, err := backup.Begin(opts, info)
				if err != nil {
					t.Fatal(err)
				}
				cs := repair(t, r.s)
				if err := j.Record(ctx, w, cs); err != nil {
					t.Fatal(err)
				}
				if err := w.Apply(ctx, cs); err != nil {
					t.Fatal(err)
				}
				runs, _ := backup.List(opts)
				if len(runs) != 1 || runs[0].State != "incomplete" {
					t.Fatalf("runs = %+v, want one incomplete run", runs)
				}
				if !touched {
					if _, err := backup.Undo(ctx, opts, j.ID(), false); err != nil {
						t.Fatalf("undo of a run killed after it wrote what it planned: %v", err)
					}
					r.assertAsBefore(t, "after the undo")
					return
				}
				mutateAfterRun(t, info, r.path)
				changed := storeState(t, info)
				_, err = backup.Undo(ctx, opts, j.ID(), false)
				if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), "stopped before it finished, and it holds neither") {
					t.Fatalf("err = %v, want a refusal explaining the run did not finish", err)
				}
				if storeState(t, info) != changed {
					t.Fatal("a refused undo changed the store")
				}
				forceUndo(t, r, j.ID(), changed)
			})
		}
	}
}

// TestUndoOfARunKilledBeforeItWrote: killed after recording a change set
// and before applying it, a run changed nothing; undo says so and marks it
// undone.
func TestUndoOfARunKilledBeforeItWrote(t *testing.T) {
	ctx := context.Background()
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			r := newRig(t, shape)
			w, err := shapes.OpenWriter(r.info, store.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			j, err := backup.Begin(r.opts, r.info)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Record(ctx, w, repair(t, r.s)); err != nil {
				t.Fatal(err)
			}
			res, err := backup.Undo(ctx, r.opts, j.ID(), false)
			if err != nil || len(res.Restored) != 0 || !strings.Contains(res.Message, "changed nothing") {
				t.Fatalf("undo = %+v, %v; want nothing restored, and said so", res, err)
			}
			r.assertAsBefore(t, "after the undo")
		})
	}
}

func TestRefusedChangeSetLeavesNoRun(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeSessions} {
		t.Run(string(shape), func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, shape)
			cs := repair(t, r.s)
			cs.Edits[len(cs.Edits)-1].Before = []byte(`{"stale":true}`)
			run, err := backup.Apply(ctx, r.opts, r.info, []*store.ChangeSet{cs})
			if !errors.Is(err, store.ErrChanged) {
				t.Fatalf("err = %v, want ErrChanged", err)
			}
			r.assertAsBefore(t, "after a refused change set")
			runs, err := backup.List(r.opts)
			if err != nil {
				t.Fatal(err)
			}
			if run != "" || len(runs) != 0 {
				t.Fatalf("run %q, runs %+v: want no run for a refusal", run, runs)
			}
		})
	}
}

func TestNoBackupNoWrite(t *testing.T) {
	r := newRig(t, store.ShapeSessions)
	// The state directory cannot be created: a file sits where it should be.
	blocker := filepath.Join(t.TempDir(), "state")
	os.WriteFile(blocker, []byte("x"), 0o600)
	_, err := backup.Apply(context.Background(), backup.Options{Dir: blocker}, r.info, []*store.ChangeSet{repair(t, r.s)})
	if je := (*backup.JournalError)(nil); !errors.As(err, &je) || !strings.Contains(err.Error(), blocker) {
		t.Fatalf("err = %v, want a JournalError naming %s", err, blocker)
	}
	r.assertAsBefore(t, "after a failed backup")
}

func TestUndoWaitsForTheWriterLock(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, store.ShapeSessions)
	info, opts := r.info, r.opts
	run, err := backup.Apply(ctx, opts, info, []*store.ChangeSet{repair(t, r.s)})
	if err != nil {
		t.Fatal(err)
	}
	after := storeState(t, info)
	lock, err := store.AcquireLock(info)
	if err != nil {
		t.Fatal(err)
	}
	_, err = backup.Undo(ctx, opts, run, false)
	lock.Release()
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked while another sessfix writes", err)
	}
	if storeState(t, info) != after {
		t.Fatal("undo changed a locked store")
	}
}

func TestUndoUnknownRuns(t *testing.T) {
	opts := testOptions(t)
	// "last" is no run id: the newest operation is LastOperation's.
	for _, id := range []string{"20261121T153000Z-aaaaaa", "../../etc", "nope", "", "last"} {
		if _, err := backup.Undo(context.Background(), opts, id, false); !errors.Is(err, backup.ErrNoRun) {
			t.Errorf("undo %q: %v, want ErrNoRun", id, err)
		}
	}
}

func TestListAndPrune(t *testing.T) {
	opts := testOptions(t)
	now := time.Date(2026, 11, 21, 15, 30, 0, 0, time.UTC)
	info := store.Info{Shape: store.ShapeSessions, Path: t.TempDir()}
	var ids []string
	for _, age := range []time.Duration{40 * 24 * time.Hour, 10 * 24 * time.Hour, time.Hour} {
		o := opts
		o.Now = func() time.Time { return now.Add(-age) }
		j, err := backup.Begin(o, info)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(j.ID(), now.Add(-age).Format("20060102T150405Z")+"-") {
			t.Errorf("run id %s does not start with its time", j.ID())
		}
		ids = append(ids, j.ID())
		// Runs that recorded nothing are removed on Close; keep these.
	}
	runs, err := backup.List(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || runs[0].ID != ids[2] || runs[2].ID != ids[0] {
		t.Fatalf("runs = %+v, want newest first", runs)
	}
	opts.Now = func() time.Time { return now }
	old, _, err := backup.Older(opts, 30*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	removed, err := backup.Remove(old)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0].ID != ids[0] {
		t.Fatalf("pruned %+v, want only the 40-day-old run", removed)
	}
	runs, _ = backup.List(opts)
	if len(runs) != 2 {
		t.Fatalf("after prune: %+v", runs)
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, "backups", ids[0])); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pruned run folder still there: %v", err)
	}
}

func TestEmptyRunLeavesNoFolder(t *testing.T) {
	opts := testOptions(t)
	run, err := backup.Apply(context.Background(), opts, store.Info{Shape: store.ShapeSessions, Path: t.TempDir()}, []*store.ChangeSet{{}})
	if err != nil || run != "" {
		t.Fatalf("apply of nothing = %q, %v", run, err)
	}
	runs, _ := backup.List(opts)
	if len(runs) != 0 {
		t.Fatalf("runs = %+v, want none", runs)
	}
}

func TestStateDir(t *testing.T) {
	t.Setenv("SESSFIX_STATE_DIR", "/x/state")
	if d, _ := backup.StateDir(); d != "/x/state" {
		t.Errorf("with SESSFIX_STATE_DIR: %s", d)
	}
	t.Setenv("SESSFIX_STATE_DIR", "")
	t.Setenv("XDG_STATE_HOME", "/xdg")
	if d, _ := backup.StateDir(); d != filepath.Join("/xdg", "sessfix") {
		t.Errorf("with XDG_STATE_HOME: %s", d)
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	if d, _ := backup.StateDir(); d != filepath.Join("/home/u", ".local", "state", "sessfix") {
		t.Errorf("default: %s", d)
	}
}

// readOnly makes path unwritable for whoever runs the test: write
// permission off for a user, the immutable flag for root (whom permission
// bits do not stop).
func readOnly(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(path, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Fatalf("chattr +i %s: %v: %s", path, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
}

// TestUnchangedWriteFailureLeavesNoRun: a write the store refuses and that
// leaves it as it was (a read-only export file) leaves no failed run in
// `sessfix backups`: there is nothing to undo.
func TestUnchangedWriteFailureLeavesNoRun(t *testing.T) {
	r := newRig(t, store.ShapeExport)
	readOnly(t, filepath.Dir(r.path))
	run, err := backup.Apply(context.Background(), r.opts, r.info, []*store.ChangeSet{repair(t, r.s)})
	var we *store.WriteError
	if !errors.As(err, &we) || !we.Unchanged {
		t.Fatalf("err = %v, want a WriteError that left the store unchanged", err)
	}
	r.assertAsBefore(t, "after a refused write")
	runs, err := backup.List(r.opts)
	if err != nil {
		t.Fatal(err)
	}
	if run != "" || len(runs) != 0 {
		t.Fatalf("run %q, runs %+v: want no run for a write that changed nothing", run, runs)
	}
}

// TestUndoOfARekeyedMessage: re-keying a message moves its parts (their
// message_id column, or their directory); undo puts back every column of
// every row, and every file, though the parts' data did not change.
func TestUndoOfARekeyedMessage(t *testing.T) {
	ctx := context.Background()
	const newID = "msg_0000000000020000000000000a"
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage, store.ShapeSessions} {
		t.Run(string(shape), func(t *testing.T) {
			r := newRig(t, shape)
			var msg *store.Message
			for _, m := range r.s.Messages {
				if m.ID == msgAsst {
					msg = m
				}
			}
			rk := store.Edit{Op: store.OpRekey, Kind: store.KindMessage, ID: msgAsst, NewID: newID, SessionID: sesID,
				Loc: msg.Loc, Before: msg.Raw, Rule: "SF202", Mutation: "rekey"}
			run, err := backup.Apply(ctx, r.opts, r.info, []*store.ChangeSet{{Store: r.info, SessionID: sesID, Edits: []store.Edit{rk}}})
			if err != nil {
				t.Fatal(err)
			}
			if storeState(t, r.info) == r.before {
				t.Fatal("the re-key changed nothing")
			}
			if _, err := backup.Undo(ctx, r.opts, run, false); err != nil {
				t.Fatal(err)
			}
			r.assertAsBefore(t, "after undo")
		})
	}
}

// TestUndoRemovesADirectoryAKilledRunMade: a run killed after creating the
// directory of a new record and before writing the record leaves an empty
// directory; undo removes it, as it was not there before.
func TestUndoRemovesADirectoryAKilledRunMade(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, store.ShapeStorage)
	const msg = "msg_0000000000030000000000000f"
	add := store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: prtNew, SessionID: sesID, MessageID: msg,
		After: []byte("{\n  \"id\": \"" + prtNew + "\",\n  \"type\": \"text\",\n  \"text\": \"x\"\n}"), Rule: "SF101", Mutation: "injectTextPart"}
	w, err := shapes.OpenWriter(r.info, store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	j, err := backup.Begin(r.opts, r.info)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Record(ctx, w, &store.ChangeSet{Store: r.info, SessionID: sesID, Edits: []store.Edit{add}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(r.path, "part", msg), 0o755); err != nil { // then killed
		t.Fatal(err)
	}
	if _, err := backup.Undo(ctx, r.opts, j.ID(), false); err != nil {
		t.Fatal(err)
	}
	r.assertAsBefore(t, "after undo")
}

// TestExportBackupKeepsOnlyWhatChanges: one edit in a large export file is
// backed up as the bytes it replaced, not the whole file, and undo still
// restores the file byte for byte.
func TestExportBackupKeepsOnlyWhatChanges(t *testing.T) {
	ctx := context.Background()
	path, _, err := storegen.Generate(store.ShapeExport, t.TempDir(), storegen.Config{Sessions: 1, Messages: 400, DefectRate: -1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.OpenOne(t, path)
	s := storetest.LoadAll(t, st)[0]
	p := s.Messages[len(s.Messages)/2].Parts[0]
	after, err := sjson.SetBytes(p.Raw, "metadata.note", "edited")
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t)
	run, err := backup.Apply(ctx, opts, st.Info(), []*store.ChangeSet{{Store: st.Info(), SessionID: s.ID, Edits: []store.Edit{
		{Op: store.OpUpdate, Kind: store.KindPart, ID: p.ID, SessionID: s.ID, MessageID: p.MessageID, Loc: p.Loc, Before: p.Raw, After: after},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var saved int64
	filepath.WalkDir(filepath.Join(opts.Dir, "backups", run, "before"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, _ := d.Info()
			saved += fi.Size()
		}
		return nil
	})
	if saved == 0 || saved > int64(len(p.Raw))+64 {
		t.Errorf("backed up %d bytes for a %d-byte part of a %d-byte file; want about the part", saved, len(p.Raw), len(whole))
	}
	if _, err := backup.Undo(ctx, opts, run, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(whole) {
		t.Error("undo did not restore the export file byte for byte")
	}
}

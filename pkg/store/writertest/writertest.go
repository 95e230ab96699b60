// Package writertest drives a store.Writer the way pkg/backup does (list
// the targets, read their images, apply; restore over an expected state),
// for the tests of every shape's writer, and holds every writer to one
// contract for session records (SessionContract).
package writertest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/pkg/store"
)

// The ids of the session every writer test builds: messages A (part 1)
// and B (parts 2 and 3), and ids to add or re-key to.
const (
	Ses    = "ses_7ffffffffff0aaaaaaaaaaaaaa"
	MsgA   = "msg_0000000000010000000000000a"
	MsgB   = "msg_0000000000020000000000000b"
	MsgNew = "msg_00000000000100000000000009"
	Prt1   = "prt_0000000000010000000000000a"
	Prt2   = "prt_0000000000020000000000000a"
	Prt3   = "prt_0000000000020000000000000b"
	PrtNew = "prt_0000000000020000000000000c"
	PrtRk  = "prt_00000000000200000000000001"
)

// ApplyBackedUp applies cs the way a backup run drives a writer: it lists
// the targets, reads their images, then applies. It returns the targets and
// the images, so a test can check what was covered and restore it.
func ApplyBackedUp(t testing.TB, w store.Writer, cs *store.ChangeSet) ([]store.Target, []store.Image) {
	t.Helper()
	targets, images := BackedUp(t, w, cs)
	if err := w.Apply(context.Background(), cs); err != nil {
		t.Fatal(err)
	}
	return targets, images
}

// BackedUp lists and reads what cs will touch, as the backup journal does
// before Apply.
func BackedUp(t testing.TB, w store.Writer, cs *store.ChangeSet) ([]store.Target, []store.Image) {
	t.Helper()
	ctx := context.Background()
	targets, err := w.Targets(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	images, err := w.Read(ctx, targets)
	if err != nil {
		t.Fatal(err)
	}
	return targets, images
}

// ExpectNow sets each image's Expect to its target's current state, as
// undo does after checking the store.
func ExpectNow(t testing.TB, w store.Writer, targets []store.Target, images []store.Image) {
	t.Helper()
	cur, err := w.Read(context.Background(), targets)
	if err != nil {
		t.Fatal(err)
	}
	for i := range images {
		h := cur[i].Hash()
		images[i].Expect = &h
	}
}

// SessionCase is one shape's store for the session-record contract
// (SessionContract).
type SessionCase struct {
	// Open makes a fresh store whose session Session has a session
	// record (and messages), and opens its reader and its writer.
	Open    func(t *testing.T) (store.Store, store.Writer)
	Session string
	// Snapshot renders every byte of the store as it is now: rows with
	// every column, or files with their modes and the directories.
	Snapshot func(t *testing.T) string
	// NewBody is the body of a new session with the id, in the store's
	// own format; nil for a writer that refuses to add sessions.
	NewBody func(id string) []byte
	// Created, when the writer stores Edit.Created, returns the creation
	// time the store holds for the session record rec.
	Created func(rec *store.Record) int64
	// Unstorable is a field a session record of the store has no place
	// for ("" when a record can hold any field).
	Unstorable string
	// Deletes is true for a writer that removes a session record together
	// with every message of it (false: it refuses to remove one at all).
	Deletes bool
}

// SessionContract holds a writer to what every writer does with session
// records: an update is applied exactly as planned and undone byte for
// byte, a stale one is refused; a new session is written where the shape
// keeps sessions and undone byte for byte (directories included), or
// refused with a clear error by a writer that cannot add one; a session
// record is removed only with every message of it, and undone byte for
// byte; nothing is written by a refused change set.
func SessionContract(t *testing.T, c SessionCase) {
	t.Run("update", func(t *testing.T) { sessionUpdate(t, c) })
	if c.Unstorable != "" {
		t.Run("unstorable field", func(t *testing.T) { sessionUnstorable(t, c) })
	}
	t.Run("add", func(t *testing.T) { sessionAdd(t, c) })
	t.Run("delete", func(t *testing.T) { sessionDelete(t, c) })
	t.Run("add needs a session id", func(t *testing.T) {
		_, w := c.Open(t)
		cs := &store.ChangeSet{SessionID: MsgNew, Edits: []store.Edit{{Op: store.OpAdd, Kind: store.KindSession, ID: MsgNew, After: []byte(`{}`)}}}
		if _, err := w.Targets(context.Background(), cs); err == nil || !strings.Contains(err.Error(), "format") {
			t.Fatalf("adding a session with the id %s = %v, want a refusal of the id", MsgNew, err)
		}
	})
}

// sessionUpdate updates the session record, refuses a stale Before and restores it.
func sessionUpdate(t *testing.T, c SessionCase) {
	st, w := c.Open(t)
	initial := c.Snapshot(t)
	info := LoadSession(t, st, c.Session).Info
	after, err := sjson.SetBytes(info.Raw, "title", "Renamed by sessfix")
	if err != nil {
		t.Fatal(err)
	}
	cs := &store.ChangeSet{Store: st.Info(), SessionID: c.Session, Edits: []store.Edit{{
		Op: store.OpUpdate, Kind: store.KindSession, ID: c.Session, SessionID: c.Session, Loc: info.Loc, Before: info.Raw, After: after}}}
	targets, images := applyAsPlanned(t, w, cs)
	if got := LoadSession(t, st, c.Session).Info.Get("title").Str; got != "Renamed by sessfix" {
		t.Fatalf("the session's title after the update is %q", got)
	}
	changed := c.Snapshot(t)
	if err := w.Apply(context.Background(), cs); !errors.Is(err, store.ErrChanged) {
		t.Fatalf("applying the update again (its Before is stale) = %v, want ErrChanged", err)
	}
	if got := c.Snapshot(t); got != changed {
		t.Fatalf("a refused update changed the store:\n%s\nwant:\n%s", got, changed)
	}
	ExpectNow(t, w, targets, images)
	if err := w.Restore(context.Background(), images); err != nil {
		t.Fatal(err)
	}
	if got := c.Snapshot(t); got != initial {
		t.Fatalf("after restoring the update the store differs:\n%s\nwant:\n%s", got, initial)
	}
}

// sessionUnstorable refuses an update setting a field the store cannot hold.
func sessionUnstorable(t *testing.T, c SessionCase) {
	st, w := c.Open(t)
	initial := c.Snapshot(t)
	info := LoadSession(t, st, c.Session).Info
	after, _ := sjson.SetBytes(info.Raw, c.Unstorable, "x")
	cs := &store.ChangeSet{Store: st.Info(), SessionID: c.Session, Edits: []store.Edit{{
		Op: store.OpUpdate, Kind: store.KindSession, ID: c.Session, SessionID: c.Session, Loc: info.Loc, Before: info.Raw, After: after}}}
	err := applyBackedUpErr(w, cs)
	if err == nil || !strings.Contains(err.Error(), c.Unstorable) {
		t.Fatalf("an update setting %q = %v, want a refusal naming the field", c.Unstorable, err)
	}
	if got := c.Snapshot(t); got != initial {
		t.Fatalf("a refused update changed the store:\n%s\nwant:\n%s", got, initial)
	}
}

// sessionAdd adds a session record (or refuses to, with c.NewBody nil), refuses a second add and undoes it.
func sessionAdd(t *testing.T, c SessionCase) {
	st, w := c.Open(t)
	initial := c.Snapshot(t)
	created := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	id := store.NewSessionID(created)
	add := store.Edit{Op: store.OpAdd, Kind: store.KindSession, ID: id, SessionID: id, Created: created.UnixMilli()}
	if c.NewBody == nil {
		add.After = []byte(`{"id":"` + id + `","title":"new"}`)
		cs := &store.ChangeSet{Store: st.Info(), SessionID: id, Edits: []store.Edit{add}}
		err := applyBackedUpErr(w, cs)
		if err == nil || !strings.Contains(err.Error(), "session") {
			t.Fatalf("adding a session = %v, want a refusal that says why", err)
		}
		if got := c.Snapshot(t); got != initial {
			t.Fatalf("a refused add changed the store:\n%s\nwant:\n%s", got, initial)
		}
		return
	}
	add.After = c.NewBody(id)
	cs := &store.ChangeSet{Store: st.Info(), SessionID: id, Edits: []store.Edit{add}}
	targets, images := applyAsPlanned(t, w, cs)
	if cs.Edits[0].Loc.Path == "" {
		t.Error("Apply left the added session's location empty")
	}
	sess := LoadSession(t, st, id)
	if sess.Info == nil || sess.Info.Get("title").Str != gjson.GetBytes(add.After, "title").Str {
		t.Fatalf("the added session reads back as %+v", sess.Info)
	}
	if c.Created != nil {
		if got := c.Created(sess.Info); got != add.Created {
			t.Errorf("the added session was created at %d, want Edit.Created %d", got, add.Created)
		}
	}
	again := &store.ChangeSet{Store: st.Info(), SessionID: id, Edits: []store.Edit{add}}
	added := c.Snapshot(t)
	if err := applyBackedUpErr(w, again); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("adding the session a second time = %v, want a refusal saying it exists", err)
	}
	if got := c.Snapshot(t); got != added {
		t.Fatalf("a refused add changed the store:\n%s\nwant:\n%s", got, added)
	}
	ExpectNow(t, w, targets, images)
	if err := w.Restore(context.Background(), images); err != nil {
		t.Fatal(err)
	}
	if got := c.Snapshot(t); got != initial {
		t.Fatalf("after undoing the add the store differs:\n%s\nwant:\n%s", got, initial)
	}
}

// sessionDelete refuses a session record deleted alone, and deletes it with its messages and undoes it (c.Deletes).
func sessionDelete(t *testing.T, c SessionCase) {
	st, w := c.Open(t)
	initial := c.Snapshot(t)
	sess := LoadSession(t, st, c.Session)
	del := store.Edit{Op: store.OpDelete, Kind: store.KindSession, ID: c.Session, SessionID: c.Session, Loc: sess.Info.Loc, Before: sess.Info.Raw}
	alone := &store.ChangeSet{Store: st.Info(), SessionID: c.Session, Edits: []store.Edit{del}}
	if err := applyBackedUpErr(w, alone); err == nil {
		t.Fatal("a session record was deleted while its messages stay")
	}
	if got := c.Snapshot(t); got != initial {
		t.Fatalf("a refused delete changed the store:\n%s\nwant:\n%s", got, initial)
	}
	if !c.Deletes || len(sess.Messages) == 0 {
		return
	}
	// Messages first, then the session, as a planner lists them.
	var edits []store.Edit
	for _, m := range sess.Messages {
		edits = append(edits, store.Edit{Op: store.OpDelete, Kind: store.KindMessage, ID: m.ID, SessionID: c.Session, Loc: m.Loc, Before: m.Raw})
	}
	cs := &store.ChangeSet{Store: st.Info(), SessionID: c.Session, Edits: append(edits, del)}
	targets, images := applyAsPlanned(t, w, cs)
	refs, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range refs {
		if ref.ID == c.Session {
			t.Fatalf("the deleted session is still listed")
		}
	}
	ExpectNow(t, w, targets, images)
	if err := w.Restore(context.Background(), images); err != nil {
		t.Fatal(err)
	}
	if got := c.Snapshot(t); got != initial {
		t.Fatalf("after undoing the delete the store differs:\n%s\nwant:\n%s", got, initial)
	}
}

// LoadSession loads a session through the store's listing (fresh), and
// fails the test when it is not listed.
func LoadSession(t testing.TB, st store.Store, id string) *store.Session {
	t.Helper()
	ctx := context.Background()
	refs, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range refs {
		if ref.ID == id {
			sess, err := st.Load(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			return sess
		}
	}
	t.Fatalf("the store does not list session %s", id)
	return nil
}

// applyAsPlanned applies cs as a backup run does, and checks that it left
// every target exactly as Planned said it would.
func applyAsPlanned(t testing.TB, w store.Writer, cs *store.ChangeSet) ([]store.Target, []store.Image) {
	t.Helper()
	ctx := context.Background()
	targets, images := BackedUp(t, w, cs)
	planned, err := w.Planned(ctx, cs, images)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(ctx, cs); err != nil {
		t.Fatal(err)
	}
	after, err := w.Read(ctx, targets)
	if err != nil {
		t.Fatal(err)
	}
	for i := range after {
		if after[i].Exists != planned[i].Exists || after[i].Hash() != planned[i].Hash() {
			t.Fatalf("%s: Apply left %q (exists %v), Planned said %q (exists %v)", targets[i], after[i].Data, after[i].Exists, planned[i].Data, planned[i].Exists)
		}
	}
	return targets, images
}

// applyBackedUpErr lists, reads and applies cs, returning the first error.
func applyBackedUpErr(w store.Writer, cs *store.ChangeSet) error {
	ctx := context.Background()
	targets, err := w.Targets(ctx, cs)
	if err != nil {
		return err
	}
	if _, err := w.Read(ctx, targets); err != nil {
		return err
	}
	return w.Apply(ctx, cs)
}

// DirSnapshot renders every file and directory under root: path, mode and
// bytes. It fails the test on an error.
func DirSnapshot(t testing.TB, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(&b, "%s %v", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/internal/atomicfile/atomicfiletest"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/writertest"
	"github.com/tidwall/gjson"
)

// An export as `opencode export` writes it: 2-space pretty JSON.
const exportCompact = `{"info":{"id":"` + writertest.Ses + `","title":"t"},"messages":[` +
	`{"info":{"id":"` + writertest.MsgA + `","sessionID":"` + writertest.Ses + `","role":"user","time":{"created":1000}},"parts":[` +
	`{"id":"` + writertest.Prt1 + `","messageID":"` + writertest.MsgA + `","type":"text","text":"hi"}]},` +
	`{"info":{"id":"` + writertest.MsgB + `","sessionID":"` + writertest.Ses + `","role":"assistant","time":{"created":2000},"unknown":[1,2]},"parts":[` +
	`{"id":"` + writertest.Prt2 + `","messageID":"` + writertest.MsgB + `","type":"reasoning","text":""},` +
	`{"id":"` + writertest.Prt3 + `","messageID":"` + writertest.MsgB + `","type":"text","text":""}]}]}`

// canonical is doc re-printed the way OpenCode prints it.
func canonical(t *testing.T, doc []byte) []byte {
	t.Helper()
	var c, out bytes.Buffer
	if err := json.Compact(&c, doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	json.Indent(&out, c.Bytes(), "", "  ")
	out.WriteByte('\n')
	return out.Bytes()
}

type exportFixture struct {
	info store.Info
	doc  []byte
}

func newExportFixture(t *testing.T, pretty bool) *exportFixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.json")
	doc := []byte(exportCompact)
	if pretty {
		doc = canonical(t, doc)
	}
	atomicfiletest.WriteFile(t, path, string(doc), 0o600)
	return &exportFixture{info: store.Info{Shape: store.ShapeExport, Path: path}, doc: doc}
}

// raw returns the bytes of a record inside the document, as the reader
// hands them over.
func (f *exportFixture) raw(t *testing.T, path string) []byte {
	t.Helper()
	r := gjson.GetBytes(f.doc, path)
	if !r.Exists() {
		t.Fatalf("no %s in the fixture", path)
	}
	return []byte(r.Raw)
}

func (f *exportFixture) apply(t *testing.T, edits ...store.Edit) ([]byte, error) {
	t.Helper()
	w := newExportWriter(f.info, atomicfile.OS{})
	err := w.Apply(context.Background(), &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: edits})
	b, rerr := os.ReadFile(f.info.Path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	return b, err
}

func partIDs(doc []byte, msg int) string {
	var ids []string
	for _, p := range gjson.GetBytes(doc, "messages."+itoa(msg)+".parts").Array() {
		ids = append(ids, p.Get("id").Str)
	}
	return strings.Join(ids, ",")
}

func itoa(i int) string { return string(rune('0' + i)) }

// TestExportWriterKeepsCRLF: an export saved with Windows line endings
// keeps them on every line sessfix adds or rewrites.
func TestExportWriterKeepsCRLF(t *testing.T) {
	f := newExportFixture(t, true)
	f.doc = bytes.ReplaceAll(f.doc, []byte("\n"), []byte("\r\n"))
	atomicfiletest.WriteFile(t, f.info.Path, string(f.doc), 0o600)
	before := f.raw(t, "messages.1.parts.1")
	after := []byte(`{"id":"` + writertest.Prt3 + `","messageID":"` + writertest.MsgB + `","type":"text","text":"[user interrupted]","synthetic":true}`)
	out, err := f.apply(t,
		store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: writertest.Prt3, MessageID: writertest.MsgB, Before: before, After: after},
		store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: writertest.PrtNew, MessageID: writertest.MsgB, After: []byte(`{"id":"` + writertest.PrtNew + `","type":"text","text":"y","metadata":{"a":[1]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if lf, crlf := bytes.Count(out, []byte("\n")), bytes.Count(out, []byte("\r\n")); lf != crlf {
		t.Errorf("%d of %d line breaks lost their CR:\n%q", lf-crlf, lf, out)
	}
	if want := bytes.ReplaceAll(canonical(t, out), []byte("\n"), []byte("\r\n")); !bytes.Equal(out, want) {
		t.Errorf("edited export is not indented like its neighbours:\n%s", out)
	}
}

func TestExportWriterUpdateKeepsEveryOtherByte(t *testing.T) {
	f := newExportFixture(t, true)
	before := f.raw(t, "messages.1.parts.1")
	after := bytes.Replace(before, []byte(`"text": ""`), []byte(`"text": "[user interrupted]"`), 1)
	out, err := f.apply(t, store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: writertest.Prt3, MessageID: writertest.MsgB, Before: before, After: after})
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(f.doc, before)
	want := append(append(append([]byte{}, f.doc[:i]...), after...), f.doc[i+len(before):]...)
	if !bytes.Equal(out, want) {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestExportWriterAddsPartsInOrderAndIndented(t *testing.T) {
	for _, pretty := range []bool{true, false} {
		f := newExportFixture(t, pretty)
		// A compact body from the planner, placed first, in the middle and last.
		first := store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: "prt_00000000000200000000000001", MessageID: writertest.MsgB, After: []byte(`{"id":"prt_00000000000200000000000001","type":"reasoning","text":"x","synthetic":true}`)}
		last := store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: writertest.PrtNew, MessageID: writertest.MsgB, After: []byte(`{"id":"` + writertest.PrtNew + `","type":"text","text":"y","metadata":{"a":[]}}`)}
		out, err := f.apply(t, last, first)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := partIDs(out, 1), first.ID+","+writertest.Prt2+","+writertest.Prt3+","+writertest.PrtNew; got != want {
			t.Errorf("pretty=%v: parts = %s, want %s", pretty, got, want)
		}
		if pretty && !bytes.Equal(out, canonical(t, out)) {
			t.Errorf("added parts are not indented like their neighbours:\n%s", out)
		}
		if !pretty && bytes.Contains(out, []byte("\n")) {
			t.Errorf("a compact export became pretty:\n%s", out)
		}
	}
}

func TestExportWriterDeletesAndRekeys(t *testing.T) {
	f := newExportFixture(t, true)
	del := store.Edit{Op: store.OpDelete, Kind: store.KindPart, ID: writertest.Prt2, MessageID: writertest.MsgB, Before: f.raw(t, "messages.1.parts.0")}
	only := store.Edit{Op: store.OpQuarantine, Kind: store.KindPart, ID: writertest.Prt1, MessageID: writertest.MsgA, Before: f.raw(t, "messages.0.parts.0")}
	rk := store.Edit{Op: store.OpRekey, Kind: store.KindPart, ID: writertest.Prt3, NewID: "prt_00000000000200000000000001", MessageID: writertest.MsgB, Before: f.raw(t, "messages.1.parts.1")}
	out, err := f.apply(t, del, only, rk)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, canonical(t, out)) {
		t.Errorf("the document lost its formatting:\n%s", out)
	}
	if got := partIDs(out, 0); got != "" {
		t.Errorf("message A parts = %q, want none", got)
	}
	if got := partIDs(out, 1); got != rk.NewID {
		t.Errorf("message B parts = %q, want only the re-keyed part", got)
	}
	if got := gjson.GetBytes(out, "messages.1.parts.0.text").Raw; got != `""` {
		t.Errorf("re-keyed part lost its body: text = %s", got)
	}
}

func TestExportWriterMessageOps(t *testing.T) {
	f := newExportFixture(t, true)
	rk := store.Edit{Op: store.OpRekey, Kind: store.KindMessage, ID: writertest.MsgA, NewID: writertest.MsgNew, Before: f.raw(t, "messages.0.info")}
	add := store.Edit{Op: store.OpAdd, Kind: store.KindMessage, ID: "msg_0000000000030000000000000c", After: []byte(`{"id":"msg_0000000000030000000000000c","role":"user","time":{"created":1500}}`)}
	del := store.Edit{Op: store.OpDelete, Kind: store.KindMessage, ID: writertest.MsgB, Before: f.raw(t, "messages.1.info")}
	out, err := f.apply(t, rk, add, del)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, canonical(t, out)) {
		t.Errorf("the document lost its formatting:\n%s", out)
	}
	var ids []string
	for _, m := range gjson.GetBytes(out, "messages").Array() {
		ids = append(ids, m.Get("info.id").Str)
	}
	if got, want := strings.Join(ids, ","), writertest.MsgNew+",msg_0000000000030000000000000c"; got != want {
		t.Fatalf("messages = %s, want %s (re-keyed, added by time, deleted with its parts)", got, want)
	}
	if got := partIDs(out, 0); got != writertest.Prt1 {
		t.Errorf("re-keyed message's parts = %q, want them kept", got)
	}
}

func TestExportWriterRefusesChangedRecord(t *testing.T) {
	f := newExportFixture(t, true)
	up := store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: writertest.Prt3, MessageID: writertest.MsgB, Before: f.raw(t, "messages.1.parts.1"), After: []byte(`{}`)}
	stale := store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: writertest.Prt1, MessageID: writertest.MsgA, Before: []byte(`{"old":1}`), After: []byte(`{}`)}
	out, err := f.apply(t, up, stale)
	if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), writertest.Prt1) {
		t.Fatalf("err = %v, want store.ErrChanged naming %s", err, writertest.Prt1)
	}
	if !bytes.Equal(out, f.doc) {
		t.Fatal("a refused change set changed the export file")
	}
}

// TestExportWriterRefusesAPartChangedAfterTheBackup: deleting a message
// takes its parts along; a part edited between the backup and the write
// must not be lost.
func TestExportWriterRefusesAPartChangedAfterTheBackup(t *testing.T) {
	f := newExportFixture(t, true)
	w := newExportWriter(f.info, atomicfile.OS{})
	cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{{Op: store.OpDelete, Kind: store.KindMessage, ID: writertest.MsgB, Before: f.raw(t, "messages.1.info")}}}
	writertest.BackedUp(t, w, cs)
	changed := bytes.Replace(f.doc, []byte(`"text": ""`), []byte(`"text": "typed later"`), 1)
	atomicfiletest.WriteFile(t, f.info.Path, string(changed), 0o600)
	err := w.Apply(context.Background(), cs)
	if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), f.info.Path+" was modified") {
		t.Fatalf("err = %v, want store.ErrChanged naming the export file", err)
	}
	if got := atomicfiletest.ReadFile(t, f.info.Path); got != string(changed) {
		t.Error("a refused change set changed the export file")
	}
}

func TestExportWriterCrashBeforeRename(t *testing.T) {
	f := newExportFixture(t, true)
	dir := filepath.Dir(f.info.Path)
	before := atomicfiletest.TreeState(t, dir)
	w := newExportWriter(f.info, &atomicfiletest.FaultOps{RenameErr: errors.New("killed")})
	up := store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: writertest.Prt3, MessageID: writertest.MsgB, Before: f.raw(t, "messages.1.parts.1"), After: []byte(`{}`)}
	err := w.Apply(context.Background(), &store.ChangeSet{Store: f.info, Edits: []store.Edit{up}})
	if err == nil || !strings.Contains(err.Error(), "left as it was") {
		t.Fatalf("err = %v", err)
	}
	atomicfiletest.AssertSameTree(t, "crash before rename", before, atomicfiletest.TreeState(t, dir))
	if left := atomicfiletest.TempLeft(t, dir); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

// TestExportWriterNamedRelatively: an export file fixed by a relative path
// is backed up under its absolute path, so undo (which opens the writer
// from the backup's absolute store path, maybe from another directory)
// restores it.
func TestExportWriterNamedRelatively(t *testing.T) {
	f := newExportFixture(t, true)
	t.Chdir(filepath.Dir(f.info.Path))
	rel := store.Info{Shape: store.ShapeExport, Path: filepath.Base(f.info.Path)}
	w, err := Shape{}.OpenWriter(rel, store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	targets, err := w.Targets(context.Background(), &store.ChangeSet{Store: rel, SessionID: writertest.Ses, Edits: []store.Edit{{Op: store.OpUpdate, Kind: store.KindSession, ID: writertest.Ses, After: []byte(`{}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 1 || targets[0].Path != f.info.Path {
		t.Fatalf("targets %v, want the file's absolute path %s", targets, f.info.Path)
	}
	images, err := w.Read(context.Background(), targets)
	if err != nil {
		t.Fatal(err)
	}
	atomicfiletest.WriteFile(t, f.info.Path, `{"changed":true}`, 0o600)
	t.Chdir(t.TempDir())
	undo, err := Shape{}.OpenWriter(store.Info{Shape: store.ShapeExport, Path: f.info.Path}, store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := undo.Restore(context.Background(), images); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if got := atomicfiletest.ReadFile(t, f.info.Path); got != string(f.doc) {
		t.Errorf("restored file = %.60q, want the original", got)
	}
}

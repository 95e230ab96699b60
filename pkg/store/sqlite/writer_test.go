package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/writertest"
)

// The v1 tables as OpenCode 1.2–1.18 creates them (the columns sessfix
// touches, with the same keys and cascades).
const testDDL = `
CREATE TABLE session (id TEXT PRIMARY KEY, title TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL,
  FOREIGN KEY (session_id) REFERENCES session(id) ON DELETE CASCADE);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL,
  FOREIGN KEY (message_id) REFERENCES message(id) ON DELETE CASCADE);
CREATE INDEX message_session_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_idx ON part (message_id, id);
`

var testNow = time.Date(2026, 11, 21, 15, 30, 0, 0, time.UTC)

type sqliteFixture struct {
	info store.Info
	data map[string]string // id → data column
}

func newSQLiteFixture(t *testing.T) *sqliteFixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "opencode.db")
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := &sqliteFixture{info: store.Info{Shape: store.ShapeSQLite, Path: path}, data: map[string]string{
		writertest.MsgA: `{"role":"user","time":{"created":1000}}`,
		writertest.MsgB: `{"role":"assistant","time":{"created":2000},"unknown":[1,2]}`,
		writertest.Prt1: `{"type":"text","text":"hi"}`,
		writertest.Prt2: `{"type":"reasoning","text":""}`,
		writertest.Prt3: `{"type":"text","text":""}`,
	}}
	stmts := []string{testDDL,
		fmt.Sprintf(`INSERT INTO session VALUES ('%s', 't', 1, 1)`, writertest.Ses),
		fmt.Sprintf(`INSERT INTO message VALUES ('%s', '%s', 1000, 1001, '%s')`, writertest.MsgA, writertest.Ses, f.data[writertest.MsgA]),
		fmt.Sprintf(`INSERT INTO message VALUES ('%s', '%s', 2000, 2001, '%s')`, writertest.MsgB, writertest.Ses, f.data[writertest.MsgB]),
		fmt.Sprintf(`INSERT INTO part VALUES ('%s', '%s', '%s', 1100, 1101, '%s')`, writertest.Prt1, writertest.MsgA, writertest.Ses, f.data[writertest.Prt1]),
		fmt.Sprintf(`INSERT INTO part VALUES ('%s', '%s', '%s', 2100, 2101, '%s')`, writertest.Prt2, writertest.MsgB, writertest.Ses, f.data[writertest.Prt2]),
		fmt.Sprintf(`INSERT INTO part VALUES ('%s', '%s', '%s', 2200, 2201, '%s')`, writertest.Prt3, writertest.MsgB, writertest.Ses, f.data[writertest.Prt3]),
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return f
}

func (f *sqliteFixture) edit(op store.Op, kind store.Kind, id, msg string) store.Edit {
	e := store.Edit{Op: op, Kind: kind, ID: id, SessionID: writertest.Ses, MessageID: msg}
	if op != store.OpAdd {
		e.Before = []byte(f.data[id])
	}
	return e
}

func (f *sqliteFixture) writer(t *testing.T, busy time.Duration) *sqliteWriter {
	t.Helper()
	w, err := openSQLiteWriter(f.info, store.WriteOptions{BusyTimeout: busy, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// dumpDB renders every message and part row, every column, in id order.
func dumpDB(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b strings.Builder
	for _, q := range []string{
		`SELECT 'message', rowid, id, session_id, '', time_created, time_updated, typeof(data) || ' ' || data FROM message ORDER BY id`,
		`SELECT 'part', rowid, id, session_id, message_id, time_created, time_updated, typeof(data) || ' ' || data FROM part ORDER BY id`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var tbl, id, ses, msg, data string
			var rowid, c, u int64
			if err := rows.Scan(&tbl, &rowid, &id, &ses, &msg, &c, &u, &data); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s #%d %s ses=%s msg=%s c=%d u=%d %s\n", tbl, rowid, id, ses, msg, c, u, data)
		}
		rows.Close()
	}
	return b.String()
}

// assertSameDB fails the test when the message and part rows of the
// database at path are not the dump before.
func assertSameDB(t *testing.T, what, path, before string) {
	t.Helper()
	if got := dumpDB(t, path); got != before {
		t.Fatalf("%s: the database differs:\n%s\nwant:\n%s", what, got, before)
	}
}

func row(t *testing.T, path, table, id string) (data string, updated int64, msg string, ok bool) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := `SELECT data, time_updated, '' FROM message WHERE id = ?`
	if table == "part" {
		q = `SELECT data, time_updated, message_id FROM part WHERE id = ?`
	}
	err = db.QueryRow(q, id).Scan(&data, &updated, &msg)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return data, updated, msg, true
}

func TestSQLiteWriterAppliesEveryOp(t *testing.T) {
	ctx := context.Background()
	f := newSQLiteFixture(t)
	before := dumpDB(t, f.info.Path)
	w := f.writer(t, 0)

	up := f.edit(store.OpUpdate, store.KindPart, writertest.Prt3, writertest.MsgB)
	up.After = []byte(`{"type":"text","text":"[user interrupted]","synthetic":true}`)
	add := f.edit(store.OpAdd, store.KindPart, writertest.PrtNew, writertest.MsgB)
	add.After = []byte(`{"type":"text","text":"added"}`)
	add.Created = 2300
	rkp := f.edit(store.OpRekey, store.KindPart, writertest.Prt2, writertest.MsgB)
	rkp.NewID = writertest.PrtRk
	del := f.edit(store.OpDelete, store.KindPart, writertest.Prt1, writertest.MsgA)
	rkm := f.edit(store.OpRekey, store.KindMessage, writertest.MsgB, "")
	rkm.NewID = writertest.MsgNew
	cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{up, add, rkp, del, rkm}}

	_, images := writertest.ApplyBackedUp(t, w, cs)
	ms := testNow.UnixMilli()
	if d, u, msg, ok := row(t, f.info.Path, "part", writertest.Prt3); !ok || d != string(up.After) || u != ms || msg != writertest.MsgNew {
		t.Errorf("updated part = %q updated=%d message=%s (ok %v), want the new data, time_updated %d and the re-keyed message", d, u, msg, ok, ms)
	}
	if d, _, msg, ok := row(t, f.info.Path, "part", writertest.PrtNew); !ok || d != string(add.After) || msg != writertest.MsgNew {
		t.Errorf("added part = %q in %s (ok %v)", d, msg, ok)
	}
	if cs.Edits[1].Loc.Table != "part" || cs.Edits[1].Loc.RowID == 0 {
		t.Errorf("added part location = %+v, want its table and rowid", cs.Edits[1].Loc)
	}
	if _, _, _, ok := row(t, f.info.Path, "part", writertest.Prt2); ok {
		t.Error("re-keyed part still under its old id")
	}
	if d, _, _, ok := row(t, f.info.Path, "part", writertest.PrtRk); !ok || d != f.data[writertest.Prt2] {
		t.Errorf("re-keyed part = %q (ok %v), want its data unchanged", d, ok)
	}
	if _, _, _, ok := row(t, f.info.Path, "part", writertest.Prt1); ok {
		t.Error("deleted part still there")
	}
	if _, _, _, ok := row(t, f.info.Path, "message", writertest.MsgB); ok {
		t.Error("re-keyed message still under its old id")
	}
	if d, u, _, ok := row(t, f.info.Path, "message", writertest.MsgNew); !ok || d != f.data[writertest.MsgB] || u != ms {
		t.Errorf("re-keyed message = %q updated=%d (ok %v)", d, u, ok)
	}

	if err := w.Restore(ctx, images); err != nil {
		t.Fatal(err)
	}
	assertSameDB(t, "after restore", f.info.Path, before)
}

func TestSQLiteWriterDeleteMessageCascadesAndRestores(t *testing.T) {
	ctx := context.Background()
	f := newSQLiteFixture(t)
	before := dumpDB(t, f.info.Path)
	w := f.writer(t, 0)
	cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{f.edit(store.OpQuarantine, store.KindMessage, writertest.MsgB, "")}}
	targets, images := writertest.ApplyBackedUp(t, w, cs)
	if len(targets) != 3 {
		t.Fatalf("targets = %v, want the message and its two parts", targets)
	}
	for _, id := range []string{writertest.Prt2, writertest.Prt3} {
		if _, _, _, ok := row(t, f.info.Path, "part", id); ok {
			t.Errorf("part %s survived its message's removal", id)
		}
	}
	if err := w.Restore(ctx, images); err != nil {
		t.Fatal(err)
	}
	assertSameDB(t, "after restore", f.info.Path, before)
}

func TestSQLiteRestoreChecksExpectInsideItsTransaction(t *testing.T) {
	ctx := context.Background()
	f := newSQLiteFixture(t)
	original := dumpDB(t, f.info.Path)
	w := f.writer(t, 0)
	cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{f.edit(store.OpQuarantine, store.KindMessage, writertest.MsgB, "")}}
	targets, images := writertest.ApplyBackedUp(t, w, cs)
	writertest.ExpectNow(t, w, targets, images) // the state an undo checked: the rows are gone
	// OpenCode writes one of those rows again after the check.
	db, _ := sql.Open("sqlite", f.info.Path)
	_, err := db.Exec(`INSERT INTO part VALUES (?, ?, ?, 2300, 2300, '{"type":"text","text":"late"}')`, writertest.Prt3, writertest.MsgA, writertest.Ses)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	changed := dumpDB(t, f.info.Path)
	err = w.Restore(ctx, images)
	if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), writertest.Prt3) || !strings.Contains(err.Error(), "was created") {
		t.Fatalf("err = %v, want store.ErrChanged naming the row created after the check", err)
	}
	assertSameDB(t, "after a refused restore", f.info.Path, changed)

	// Without the late row the expectation holds and the restore runs.
	db, _ = sql.Open("sqlite", f.info.Path)
	_, err = db.Exec(`DELETE FROM part WHERE id = ?`, writertest.Prt3)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Restore(ctx, images); err != nil {
		t.Fatal(err)
	}
	assertSameDB(t, "after restore", f.info.Path, original)
}

func TestSQLiteRestoreKeepsABlob(t *testing.T) {
	f := newSQLiteFixture(t)
	db, _ := sql.Open("sqlite", f.info.Path)
	_, err := db.Exec(`UPDATE part SET data = CAST(data AS BLOB) WHERE id = ?`, writertest.Prt3)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := dumpDB(t, f.info.Path)
	w := f.writer(t, 0)
	_, images := writertest.ApplyBackedUp(t, w, &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{f.edit(store.OpQuarantine, store.KindPart, writertest.Prt3, writertest.MsgB)}})
	if err := w.Restore(context.Background(), images); err != nil {
		t.Fatal(err)
	}
	assertSameDB(t, "after restore", f.info.Path, before)
}

func TestSQLiteWriterRefusesChangedRow(t *testing.T) {
	f := newSQLiteFixture(t)
	before := dumpDB(t, f.info.Path)
	w := f.writer(t, 0)
	up := f.edit(store.OpUpdate, store.KindPart, writertest.Prt3, writertest.MsgB)
	up.After = []byte(`{"type":"text","text":"x"}`)
	stale := f.edit(store.OpUpdate, store.KindMessage, writertest.MsgB, "")
	stale.Before = []byte(`{"role":"assistant"}`)
	stale.After = []byte(`{"role":"assistant","error":{}}`)
	err := w.Apply(context.Background(), &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{up, stale}})
	if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), writertest.MsgB) || !strings.Contains(err.Error(), f.info.Path) {
		t.Fatalf("err = %v, want store.ErrChanged naming message %s and the database", err, writertest.MsgB)
	}
	assertSameDB(t, "after a refused change set", f.info.Path, before)
	// A failing edit late in the set undoes the earlier ones too.
	dup := f.edit(store.OpAdd, store.KindPart, writertest.Prt1, writertest.MsgA)
	dup.After = []byte(`{}`)
	err = w.Apply(context.Background(), &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{up, dup}})
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("err = %v, want a refusal to add an existing row", err)
	}
	assertSameDB(t, "after a change set that failed late", f.info.Path, before)
}

func TestSQLiteWriterLockedDatabase(t *testing.T) {
	f := newSQLiteFixture(t)
	before := dumpDB(t, f.info.Path)
	// Another program (OpenCode) holds a write transaction.
	other, err := sql.Open("sqlite", f.info.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	w := f.writer(t, 50*time.Millisecond)
	up := f.edit(store.OpUpdate, store.KindPart, writertest.Prt3, writertest.MsgB)
	up.After = []byte(`{"type":"text","text":"x"}`)
	err = w.Apply(context.Background(), &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{up}})
	var busy *store.BusyError
	if !errors.Is(err, store.ErrLocked) || !errors.As(err, &busy) || !strings.Contains(err.Error(), f.info.Path) {
		t.Fatalf("err = %v, want a BusyError naming %s", err, f.info.Path)
	}
	if _, err := conn.ExecContext(context.Background(), `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	assertSameDB(t, "after a write refused by the lock", f.info.Path, before)
	// Once released, the same change set applies.
	if err := w.Apply(context.Background(), &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{up}}); err != nil {
		t.Fatalf("after the lock was released: %v", err)
	}
}

func TestSQLiteWriterRefusesOpenCode2(t *testing.T) {
	f := newSQLiteFixture(t)
	db, _ := sql.Open("sqlite", f.info.Path)
	if _, err := db.Exec(`CREATE TABLE session_v2 (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := openSQLiteWriter(f.info, store.WriteOptions{})
	var ro *store.ReadOnlyError
	if !errors.Is(err, store.ErrUnsupported) || !errors.As(err, &ro) || ro.Path != f.info.Path || !strings.Contains(err.Error(), "an OpenCode 2 database") {
		t.Fatalf("err = %v, want the *store.ReadOnlyError of an OpenCode 2 database", err)
	}
}

func TestSQLiteWriterNeverCreatesADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	if _, err := openSQLiteWriter(store.Info{Shape: store.ShapeSQLite, Path: path}, store.WriteOptions{}); err == nil {
		t.Fatal("opened a database that does not exist")
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a database file was created")
	}
}

func TestSQLiteWriterRefusesWhatTheBackupMissed(t *testing.T) {
	ctx := context.Background()
	f := newSQLiteFixture(t)
	w := f.writer(t, 0)
	cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{f.edit(store.OpDelete, store.KindMessage, writertest.MsgB, "")}}
	if _, err := w.Targets(ctx, cs); err != nil {
		t.Fatal(err)
	}
	db, _ := sql.Open("sqlite", f.info.Path)
	_, err := db.Exec(`INSERT INTO part VALUES (?, ?, ?, 2300, 2300, '{"type":"text","text":"late"}')`, writertest.PrtNew, writertest.MsgB, writertest.Ses)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := dumpDB(t, f.info.Path)
	err = w.Apply(ctx, cs)
	if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), writertest.PrtNew) {
		t.Fatalf("err = %v, want store.ErrChanged naming the part the backup missed", err)
	}
	assertSameDB(t, "after a change set the backup did not cover", f.info.Path, before)
}

func TestSQLiteWriterRefusesAPartChangedAfterTheBackup(t *testing.T) {
	ctx := context.Background()
	f := newSQLiteFixture(t)
	w := f.writer(t, 0)
	cs := &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{f.edit(store.OpDelete, store.KindMessage, writertest.MsgB, "")}}
	writertest.BackedUp(t, w, cs)
	// OpenCode rewrites a part the delete takes along, after the backup.
	db, _ := sql.Open("sqlite", f.info.Path)
	_, err := db.Exec(`UPDATE part SET data = '{"type":"text","text":"late edit"}' WHERE id = ?`, writertest.Prt3)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := dumpDB(t, f.info.Path)
	err = w.Apply(ctx, cs)
	if !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), writertest.Prt3) || !strings.Contains(err.Error(), "was modified") {
		t.Fatalf("err = %v, want store.ErrChanged naming the part modified after the backup", err)
	}
	assertSameDB(t, "after a part changed since the backup", f.info.Path, before)
}

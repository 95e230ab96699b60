package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"

	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/sqlite"
	"github.com/sessfix/sessfix/pkg/store/writertest"
)

// realSession is a session of the database OpenCode 1.18.33 recorded
// (testdata/real), with two messages.
const realSession = "ses_e012acd97ffeUavLGQWWTi4jHW"

// realDB copies the recorded 1.18.33 database into a temporary directory.
func realDB(t testing.TB) string { return realstore.Copy(t, ocrelease.V1_18).Path }

// openReal opens the reader and the writer of a copy of the recorded
// database.
func openReal(t *testing.T) (string, store.Store, store.Writer) {
	t.Helper()
	path := realDB(t)
	st, err := sqlite.Shape{}.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w, err := sqlite.Shape{}.OpenWriter(st.Info(), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return path, st, w
}

// dumpAll renders every row of every table of the database at path, every
// column with its SQLite type, rowids included, in rowid order.
func dumpAll(t testing.TB, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, tbl := range tables {
		rows, err := db.Query(`SELECT rowid AS "rowid", * FROM "` + tbl + `" ORDER BY rowid`)
		if err != nil {
			// a WITHOUT ROWID table
			rows, err = db.Query(`SELECT * FROM "` + tbl + `"`)
			if err != nil {
				t.Fatal(err)
			}
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s:", tbl)
			for i, v := range vals {
				fmt.Fprintf(&b, " %s=%T(%v)", cols[i], v, v)
			}
			b.WriteByte('\n')
		}
		rows.Close()
	}
	return b.String()
}

func TestSQLiteWriterSessionContract(t *testing.T) {
	var path string
	writertest.SessionContract(t, writertest.SessionCase{
		Session: realSession,
		Open: func(t *testing.T) (store.Store, store.Writer) {
			p, st, w := openReal(t)
			path = p
			return st, w
		},
		Snapshot: func(t *testing.T) string { return dumpAll(t, path) },
		NewBody: func(id string) []byte {
			// The recorded session's row, as a new session.
			st, err := sqlite.Shape{}.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			body := writertest.LoadSession(t, st, realSession).Info.Raw
			body, _ = sjson.SetBytes(body, "id", id)
			body, _ = sjson.SetBytes(body, "slug", "new-session")
			body, _ = sjson.SetBytes(body, "title", "Forked session")
			return body
		},
		Created:    func(rec *store.Record) int64 { return rec.Get("time_created").Int() },
		Unstorable: "tokens",
		Deletes:    true,
	})
}

// sessionEdit is an edit of the recorded session's row, from its body as
// the reader returns it to the body change makes of it.
func sessionEdit(t *testing.T, st store.Store, op store.Op, change func([]byte) []byte) store.Edit {
	t.Helper()
	info := writertest.LoadSession(t, st, realSession).Info
	e := store.Edit{Op: op, Kind: store.KindSession, ID: realSession, SessionID: realSession, Loc: info.Loc, Before: info.Raw}
	if change != nil {
		e.After = change(append([]byte{}, info.Raw...))
	}
	return e
}

func set(path string, v any) func([]byte) []byte {
	return func(b []byte) []byte {
		out, _ := sjson.SetBytes(b, path, v)
		return out
	}
}

// An update writes the columns whose value changed and nothing else (not
// time_updated either), and the reader reads back the new body.
func TestSQLiteSessionUpdateWritesOnlyWhatChanged(t *testing.T) {
	path, st, w := openReal(t)
	before := dumpAll(t, path)
	model := `{"id":"claude-haiku-4-5","providerID":"anthropic","variant":"default"}`
	e := sessionEdit(t, st, store.OpUpdate, set("model", model))
	writertest.ApplyBackedUp(t, w, &store.ChangeSet{SessionID: realSession, Edits: []store.Edit{e}})
	if got := writertest.LoadSession(t, st, realSession).Info.Raw; string(got) != string(e.After) {
		t.Fatalf("the session reads back as\n%s\nwant\n%s", got, e.After)
	}
	var changed []string
	after := strings.Split(dumpAll(t, path), "\n")
	for i, line := range strings.Split(before, "\n") {
		if line != after[i] {
			changed = append(changed, after[i])
		}
	}
	if len(changed) != 1 || !strings.Contains(changed[0], "model=string("+model+")") ||
		strings.Replace(changed[0], "model=string("+model+")", "", 1) != strings.Replace(findLine(before, realSession), `model=string({"id":"claude-sonnet-4-5","providerID":"anthropic","variant":"default"})`, "", 1) {
		t.Fatalf("the update changed\n%s", strings.Join(changed, "\n"))
	}
}

func findLine(dump, id string) string {
	for _, l := range strings.Split(dump, "\n") {
		if strings.HasPrefix(l, "session:") && strings.Contains(l, "id=string("+id+")") {
			return l
		}
	}
	return ""
}

// Updates the session table cannot store as given are refused before
// anything is written, each with what is wrong.
func TestSQLiteSessionUpdateRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		op     store.Op
		change func([]byte) []byte
		says   string
	}{
		{"a field without a column", store.OpUpdate, set("tokens", map[string]int{"input": 1}), `field "tokens" has no column`},
		{"a dropped column", store.OpUpdate, func(b []byte) []byte { out, _ := sjson.DeleteBytes(b, "agent"); return out }, `drops field "agent"`},
		{"an object for a JSON column", store.OpUpdate, set("model", map[string]string{"id": "x"}), `field "model" holds {`},
		{"a number for a text column", store.OpUpdate, set("title", 7), `field "title" holds a number`},
		{"a string for a number column", store.OpUpdate, set("cost", "0.5"), `field "cost" holds a string`},
		{"a new id", store.OpUpdate, set("id", "ses_e012acd97ffeUavLGQWWTi4jHX"), "id cannot change"},
		{"a project without a row", store.OpUpdate, set("project_id", "a0b1c2d3"), "project a0b1c2d3 has no project row"},
		{"a re-key", store.OpRekey, nil, "does not re-key session rows"},
		{"a quarantine", store.OpQuarantine, nil, "does not quarantine session rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, st, w := openReal(t)
			before := dumpAll(t, path)
			e := sessionEdit(t, st, c.op, c.change)
			if c.op == store.OpRekey {
				e.NewID = "ses_e012acd97ffeUavLGQWWTi4jHX"
			}
			ctx := context.Background()
			cs := &store.ChangeSet{SessionID: realSession, Edits: []store.Edit{e}}
			err := func() error {
				targets, err := w.Targets(ctx, cs)
				if err != nil {
					return err
				}
				if _, err := w.Read(ctx, targets); err != nil {
					return err
				}
				return w.Apply(ctx, cs)
			}()
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err = %v, want one saying %q", err, c.says)
			}
			if after := dumpAll(t, path); after != before {
				t.Fatal("a refused update changed the database")
			}
		})
	}
}

// A session row is deleted only together with every message of it, and
// only when no other table holds rows of it; undone, every row is back.
func TestSQLiteSessionDelete(t *testing.T) {
	ctx := context.Background()
	path, st, w := openReal(t)
	before := dumpAll(t, path)
	sess := writertest.LoadSession(t, st, realSession)
	del := sessionEdit(t, st, store.OpDelete, nil)
	deletes := []store.Edit{del}
	for _, m := range sess.Messages {
		deletes = append(deletes, store.Edit{Op: store.OpDelete, Kind: store.KindMessage, ID: m.ID, SessionID: realSession, Loc: m.Loc, Before: m.Raw})
	}
	refused := func(cs *store.ChangeSet, says string) {
		t.Helper()
		_, err := w.Targets(ctx, cs)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Fatalf("err = %v, want one saying %q", err, says)
		}
		if after := dumpAll(t, path); after != before {
			t.Fatal("a refused delete changed the database")
		}
	}
	refused(&store.ChangeSet{SessionID: realSession, Edits: deletes[:len(deletes)-1]}, "its message "+sess.Messages[len(sess.Messages)-1].ID+" stays")

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO todo (session_id, content, status, priority, position, time_created, time_updated) VALUES (?, 'x', 'pending', 'high', 0, 1, 1)`, realSession); err != nil {
		t.Fatal(err)
	}
	before = dumpAll(t, path)
	refused(&store.ChangeSet{SessionID: realSession, Edits: deletes}, "table todo has 1 rows of it")
	if _, err := db.Exec(`DELETE FROM todo`); err != nil {
		t.Fatal(err)
	}
	before = dumpAll(t, path)

	cs := &store.ChangeSet{SessionID: realSession, Edits: deletes}
	targets, images := writertest.ApplyBackedUp(t, w, cs)
	for _, q := range []string{`SELECT count(*) FROM session WHERE id = ?`, `SELECT count(*) FROM message WHERE session_id = ?`, `SELECT count(*) FROM part WHERE session_id = ?`} {
		var n int
		if err := db.QueryRow(q, realSession).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s = %d (%v) after the delete", q, n, err)
		}
	}
	writertest.ExpectNow(t, w, targets, images)
	if err := w.Restore(ctx, images); err != nil {
		t.Fatal(err)
	}
	if after := dumpAll(t, path); after != before {
		t.Fatalf("after the restore:\n%s\nwant:\n%s", after, before)
	}
}

// Undoing an added session refuses, and restores nothing, once OpenCode
// has written to the session since.
func TestSQLiteRestoreKeepsAnAddedSessionInUse(t *testing.T) {
	ctx := context.Background()
	path, st, w := openReal(t)
	id := store.NewSessionID(time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC))
	body := set("id", id)(writertest.LoadSession(t, st, realSession).Info.Raw)
	cs := &store.ChangeSet{SessionID: id, Edits: []store.Edit{{Op: store.OpAdd, Kind: store.KindSession, ID: id, After: body}}}
	targets, images := writertest.ApplyBackedUp(t, w, cs)
	storeExec(t, path, `INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_e012acd97ffeUavLGQWWTi4jHW', ?, 1, 1, '{}')`, id)
	used := dumpAll(t, path)
	writertest.ExpectNow(t, w, targets, images)
	err := w.Restore(ctx, images)
	if err == nil || !strings.Contains(err.Error(), "which the run created, is in use since") {
		t.Fatalf("restore = %v, want a refusal", err)
	}
	if after := dumpAll(t, path); after != used {
		t.Fatal("a refused restore changed the database")
	}
}

func storeExec(t *testing.T, path, q string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}

// A new session with its messages and parts in one change set, as a fork
// writes one: the rows land as planned, in one transaction, and undo
// removes every one of them.
func TestSQLiteWriterAddsASessionWithItsHistory(t *testing.T) {
	ctx := context.Background()
	path, st, w := openReal(t)
	before := dumpAll(t, path)
	src := writertest.LoadSession(t, st, realSession)
	created := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	id := store.NewSessionID(created)
	body := set("id", id)(src.Info.Raw)
	// The messages first: the session row's foreign key is checked at the
	// commit, so a planner may list the session last.
	var edits []store.Edit
	var msgID, prtID string
	mint := func(prefix, after string) string {
		id, err := store.MintBetween(prefix, after, "", created)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	for i, m := range src.Messages {
		msgID = mint(store.PrefixMessage, msgID)
		edits = append(edits, store.Edit{Op: store.OpAdd, Kind: store.KindMessage, ID: msgID, SessionID: id, After: m.Raw, Created: created.UnixMilli() + int64(i)})
		for _, p := range m.Parts {
			prtID = mint(store.PrefixPart, prtID)
			edits = append(edits, store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: prtID, SessionID: id, MessageID: msgID, After: p.Raw, Created: created.UnixMilli() + int64(i)})
		}
	}
	edits = append(edits, store.Edit{Op: store.OpAdd, Kind: store.KindSession, ID: id, SessionID: id, After: body, Created: created.UnixMilli()})
	cs := &store.ChangeSet{SessionID: id, Edits: edits}
	targets, images := writertest.ApplyBackedUp(t, w, cs)
	fork := writertest.LoadSession(t, st, id)
	if len(fork.Messages) != len(src.Messages) || fork.Info.Get("time_created").Int() != created.UnixMilli() {
		t.Fatalf("the new session has %d messages (want %d), created %d", len(fork.Messages), len(src.Messages), fork.Info.Get("time_created").Int())
	}
	for i, m := range fork.Messages {
		if len(m.Parts) != len(src.Messages[i].Parts) || string(m.Raw) != string(src.Messages[i].Raw) {
			t.Errorf("message %d of the new session differs from its source", i)
		}
	}
	writertest.ExpectNow(t, w, targets, images)
	if err := w.Restore(ctx, images); err != nil {
		t.Fatal(err)
	}
	if after := dumpAll(t, path); after != before {
		t.Fatalf("after undoing the new session:\n%s\nwant:\n%s", after, before)
	}
}

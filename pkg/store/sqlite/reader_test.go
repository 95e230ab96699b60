package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/sqlite"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

const sqlSession = "ses_7ffffffffff0dddddddddddddd"

func sqliteFixture() *storetest.Fixture {
	return &storetest.Fixture{ID: sqlSession, Title: "db", Messages: []storetest.Message{
		{ID: "msg_000000000001000000000000aa", Body: json.RawMessage(`{"role":"user","time":{"created":1000}}`),
			Parts: []storetest.Part{{ID: "prt_000000000001000000000000aa", Body: json.RawMessage(`{"type":"text","text":"a"}`)}}},
	}}
}

// otherConn opens a connection of its own to the database, as OpenCode holds
// one, and runs stmts on it; a transaction they leave open is rolled back
// when the test ends.
func otherConn(t *testing.T, dsn string, stmts ...string) *sql.Conn {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.ExecContext(ctx, "ROLLBACK")
		conn.Close()
	})
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return conn
}

func TestSQLiteMessageOrderIsTimeThenID(t *testing.T) {
	path := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), sqliteFixture())
	// Ids against time: b is older than a by id but newer by time; c and d
	// share a time and are ordered by id.
	storetest.ExecSQL(t, path,
		`INSERT INTO message VALUES ('msg_000000000000100000000000bb', '`+sqlSession+`', 3000, 3000, '{"role":"assistant"}')`,
		`INSERT INTO message VALUES ('msg_000000000009000000000000dd', '`+sqlSession+`', 2000, 2000, '{"role":"user","time":{"created":1}}')`,
		`INSERT INTO message VALUES ('msg_000000000008000000000000cc', '`+sqlSession+`', 2000, 2000, '{"role":"user"}')`,
	)
	s := storetest.Load(t, storetest.OpenOne(t, path), sqlSession)
	got := strings.Join(storetest.MessageIDs(s), " ")
	want := "msg_000000000001000000000000aa msg_000000000008000000000000cc msg_000000000009000000000000dd msg_000000000000100000000000bb"
	if got != want {
		t.Fatalf("order %s\nwant  %s", got, want)
	}
	if c := s.Message("msg_000000000009000000000000dd").Created; c != 2000 {
		t.Errorf("created %d, want the time_created column 2000", c)
	}
}

func TestSQLiteOrphansAndMismatches(t *testing.T) {
	path := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), sqliteFixture())
	storetest.ExecSQL(t, path,
		`PRAGMA foreign_keys = OFF`,
		// A part whose message does not exist, naming this session.
		`INSERT INTO part VALUES ('prt_000000000002000000000000aa', 'msg_00000000000f000000000000zz', '`+sqlSession+`', 1, 1, '{"type":"text"}')`,
		// A part under this session's message whose session_id differs.
		`INSERT INTO part VALUES ('prt_000000000003000000000000aa', 'msg_000000000001000000000000aa', 'ses_other', 1, 1, '{"type":"text"}')`,
		// Messages of a session without a session row.
		`INSERT INTO message VALUES ('msg_000000000004000000000000aa', 'ses_norow', 5, 7, '{"role":"user"}')`,
		// A part whose message and session exist nowhere.
		`INSERT INTO part VALUES ('prt_000000000005000000000000aa', 'msg_gone', 'ses_ghost', 1, 9, '{"type":"text"}')`,
	)
	st := storetest.OpenOne(t, path)
	refs, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range refs {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); got != "ses_7ffffffffff0dddddddddddddd ses_ghost ses_norow" {
		t.Fatalf("listed %s", got)
	}

	s := storetest.Load(t, st, sqlSession)
	if len(s.Orphans) != 1 || s.Orphans[0].ID != "prt_000000000002000000000000aa" || s.Orphans[0].MessageID != "msg_00000000000f000000000000zz" {
		t.Errorf("orphans %v", s.Orphans)
	}
	m := s.Messages[0]
	if len(m.Parts) != 2 || m.Parts[1].ID != "prt_000000000003000000000000aa" || m.Parts[1].SessionID != "ses_other" || m.Parts[0].SessionID != sqlSession {
		t.Errorf("parts of %s: %+v", m.ID, m.Parts)
	}
	if s.Info == nil || s.Info.Loc.Table != "session" || s.Info.Get("title").String() != "db" || s.Info.Get("project_id").String() != storetest.ProjectID {
		t.Errorf("session record %v: %s", s.Info, s.Info.Raw)
	}

	norow := storetest.Load(t, st, "ses_norow")
	if !norow.InfoMissing || len(norow.Messages) != 1 || norow.Messages[0].Modified.UnixMilli() != 7 {
		t.Errorf("ses_norow: infoMissing %v messages %v", norow.InfoMissing, norow.Messages)
	}
	ghost := storetest.Load(t, st, "ses_ghost")
	if !ghost.InfoMissing || len(ghost.Orphans) != 1 || ghost.Orphans[0].ID != "prt_000000000005000000000000aa" {
		t.Errorf("ses_ghost: infoMissing %v orphans %v", ghost.InfoMissing, ghost.Orphans)
	}
	// The part whose session_id differs is not also an orphan elsewhere.
	if other := storetest.Load(t, st, "ses_other"); len(other.Orphans) != 0 {
		t.Errorf("ses_other has orphans %v", other.Orphans)
	}
}

// A part's SessionID is its session_id column as database/sql scans it into
// a string, whatever the value's type: the reader reads the column only
// when it is not the session's own id as text, and stands in for that case
// with an empty blob, which a stored empty blob must not be taken for.
func TestSQLitePartSessionIDAsStored(t *testing.T) {
	path := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), sqliteFixture())
	const mid = "msg_000000000001000000000000aa"
	storetest.ExecSQL(t, path,
		`INSERT INTO part VALUES ('prt_000000000002000000000000aa', '`+mid+`', CAST('`+sqlSession+`' AS BLOB), 1, 1, '{"type":"text"}')`,
		`INSERT INTO part VALUES ('prt_000000000003000000000000aa', '`+mid+`', x'', 1, 1, '{"type":"text"}')`,
		`INSERT INTO part VALUES ('prt_000000000004000000000000aa', '`+mid+`', upper('`+sqlSession+`'), 1, 1, '{"type":"text"}')`,
		`INSERT INTO part VALUES ('prt_000000000005000000000000aa', '`+mid+`', '', 1, 1, '{"type":"text"}')`,
	)
	s := storetest.Load(t, storetest.OpenOne(t, path), sqlSession)
	want := []string{sqlSession, sqlSession, "", strings.ToUpper(sqlSession), ""}
	m := s.Message(mid)
	if m == nil || len(m.Parts) != len(want) {
		t.Fatalf("message %v", m)
	}
	for i, p := range m.Parts {
		if p.SessionID != want[i] {
			t.Errorf("part %s: session %q, want %q", p.ID, p.SessionID, want[i])
		}
	}
}

func TestSQLiteReadsWhileWriterHoldsWALTransaction(t *testing.T) {
	path := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), sqliteFixture())
	// A committed write that stays in the WAL, then an open write transaction.
	conn := otherConn(t, "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)",
		`PRAGMA wal_autocheckpoint = 0`,
		`INSERT INTO message VALUES ('msg_000000000002000000000000aa', '`+sqlSession+`', 2000, 2000, '{"role":"assistant"}')`,
		`BEGIN IMMEDIATE`,
		`INSERT INTO message VALUES ('msg_000000000003000000000000aa', '`+sqlSession+`', 3000, 3000, '{"role":"user"}')`,
	)
	var mode string
	if err := conn.QueryRowContext(context.Background(), "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q %v", mode, err)
	}

	restore := sqlite.SetBusyTimeout(200 * time.Millisecond)
	defer restore()
	st := storetest.OpenOne(t, path)
	s := storetest.Load(t, st, sqlSession)
	if got := strings.Join(storetest.MessageIDs(s), " "); got != "msg_000000000001000000000000aa msg_000000000002000000000000aa" {
		t.Fatalf("messages %s: want the committed ones only", got)
	}
}

func TestSQLiteExclusiveLockIsAClearError(t *testing.T) {
	path := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), sqliteFixture())
	storetest.ExecSQL(t, path, `PRAGMA journal_mode = DELETE`)
	restore := sqlite.SetBusyTimeout(150 * time.Millisecond)
	defer restore()
	st := storetest.OpenOne(t, path) // opened before the lock is taken

	otherConn(t, "file:"+path, `PRAGMA locking_mode = EXCLUSIVE`, `BEGIN EXCLUSIVE`, `UPDATE session SET title = 'locked'`)

	_, err := st.Load(context.Background(), store.SessionRef{ID: sqlSession})
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Errorf("load under an exclusive lock: %v, want ErrLocked naming %s", err, path)
	}
	_, err = shapes.Open([]string{path})
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Errorf("open under an exclusive lock: %v, want ErrLocked naming %s", err, path)
	}
}

// An OpenCode 2 database is not this shape's: opened as a 1.x database
// it is refused; the registry opens it as sqlite2.
func TestSQLiteRefusesOpenCode2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "opencode2", "after-import", "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = sqlite.Shape{}.Open(path)
	if !errors.Is(err, store.ErrUnsupported) || !strings.Contains(err.Error(), "an OpenCode 2 database") || !strings.Contains(err.Error(), path) {
		t.Fatalf("open v2 as v1: %v", err)
	}
	if st := storetest.OpenOne(t, path); st.Info().Shape != store.ShapeSQLite2 {
		t.Fatalf("the registry opened it as %s", st.Info().Shape)
	}
}

func TestSQLiteOtherDatabaseIsNotFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	storetest.ExecSQL(t, path, `CREATE TABLE session (id TEXT)`)
	_, err := shapes.Open([]string{path})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), path) {
		t.Fatalf("open a foreign database: %v", err)
	}
	// A file that only claims to be SQLite.
	fake := filepath.Join(t.TempDir(), "fake.db")
	if err := os.WriteFile(fake, []byte("SQLite format 3\x00 and then garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := shapes.Open([]string{fake}); err == nil || !strings.Contains(err.Error(), fake) {
		t.Fatalf("open a damaged database: %v", err)
	}
}

func TestSQLiteFallbacksForReadOnlyDirectories(t *testing.T) {
	path := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), sqliteFixture())
	st, err := sqlite.OpenImmutable(path)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := st.Load(context.Background(), store.SessionRef{ID: sqlSession}); err != nil || len(s.Messages) != 1 {
		t.Fatalf("immutable read: %v", err)
	}
	st.Close()

	// Committed changes still in the WAL are seen through a snapshot copy,
	// and locations name the original file.
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	for _, s := range []string{`PRAGMA wal_autocheckpoint = 0`,
		`INSERT INTO message VALUES ('msg_000000000002000000000000aa', '` + sqlSession + `', 2000, 2000, '{"role":"assistant"}')`} {
		if _, err := w.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("no WAL content to test with: %v", err)
	}
	st, tmp, err := sqlite.OpenSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Load(context.Background(), store.SessionRef{ID: sqlSession})
	if err != nil || len(s.Messages) != 2 || s.Messages[1].Loc.Path != path {
		t.Fatalf("snapshot read: %v %v", err, s)
	}
	if notes := st.Info().Notes; len(notes) != 1 || !strings.Contains(notes[0], "snapshot copy") {
		t.Errorf("notes %q", notes)
	}
	st.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("snapshot dir %s left behind: %v", tmp, err)
	}
}

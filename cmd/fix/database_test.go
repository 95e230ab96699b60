package fix

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/plandoc"
	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func idle(store.Info) store.Activity { return store.Activity{State: store.ActivityNone} }

func integrityCheck(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var s string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&s); err != nil {
		return err.Error()
	}
	return s
}

func countRows(t *testing.T, path, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFixSalvagesADamagedDatabase: a copy of the recorded 1.18.33 database
// with one leaf page of the part table overwritten. The dry run plans the
// salvage, changes nothing and its JSON document names the parts it would
// lose; `fix --yes` salvages (integrity_check ok, every session and
// message row and the other parts kept), a second fix plans no database
// repair, and
// `sessfix undo RUN` puts the original bytes back.
func TestFixSalvagesADamagedDatabase(t *testing.T) {
	t.Setenv("SESSFIX_STATE_DIR", t.TempDir())
	rs := realstore.Copy(t, ocrelease.V1_18)
	sessions, messages, parts := countRows(t, rs.Path, "session"), countRows(t, rs.Path, "message"), countRows(t, rs.Path, "part")
	rs.DamagePage(t, "part")
	before := fileBytes(t, rs.Path)

	dry := newEnv(rs.Path)
	dry.opts.DryRun, dry.opts.Activity = true, idle
	dry.opts.Factory.Globals.Format = "json"
	if err := dry.run(t); !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("dry run: %v, want findings\n%s", err, dry.errOut)
	}
	var doc plandoc.FixDocument
	if err := json.Unmarshal(dry.out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, dry.out)
	}
	if len(doc.Databases) != 1 || doc.Databases[0].Mutation != "salvageDatabase" || doc.Databases[0].Outcome != "planned" ||
		doc.Databases[0].Lost == nil || len(doc.Databases[0].Lost.Parts) == 0 {
		t.Fatalf("dry run's databases: %+v", doc.Databases)
	}
	lost := doc.Databases[0].Lost
	if !bytes.Equal(fileBytes(t, rs.Path), before) {
		t.Fatal("the dry run changed the database")
	}

	e := newEnv(rs.Path)
	e.opts.Yes, e.opts.Activity = true, idle
	if err := e.run(t); err != nil {
		t.Fatalf("fix --yes: %v\n%s", err, e.errOut)
	}
	if got := integrityCheck(t, rs.Path); got != "ok" {
		t.Fatalf("after fix integrity_check: %s", got)
	}
	if s, m, p := countRows(t, rs.Path, "session"), countRows(t, rs.Path, "message"), countRows(t, rs.Path, "part"); s != sessions || m != messages || p != parts-len(lost.Parts) {
		t.Errorf("after the salvage %d sessions, %d messages, %d parts; want %d, %d, %d (%d lost)", s, m, p, sessions, messages, parts-len(lost.Parts), len(lost.Parts))
	}
	storetest.LoadAll(t, storetest.OpenOne(t, rs.Path))
	if !strings.Contains(e.errOut.String(), "undo with: sessfix undo ") {
		t.Fatalf("no undo hint:\n%s", e.errOut)
	}

	again := newEnv(rs.Path)
	again.opts.DryRun, again.opts.Activity = true, idle
	// The sessions whose parts were lost keep what that leaves (messages
	// without parts: report only); the database needs nothing more.
	if err := again.run(t); (err != nil && !errors.Is(err, cli.ErrFindings)) || strings.Contains(again.out.String(), "salvage") {
		t.Errorf("fix after the salvage: %v\n%s\n%s", err, again.out, again.errOut)
	}

	runs, err := backup.List(backup.Options{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	if _, err := backup.Undo(context.Background(), backup.Options{}, runs[0].ID, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if !bytes.Equal(fileBytes(t, rs.Path), before) {
		t.Fatal("undo did not put the damaged database back byte for byte")
	}
}

// TestFixRefusesADatabaseInUse: while another program has the damaged
// database open, fix --yes stops with exit 4 (store.ErrLocked), changing
// nothing and leaving no backup run.
func TestFixRefusesADatabaseInUse(t *testing.T) {
	state := t.TempDir()
	t.Setenv("SESSFIX_STATE_DIR", state)
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.DamagePage(t, "part")
	before := fileBytes(t, rs.Path)
	e := newEnv(rs.Path)
	e.opts.Yes = true
	e.opts.Activity = func(store.Info) store.Activity {
		return store.Activity{State: store.ActivityOpen, PID: 4242, Command: "opencode"}
	}
	err := e.run(t)
	var inUse *backup.DatabaseInUseError
	if !errors.As(err, &inUse) || !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "opencode (pid 4242)") {
		t.Fatalf("fix --yes on a held database: %v", err)
	}
	if !bytes.Equal(fileBytes(t, rs.Path), before) {
		t.Fatal("the held database changed")
	}
	if runs, _ := backup.List(backup.Options{Dir: state}); len(runs) != 0 {
		t.Fatalf("runs %+v, want none", runs)
	}
}

// TestFixRefusesADatabaseInUseWithItsDocument: the same refusal with
// --format json prints the document every fix run prints: nothing
// written, the refusal as the store's error, the database repair refused.
func TestFixRefusesADatabaseInUseWithItsDocument(t *testing.T) {
	t.Setenv("SESSFIX_STATE_DIR", t.TempDir())
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.DamagePage(t, "part")
	e := newEnv(rs.Path)
	e.opts.Yes = true
	e.opts.Factory.Globals.Format = "json"
	e.opts.Activity = func(store.Info) store.Activity {
		return store.Activity{State: store.ActivityOpen, PID: 4242, Command: "opencode"}
	}
	if err := e.run(t); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("fix --yes on a held database: %v", err)
	}
	var doc plandoc.FixDocument
	if err := json.Unmarshal(e.out.Bytes(), &doc); err != nil {
		t.Fatalf("no JSON document: %v\n%q", err, e.out)
	}
	if doc.Written || len(doc.Stores) != 1 || !strings.Contains(doc.Stores[0].Error, "opencode (pid 4242)") || doc.Stores[0].BackupRun != "" {
		t.Errorf("stores %+v (written %v), want the refusal as the store's error", doc.Stores, doc.Written)
	}
	if len(doc.Databases) != 1 || doc.Databases[0].Outcome != "refused" || doc.Databases[0].Mutation != "salvageDatabase" ||
		!strings.Contains(doc.Databases[0].Error, "nothing was changed") {
		t.Errorf("databases %+v, want the salvage refused", doc.Databases)
	}
}

// TestFixReindexesDamagedIndexes: when the check names only an index, fix
// rebuilds the indexes in place instead of salvaging, and undo puts the
// original bytes back.
func TestFixReindexesDamagedIndexes(t *testing.T) {
	t.Setenv("SESSFIX_STATE_DIR", t.TempDir())
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.OverwritePage(t, rs.RootPage(t, "part_session_idx"))
	before := fileBytes(t, rs.Path)
	parts := 0
	if db, err := sql.Open("sqlite", "file:"+rs.Path+"?mode=ro"); err == nil {
		_ = db.QueryRow("SELECT count(*) FROM part NOT INDEXED").Scan(&parts)
		db.Close()
	}
	e := newEnv(rs.Path)
	e.opts.Yes, e.opts.Activity = true, idle
	if err := e.run(t); err != nil {
		t.Fatalf("fix --yes: %v\n%s", err, e.errOut)
	}
	if !strings.Contains(e.errOut.String(), "repaired database "+rs.Path+" (reindexDatabase)") {
		t.Errorf("not reindexed:\n%s", e.errOut)
	}
	if got := integrityCheck(t, rs.Path); got != "ok" {
		t.Fatalf("after fix integrity_check: %s", got)
	}
	if got := countRows(t, rs.Path, "part"); got != parts {
		t.Errorf("%d parts after the reindex, want %d", got, parts)
	}
	runs, _ := backup.List(backup.Options{})
	if len(runs) != 1 {
		t.Fatalf("runs %+v", runs)
	}
	if _, err := backup.Undo(context.Background(), backup.Options{}, runs[0].ID, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if !bytes.Equal(fileBytes(t, rs.Path), before) {
		t.Fatal("undo did not put the original bytes back")
	}
}

// TestFixSalvagesADatabaseSQLCannotOpen: with page 1 (the schema's root)
// destroyed SQL cannot open the database at all; fix reads its rows from
// the raw pages, and the salvaged database lists every session.
func TestFixSalvagesADatabaseSQLCannotOpen(t *testing.T) {
	t.Setenv("SESSFIX_STATE_DIR", t.TempDir())
	rs := realstore.Copy(t, ocrelease.V1_18)
	sessions := countRows(t, rs.Path, "session")
	rs.OverwritePage(t, 1)
	e := newEnv(rs.Path)
	e.opts.Yes, e.opts.Activity = true, idle
	if err := e.run(t); err != nil {
		t.Fatalf("fix --yes: %v\n%s", err, e.errOut)
	}
	if got := integrityCheck(t, rs.Path); got != "ok" {
		t.Fatalf("after fix integrity_check: %s", got)
	}
	if got := len(storetest.LoadAll(t, storetest.OpenOne(t, rs.Path))); got != sessions {
		t.Errorf("%d sessions load after the salvage, want %d", got, sessions)
	}
}

// TestFixCheckpointsAnOversizedLog: a copy of the recorded 1.18.33
// database whose -wal grew past 64 MiB and 4 times the database (a
// program rewrote a 1 MiB row of a table of its own 70 times, and its
// checkpoints never completed: the files are copied while it is open).
// fix --yes checkpoints it (SF502): the log is empty and the database
// holds its changes; undo puts the three files back byte for byte.
func TestFixCheckpointsAnOversizedLog(t *testing.T) {
	t.Setenv("SESSFIX_STATE_DIR", t.TempDir())
	rs := realstore.Copy(t, ocrelease.V1_18)
	db, err := sql.Open("sqlite", "file:"+rs.Path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)&_pragma=synchronous(OFF)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE filler (b BLOB); INSERT INTO filler VALUES (zeroblob(1))"); err != nil {
		t.Fatal(err)
	}
	for i := range 70 {
		if _, err := db.Exec("UPDATE filler SET b = randomblob(1048576 + ?)", i); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "opencode.db")
	for _, suf := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(rs.Path + suf)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+suf, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	e := newEnv(path)
	e.opts.Yes, e.opts.Activity = true, idle
	e.opts.Select = []string{"SF502"}
	if err := e.run(t); err != nil {
		t.Fatalf("fix --yes: %v\n%s", err, e.errOut)
	}
	if !strings.Contains(e.errOut.String(), "(checkpointWAL)") {
		t.Fatalf("no checkpoint:\n%s", e.errOut)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		t.Errorf("the log holds %d bytes after the checkpoint", fi.Size())
	}
	if got := countRows(t, path, "filler"); got != 1 {
		t.Errorf("the database holds %d filler rows, want the log's 1", got)
	}
	runs, _ := backup.List(backup.Options{})
	if len(runs) != 1 {
		t.Fatalf("runs %+v", runs)
	}
	before := map[string][]byte{}
	for _, suf := range []string{"", "-wal", "-shm"} {
		before[suf] = fileBytes(t, filepath.Join(runs[0].Dir, "before", "database"+suf))
	}
	if _, err := backup.Undo(context.Background(), backup.Options{}, runs[0].ID, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	for suf, want := range before {
		if !bytes.Equal(fileBytes(t, path+suf), want) {
			t.Errorf("undo did not put %s back byte for byte", path+suf)
		}
	}
}

// TestFixSessionInADamagedDatabase: `fix --session X` on a copy of the
// recorded 1.18.33 database with a page of the part table destroyed
// repairs no session in it, dry run or not: the refusal is the store's
// error (exit 3), its hints are the runs that repair the whole database,
// nothing is written and no backup run is made. The hint's run then
// salvages it.
func TestFixSessionInADamagedDatabase(t *testing.T) {
	state := t.TempDir()
	t.Setenv("SESSFIX_STATE_DIR", state)
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.DamagePage(t, "part")
	before := fileBytes(t, rs.Path)
	for _, dry := range []bool{true, false} {
		e := newEnv(rs.Path)
		e.opts.Sessions, e.opts.Activity = []string{rs.SessionID}, idle
		// Leaving SF501 out of the selection does not make a session
		// repair safe to write into the damaged file.
		e.opts.Select = []string{"SF1", "SF3"}
		e.opts.DryRun, e.opts.Yes = dry, !dry
		e.opts.Factory.Globals.Format = "json"
		err := e.run(t)
		if err == nil || errors.Is(err, cli.ErrFindings) || errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "is damaged (SF501") {
			t.Fatalf("dry run %v: %v\n%s", dry, err, e.errOut)
		}
		hints := strings.Join(cli.Hints(err), "\n")
		if !strings.Contains(hints, "`sessfix fix "+rs.Path+"`") || !strings.Contains(hints, "`sessfix fix --dry-run "+rs.Path+"`") {
			t.Errorf("dry run %v: hints %q, want the runs that repair the database", dry, hints)
		}
		var doc plandoc.FixDocument
		if err := json.Unmarshal(e.out.Bytes(), &doc); err != nil {
			t.Fatalf("%v\n%s", err, e.out)
		}
		if doc.Written || len(doc.Stores) != 1 || !strings.Contains(doc.Stores[0].Error, "is damaged") || len(doc.Sessions) != 0 || len(doc.Databases) != 0 {
			t.Errorf("dry run %v: document %+v", dry, doc)
		}
		if !bytes.Equal(fileBytes(t, rs.Path), before) {
			t.Fatalf("dry run %v: the damaged database changed", dry)
		}
	}
	if runs, _ := backup.List(backup.Options{Dir: state}); len(runs) != 0 {
		t.Fatalf("runs %+v, want none", runs)
	}
	e := newEnv(rs.Path)
	e.opts.Yes, e.opts.Activity = true, idle
	if err := e.run(t); err != nil {
		t.Fatalf("the hint's fix: %v\n%s", err, e.errOut)
	}
	if got := integrityCheck(t, rs.Path); got != "ok" {
		t.Fatalf("after the hint's fix integrity_check: %s", got)
	}
}

// TestFixVacuumsOnlyOnRequest: a copy of the recorded 1.18.33 database
// that is mostly free pages (SF504). The free pages are made here by
// filling and dropping a table of the test's own, the free list SQLite
// keeps after OpenCode deletes sessions; a real run would have to write
// and delete 16 MiB of sessions to get there. A plain `fix --yes`
// leaves the database alone; `fix --select SF504` plans vacuumDatabase,
// refuses with exit 4 while OpenCode has the database open or another
// sessfix holds the store, and otherwise rewrites it smaller with every
// OpenCode row kept, in a backup run that `sessfix backups` names and
// `sessfix undo` puts back byte for byte.
func TestFixVacuumsOnlyOnRequest(t *testing.T) {
	state := t.TempDir()
	t.Setenv("SESSFIX_STATE_DIR", state)
	rs := realstore.Copy(t, ocrelease.V1_18)
	db, err := sql.Open("sqlite", "file:"+rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, q := range []string{"CREATE TABLE filler (b BLOB)", "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) INSERT INTO filler SELECT randomblob(1048576) FROM n", "DROP TABLE filler"} {
		if _, err := db.Exec(q); err != nil {
			db.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	counts := func() [3]int {
		return [3]int{countRows(t, rs.Path, "session"), countRows(t, rs.Path, "message"), countRows(t, rs.Path, "part")}
	}
	rows := counts()
	files := func() map[string][]byte {
		m := map[string][]byte{}
		for _, suf := range []string{"", "-wal", "-shm"} {
			if b, err := os.ReadFile(rs.Path + suf); err == nil {
				m[suf] = b
			}
		}
		return m
	}
	unchanged := func(what string, want map[string][]byte) {
		t.Helper()
		got := files()
		for suf, b := range want {
			if !bytes.Equal(got[suf], b) {
				t.Fatalf("%s: %s%s changed", what, rs.Path, suf)
			}
		}
		if runs, _ := backup.List(backup.Options{Dir: state}); len(runs) != 0 {
			t.Fatalf("%s: runs %+v, want none", what, runs)
		}
	}
	before := files()

	plain := newEnv(rs.Path)
	plain.opts.Yes, plain.opts.Activity = true, idle
	if err := plain.run(t); err != nil && !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("fix --yes: %v\n%s", err, plain.errOut)
	}
	unchanged("a plain fix", before)

	dry := newEnv(rs.Path)
	dry.opts.DryRun, dry.opts.Activity, dry.opts.Select = true, idle, []string{"SF504"}
	dry.opts.Factory.Globals.Format = "json"
	if err := dry.run(t); !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("dry run: %v\n%s", err, dry.errOut)
	}
	var doc plandoc.FixDocument
	if err := json.Unmarshal(dry.out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, dry.out)
	}
	if len(doc.Databases) != 1 || doc.Databases[0].Rule != "SF504" || doc.Databases[0].Mutation != "vacuumDatabase" || doc.Databases[0].Outcome != "planned" {
		t.Fatalf("dry run's databases: %+v", doc.Databases)
	}
	unchanged("the dry run", before)

	held := newEnv(rs.Path)
	held.opts.Yes, held.opts.Select = true, []string{"SF504"}
	held.opts.Activity = func(store.Info) store.Activity {
		return store.Activity{State: store.ActivityOpen, PID: 4242, Command: "opencode"}
	}
	if err := held.run(t); !errors.As(err, new(*backup.DatabaseInUseError)) {
		t.Fatalf("vacuum of a database OpenCode holds: %v", err)
	}
	unchanged("the vacuum refused for OpenCode", before)

	lock, err := store.AcquireLock(storetest.OpenOne(t, rs.Path).Info())
	if err != nil {
		t.Fatal(err)
	}
	locked := newEnv(rs.Path)
	locked.opts.Yes, locked.opts.Activity, locked.opts.Select = true, idle, []string{"SF504"}
	err = locked.run(t)
	lock.Release()
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("vacuum of a store another sessfix holds: %v", err)
	}
	unchanged("the vacuum refused for another sessfix", before)

	e := newEnv(rs.Path)
	e.opts.Yes, e.opts.Activity, e.opts.Select = true, idle, []string{"SF504"}
	if err := e.run(t); err != nil {
		t.Fatalf("fix --select SF504 --yes: %v\n%s", err, e.errOut)
	}
	if !strings.Contains(e.errOut.String(), "repaired database "+rs.Path+" (vacuumDatabase)") {
		t.Errorf("not vacuumed:\n%s", e.errOut)
	}
	if got, was := len(fileBytes(t, rs.Path)), len(before[""]); got*4 > was {
		t.Errorf("the database is %d bytes after the vacuum, was %d", got, was)
	}
	if got := integrityCheck(t, rs.Path); got != "ok" {
		t.Fatalf("after the vacuum integrity_check: %s", got)
	}
	if got := counts(); got != rows {
		t.Errorf("session, message, part rows %v after the vacuum, want %v", got, rows)
	}
	storetest.LoadAll(t, storetest.OpenOne(t, rs.Path))
	again := newEnv(rs.Path)
	again.opts.DryRun, again.opts.Activity, again.opts.Select = true, idle, []string{"SF504"}
	if err := again.run(t); err != nil || strings.Contains(again.out.String(), "vacuum") {
		t.Errorf("a second vacuum: %v\n%s\n%s", err, again.out, again.errOut)
	}

	runs, err := backup.List(backup.Options{Dir: state})
	if err != nil || len(runs) != 1 || runs[0].Database == nil || runs[0].Database.Action != "vacuum" || runs[0].Database.Rule != "SF504" {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	if _, err := backup.Undo(context.Background(), backup.Options{Dir: state}, runs[0].ID, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	got := files()
	for suf, b := range before {
		if !bytes.Equal(got[suf], b) {
			t.Errorf("undo did not put %s%s back byte for byte", rs.Path, suf)
		}
	}
	for suf := range got {
		if _, ok := before[suf]; !ok && suf != "-shm" {
			t.Errorf("undo left %s%s, which was not there", rs.Path, suf)
		}
	}
}

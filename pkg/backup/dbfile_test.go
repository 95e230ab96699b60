package backup_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/sqlite/salvage"
)

// damaged is a copy of the recorded 1.18.33 database with one leaf page of
// the part table overwritten, and its bytes.
func damaged(t *testing.T) (*realstore.Store, []byte) {
	t.Helper()
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.DamagePage(t, "part")
	b, err := os.ReadFile(rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	return rs, b
}

func salvageChange() backup.DatabaseChange {
	return backup.DatabaseChange{Action: backup.ActionSalvage, Rule: "SF501",
		Write: func(ctx context.Context, path, dst string) error {
			_, err := salvage.Salvage(ctx, path, dst)
			return err
		},
		Activity: func() store.Activity { return store.Activity{State: store.ActivityNone} },
	}
}

func dbOptions(t *testing.T) backup.Options {
	return backup.Options{Dir: t.TempDir(), Now: func() time.Time { return time.Date(2026, 11, 21, 15, 30, 0, 0, time.UTC) }}
}

func integrity(t *testing.T, path string) string {
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

// TestApplyDatabaseSalvageAndUndo: the salvage of a damaged database is
// swapped in (integrity_check ok), recorded with the original's hashes,
// and undo puts the original bytes back; a second undo does nothing.
func TestApplyDatabaseSalvageAndUndo(t *testing.T) {
	rs, before := damaged(t)
	opts := dbOptions(t)
	info := store.Info{Path: rs.Path, Shape: store.ShapeSQLite}
	run, err := backup.ApplyDatabase(context.Background(), opts, info, salvageChange())
	if err != nil || run == "" {
		t.Fatalf("ApplyDatabase: %q, %v", run, err)
	}
	if got := integrity(t, rs.Path); got != "ok" {
		t.Fatalf("after the salvage integrity_check says %s", got)
	}
	runs, err := backup.List(opts)
	if err != nil || len(runs) != 1 || runs[0].State != backup.StateApplied {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	res, err := backup.Undo(context.Background(), opts, run, false)
	if err != nil {
		t.Fatalf("undo: %v", err)
	}
	if got, _ := os.ReadFile(rs.Path); !bytes.Equal(got, before) {
		t.Fatalf("undo did not put the original bytes back (%s)", res.Message)
	}
	if res, err := backup.Undo(context.Background(), opts, run, false); err != nil || !res.AlreadyUndone {
		t.Fatalf("second undo: %+v, %v", res, err)
	}
}

// TestUndoDatabaseRefusesAChangedDatabase: a database written since the
// repair is not overwritten unless forced.
func TestUndoDatabaseRefusesAChangedDatabase(t *testing.T) {
	rs, before := damaged(t)
	opts := dbOptions(t)
	info := store.Info{Path: rs.Path, Shape: store.ShapeSQLite}
	run, err := backup.ApplyDatabase(context.Background(), opts, info, salvageChange())
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE session SET title = 'changed'"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = backup.Undo(context.Background(), opts, run, false)
	var refused *backup.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("undo of a changed database: %v, want a *RefusedError", err)
	}
	if _, err := backup.Undo(context.Background(), opts, run, true); err != nil {
		t.Fatalf("undo --force: %v", err)
	}
	if got, _ := os.ReadFile(rs.Path); !bytes.Equal(got, before) {
		t.Fatal("undo --force did not put the original bytes back")
	}
}

// TestApplyDatabaseRefusesADatabaseInUse: nothing is written or backed up
// while another program holds the database.
func TestApplyDatabaseRefusesADatabaseInUse(t *testing.T) {
	rs, before := damaged(t)
	opts := dbOptions(t)
	ch := salvageChange()
	ch.Activity = func() store.Activity { return store.Activity{State: store.ActivityOpen, PID: 42, Command: "opencode"} }
	_, err := backup.ApplyDatabase(context.Background(), opts, store.Info{Path: rs.Path, Shape: store.ShapeSQLite}, ch)
	var inUse *backup.DatabaseInUseError
	if !errors.As(err, &inUse) || !errors.Is(err, store.ErrLocked) {
		t.Fatalf("ApplyDatabase on a held database: %v", err)
	}
	if got, _ := os.ReadFile(rs.Path); !bytes.Equal(got, before) {
		t.Fatal("the held database changed")
	}
	if runs, _ := backup.List(opts); len(runs) != 0 {
		t.Fatalf("runs %+v, want none", runs)
	}
}

// TestKilledSalvageIsFinishedOrPutBack: a salvage killed after each of its
// steps is finished (the swap was done) or put back byte for byte by the
// next Lock's Recover; either way the database passes integrity_check or
// is the original, and no temporary file is left.
func TestKilledSalvageIsFinishedOrPutBack(t *testing.T) {
	for _, step := range []string{"database backed up", "salvage written", "database log removed", "database swapped"} {
		t.Run(step, func(t *testing.T) {
			rs, before := damaged(t)
			// A -wal and -shm to lose: the original's are put back too.
			wal := []byte("not a real log")
			if err := os.WriteFile(rs.Path+"-shm", wal, 0o644); err != nil {
				t.Fatal(err)
			}
			opts := dbOptions(t)
			info := store.Info{Path: rs.Path, Shape: store.ShapeSQLite}
			backup.KillDatabaseAt(t, step)
			func() {
				defer func() {
					if v := recover(); !backup.IsKilled(v) {
						panic(v)
					}
				}()
				backup.ApplyDatabase(context.Background(), opts, info, salvageChange())
				t.Fatal("not killed")
			}()
			rbs, err := backup.Interrupted(opts, info)
			if err != nil || len(rbs) != 1 {
				t.Fatalf("Interrupted: %+v, %v", rbs, err)
			}
			lock, rbs, err := backup.Lock(context.Background(), opts, info)
			if err != nil || len(rbs) != 1 {
				t.Fatalf("Lock: %+v, %v", rbs, err)
			}
			lock.Release()
			t.Log(rbs[0].Message())
			got, _ := os.ReadFile(rs.Path)
			shm, _ := os.ReadFile(rs.Path + "-shm")
			switch {
			case rbs[0].Finished:
				if step != "database swapped" || integrity(t, rs.Path) != "ok" {
					t.Fatalf("finished after %q; integrity %s", step, integrity(t, rs.Path))
				}
			case !bytes.Equal(got, before) || !bytes.Equal(shm, wal):
				t.Fatalf("after %q the original files are not back", step)
			}
			if ents, _ := os.ReadDir(rs.Dir); len(ents) > 0 {
				for _, e := range ents {
					if bytes.Contains([]byte(e.Name()), []byte("sessfix")) {
						t.Errorf("left %s", e.Name())
					}
				}
			}
			if rbs, _ := backup.Interrupted(opts, info); len(rbs) != 0 {
				t.Fatalf("still interrupted: %+v", rbs)
			}
		})
	}
}

// freeSpace is a copy of the recorded 1.18.33 database made mostly free
// pages by a table filled and dropped, and its bytes.
func freeSpace(t *testing.T) (*realstore.Store, []byte) {
	t.Helper()
	rs := realstore.Copy(t, ocrelease.V1_18)
	db, err := sql.Open("sqlite", "file:"+rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, q := range []string{"CREATE TABLE filler (b BLOB)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20) INSERT INTO filler SELECT randomblob(1048576) FROM n",
		"DROP TABLE filler"} {
		if _, err := db.Exec(q); err != nil {
			db.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	b, err := os.ReadFile(rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	return rs, b
}

// TestVacuumIsPutBackWhenItStopsPartWay: a vacuum killed after the
// backup, or one whose VACUUM rewrote the file in place and then failed,
// leaves the original bytes once the run is rolled back or put back; a whole vacuum shrinks the file and its
// undo puts the bytes back.
func TestVacuumIsPutBackWhenItStopsPartWay(t *testing.T) {
	idle := func() store.Activity { return store.Activity{State: store.ActivityNone} }
	info := func(rs *realstore.Store) store.Info { return store.Info{Path: rs.Path, Shape: store.ShapeSQLite} }

	rs, before := freeSpace(t)
	opts := dbOptions(t)
	backup.KillDatabaseAt(t, "database backed up")
	func() {
		defer func() {
			if v := recover(); !backup.IsKilled(v) {
				panic(v)
			}
		}()
		backup.ApplyDatabase(context.Background(), opts, info(rs), backup.DatabaseChange{Action: backup.ActionVacuum, Rule: "SF504",
			Write: func(ctx context.Context, path, _ string) error { return salvage.Vacuum(ctx, path) }, Activity: idle})
		t.Fatal("not killed")
	}()
	backup.KillDatabaseAt(t, "")
	lock, rbs, err := backup.Lock(context.Background(), opts, info(rs))
	if err != nil || len(rbs) != 1 {
		t.Fatalf("Lock: %+v, %v", rbs, err)
	}
	lock.Release()
	if got, _ := os.ReadFile(rs.Path); !bytes.Equal(got, before) {
		t.Fatal("a vacuum killed after its backup did not leave the original bytes")
	}

	rs, before = freeSpace(t)
	opts = dbOptions(t)
	_, err = backup.ApplyDatabase(context.Background(), opts, info(rs), backup.DatabaseChange{Action: backup.ActionVacuum, Rule: "SF504",
		Write: func(ctx context.Context, path, _ string) error {
			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				return err
			}
			defer db.Close()
			if _, err := db.Exec("VACUUM"); err != nil {
				return err
			}
			return errors.New("stopped after the VACUUM")
		}, Activity: idle})
	if err == nil {
		t.Fatal("the failed vacuum succeeded")
	}
	if got, _ := os.ReadFile(rs.Path); !bytes.Equal(got, before) {
		t.Fatal("a vacuum that failed part-way did not put the original bytes back")
	}
	if _, err := os.Stat(rs.Path + "-wal"); err == nil {
		t.Error("the failed vacuum's log was left beside the database")
	}

	rs, before = freeSpace(t)
	opts = dbOptions(t)
	run, err := backup.ApplyDatabase(context.Background(), opts, info(rs), backup.DatabaseChange{Action: backup.ActionVacuum, Rule: "SF504",
		Write: func(ctx context.Context, path, _ string) error { return salvage.Vacuum(ctx, path) }, Activity: idle})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(rs.Path); len(got)*2 > len(before) || integrity(t, rs.Path) != "ok" {
		t.Fatalf("the vacuum left %d bytes of %d, integrity %s", len(got), len(before), integrity(t, rs.Path))
	}
	if _, err := backup.Undo(context.Background(), opts, run, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(rs.Path); !bytes.Equal(got, before) {
		t.Fatal("undo did not put the original bytes back")
	}
}

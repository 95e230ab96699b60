package fix

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func idleActivity() store.Activity { return store.Activity{State: store.ActivityNone} }

// withLog is a copy of the recorded 1.18.33 database whose -wal holds
// committed changes (a new session title), as a program killed before its
// checkpoint leaves it: the files are copied while the writer is open.
func withLog(t *testing.T) string {
	t.Helper()
	rs := realstore.Copy(t, ocrelease.V1_18)
	db, err := sql.Open("sqlite", "file:"+rs.Path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("UPDATE session SET title = 'from the log'"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, suf := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(rs.Path + suf)
		if err != nil {
			t.Fatalf("%s%s: %v", rs.Path, suf, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "opencode.db"+suf), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "opencode.db")
}

// TestCheckpointWALAndUndo: checkpointWAL folds the log into the database
// (the log's change is in the file, the log empty or gone), and undo puts
// the database, its -wal and -shm back byte for byte.
func TestCheckpointWALAndUndo(t *testing.T) {
	path := withLog(t)
	opts := WriteOptions{Backup: backup.Options{Dir: t.TempDir()}}
	st := storetest.OpenOne(t, path)
	tx, err := Begin(context.Background(), st, opts, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	before := map[string][]byte{}
	for _, suf := range []string{"", "-wal", "-shm"} {
		before[suf], _ = os.ReadFile(path + suf)
	}
	r := &DatabaseRepair{Store: st.Info(), Rule: scan.SF502, Mutation: MutCheckpointWAL}
	run, err := tx.ApplyDatabase(context.Background(), r, idleActivity)
	if err != nil || run == "" {
		t.Fatalf("checkpoint: %q, %v", run, err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		t.Errorf("the log holds %d bytes after the checkpoint", fi.Size())
	}
	db, err := sql.Open("sqlite", "file:"+path+"?immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	var title string
	err = db.QueryRow("SELECT title FROM session LIMIT 1").Scan(&title)
	db.Close()
	if err != nil || title != "from the log" {
		t.Fatalf("the database file says %q (%v): the log was not folded in", title, err)
	}
	tx.Close()
	if _, err := backup.Undo(context.Background(), opts.Backup, run, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	for suf, want := range before {
		if got, _ := os.ReadFile(path + suf); !bytes.Equal(got, want) {
			t.Errorf("undo did not put %s%s back byte for byte", path, suf)
		}
	}
}

// TestPlanDatabaseSaysWhatTheSalvageLoses: on a database with a destroyed
// part page the plan is a salvage whose trial names the lost parts, and
// writes nothing.
func TestPlanDatabaseSaysWhatTheSalvageLoses(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.DamagePage(t, "part")
	before, _ := os.ReadFile(rs.Path)
	st := storetest.OpenOne(t, rs.Path)
	r, err := PlanDatabase(context.Background(), st, &scan.Options{}, idleActivity, true)
	if err != nil || r == nil || r.Mutation != MutSalvageDatabase || r.Salvage == nil {
		t.Fatalf("plan: %+v, %v", r, err)
	}
	l := LostOf(r.Salvage)
	if len(l.Parts) == 0 || !strings.Contains(r.LossLine(), l.Parts[0]) {
		t.Errorf("lost %+v; loss line %q", l, r.LossLine())
	}
	if after, _ := os.ReadFile(rs.Path); !bytes.Equal(after, before) {
		t.Error("planning changed the database")
	}
	if r, err := PlanDatabase(context.Background(), st, &scan.Options{Ignore: []string{"SF501"}}, idleActivity, true); err != nil || r != nil {
		t.Errorf("with SF501 ignored: %+v, %v", r, err)
	}
}

// TestVacuumRequested: SF504's vacuum is asked for only by naming the
// rule in full; selecting every rule, a prefix, or ignoring it does not.
func TestVacuumRequested(t *testing.T) {
	for _, tt := range []struct {
		opts *scan.Options
		want bool
	}{
		{nil, false},
		{&scan.Options{}, false},
		{&scan.Options{Select: []string{"SF5"}}, false},
		{&scan.Options{Select: []string{"SF1", "SF504"}}, true},
		{&scan.Options{Select: []string{"sf504"}}, true},
		{&scan.Options{Select: []string{"SF504"}, Ignore: []string{"SF50"}}, false},
	} {
		if got := VacuumRequested(tt.opts); got != tt.want {
			t.Errorf("VacuumRequested(%+v) = %v, want %v", tt.opts, got, tt.want)
		}
	}
}

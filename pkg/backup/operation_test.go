package backup_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/backup"
)

// writeRun puts a run folder with a manifest into dir's journal.
func writeRun(t *testing.T, dir, id, op, storePath string, at time.Time, undone bool) {
	t.Helper()
	run := filepath.Join(dir, "backups", id)
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	u := ""
	if undone {
		u = fmt.Sprintf(`, "undone": {"time": %q, "sessfix_version": "test", "restored": 1}`, at.Add(time.Minute).Format(time.RFC3339))
	}
	m := fmt.Sprintf(`{"format": 2, "run": %q, "time": %q, "store": {"shape": "export", "path": %q}, "operation": %q, "sessions": []%s}`,
		id, at.Format(time.RFC3339Nano), storePath, op, u)
	if err := os.WriteFile(filepath.Join(run, "manifest.json"), []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
}

func ids(runs []backup.RunInfo) string {
	var s []string
	for _, r := range runs {
		s = append(s, r.ID)
	}
	return strings.Join(s, " ")
}

// TestLastOperationGroupsTheRunsOfOneCommand: the newest run not undone
// names the operation, and every run of it not undone comes back, newest
// first; runs without an operation are operations of their own.
func TestLastOperationGroupsTheRunsOfOneCommand(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	writeRun(t, dir, "20261121T120000Z-old000", "", "/s/old.json", t0, false)                                         // before operations
	writeRun(t, dir, "20261121T120100Z-aaaaaa", "20261121T120100Z-op1op1", "/s/a.json", t0.Add(1*time.Minute), false) // op1
	writeRun(t, dir, "20261121T120101Z-bbbbbb", "20261121T120100Z-op1op1", "/s/b.json", t0.Add(61*time.Second), false)
	writeRun(t, dir, "20261121T120200Z-cccccc", "20261121T120200Z-op2op2", "/s/a.json", t0.Add(2*time.Minute), false) // op2
	writeRun(t, dir, "20261121T120201Z-dddddd", "20261121T120200Z-op2op2", "/t/c.json", t0.Add(121*time.Second), false)
	writeRun(t, dir, "20261121T120202Z-eeeeee", "20261121T120200Z-op2op2", "/s/e.json", t0.Add(122*time.Second), true) // undone alone
	opts := backup.Options{Dir: dir}

	last, err := backup.LastOperation(opts, nil)
	if err != nil || last.ID != "20261121T120200Z-op2op2" || ids(last.Runs) != "20261121T120201Z-dddddd 20261121T120200Z-cccccc" || len(last.Unread) != 0 {
		t.Fatalf("LastOperation = %+v %v; want op2's two runs not undone, newest first", last, err)
	}
	under := func(root string) func(backup.RunInfo) bool {
		return func(r backup.RunInfo) bool { return strings.HasPrefix(r.Store.Path, root) }
	}
	if last, err := backup.LastOperation(opts, under("/s/")); err != nil || ids(last.Runs) != "20261121T120200Z-cccccc" {
		t.Fatalf("LastOperation(/s/) = %+v %v; want op2's run of /s/a.json only", last, err)
	}
	for _, id := range []string{"20261121T120201Z-dddddd", "20261121T120200Z-cccccc"} {
		writeRun(t, dir, id, "20261121T120200Z-op2op2", "/s/x.json", t0.Add(2*time.Minute), true)
	}
	if last, err := backup.LastOperation(opts, nil); err != nil || last.ID != "20261121T120100Z-op1op1" || ids(last.Runs) != "20261121T120101Z-bbbbbb 20261121T120100Z-aaaaaa" {
		t.Fatalf("after op2 is undone, LastOperation = %+v %v; want op1's two runs", last, err)
	}
	for _, id := range []string{"20261121T120101Z-bbbbbb", "20261121T120100Z-aaaaaa"} {
		writeRun(t, dir, id, "20261121T120100Z-op1op1", "/s/x.json", t0.Add(time.Minute), true)
	}
	if last, err := backup.LastOperation(opts, nil); err != nil || last.ID != "20261121T120000Z-old000" || len(last.Runs) != 1 {
		t.Fatalf("a run without an operation: LastOperation = %+v %v; want it alone", last, err)
	}
	writeRun(t, dir, "20261121T120000Z-old000", "", "/s/old.json", t0, true)
	if _, err := backup.LastOperation(opts, nil); !errors.Is(err, backup.ErrAllUndone) {
		t.Fatalf("every run undone: err = %v, want ErrAllUndone", err)
	}
	if _, err := backup.LastOperation(opts, under("/nowhere/")); !errors.Is(err, backup.ErrNoRuns) {
		t.Fatalf("no run matches: err = %v, want ErrNoRuns", err)
	}
}

// TestLastOperationNamesTheRunsItCannotRead: a run newer than the
// operation whose manifest cannot be read (written by a newer sessfix,
// say) is not undone by undo --last; it is named, not passed over in
// silence. An older one is not.
func TestLastOperationNamesTheRunsItCannotRead(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	damaged := func(id string) {
		run := filepath.Join(dir, "backups", id)
		if err := os.MkdirAll(run, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, "manifest.json"), []byte(`{"format": 99}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	damaged("20261121T115900Z-older0")
	writeRun(t, dir, "20261121T120000Z-aaaaaa", "20261121T120000Z-op1op1", "/s/a.json", t0, false)
	damaged("20261121T120100Z-newer0")
	opts := backup.Options{Dir: dir}
	last, err := backup.LastOperation(opts, nil)
	if err != nil || last.ID != "20261121T120000Z-op1op1" || ids(last.Unread) != "20261121T120100Z-newer0" || last.Unread[0].Problem == "" {
		t.Fatalf("LastOperation = %+v %v; want op1, and the newer unreadable run named", last, err)
	}
	writeRun(t, dir, "20261121T120000Z-aaaaaa", "20261121T120000Z-op1op1", "/s/a.json", t0, true)
	if last, err := backup.LastOperation(opts, nil); !errors.Is(err, backup.ErrAllUndone) || ids(last.Unread) != "20261121T120100Z-newer0 20261121T115900Z-older0" {
		t.Fatalf("every readable run undone: LastOperation = %+v %v; want ErrAllUndone naming both unreadable runs", last, err)
	}
}

// TestOlderKeepsAnOperationWhole: backups prune deletes the runs of a
// command only when every one of them is older than the age; a command
// whose runs straddle the cutoff is kept whole, so that undo --last never
// finds part of it gone. Runs of no operation stand alone; damaged runs and
// runs stopped mid-apply are never pruned.
func TestOlderKeepsAnOperationWhole(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	at := func(age time.Duration) time.Time { return now.Add(-age) }
	// op1: every run 40 days old; op2: its runs straddle the 30-day cutoff.
	writeRun(t, dir, "20261012T120000Z-aaaaaa", "20261012T120000Z-op1op1", "/s/a.json", at(40*day), false)
	writeRun(t, dir, "20261012T120001Z-bbbbbb", "20261012T120000Z-op1op1", "/s/b.json", at(40*day-time.Second), false)
	writeRun(t, dir, "20261022T115959Z-cccccc", "20261022T115959Z-op2op2", "/s/a.json", at(30*day+time.Second), false)
	writeRun(t, dir, "20261022T120001Z-dddddd", "20261022T115959Z-op2op2", "/s/b.json", at(30*day-time.Second), true)
	writeRun(t, dir, "20261012T110000Z-eeeeee", "", "/s/old.json", at(40*day+time.Hour), false)
	damaged := filepath.Join(dir, "backups", "20261011T110000Z-ffffff")
	if err := os.MkdirAll(damaged, 0o700); err != nil {
		t.Fatal(err)
	}
	// A run stopped mid-apply: one session's change set still recorded.
	stopped := filepath.Join(dir, "backups", "20261010T110000Z-gggggg")
	if err := os.MkdirAll(stopped, 0o700); err != nil {
		t.Fatal(err)
	}
	m := fmt.Sprintf(`{"format": 2, "run": "20261010T110000Z-gggggg", "time": %q, "store": {"shape": "export", "path": "/s/k.json"}, `+
		`"operation": "20261010T110000Z-gggggg", "sessions": [{"id": "ses_1", "state": "recorded", "edits": []}]}`, at(50*day).Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(stopped, "manifest.json"), []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := backup.Options{Dir: dir, Now: func() time.Time { return now }}

	old, kept, err := backup.Older(opts, 30*day)
	if err != nil {
		t.Fatal(err)
	}
	want := "20261012T120001Z-bbbbbb 20261012T120000Z-aaaaaa 20261012T110000Z-eeeeee"
	if ids(old) != want {
		t.Fatalf("Older(30d) = [%s]\nwant [%s]: op2 straddles the cutoff and stays whole", ids(old), want)
	}
	// Neither a run sessfix cannot read nor one a killed run left to be
	// put back is pruned, however old: each is kept, with why.
	if len(kept) != 2 || kept[0].ID != "20261011T110000Z-ffffff" || !strings.Contains(kept[0].Why, "manifest cannot be read") ||
		kept[1].ID != "20261010T110000Z-gggggg" || !strings.Contains(kept[1].Why, "stopped mid-write") {
		t.Fatalf("kept = %+v; want the damaged run, then the stopped one, each with why", kept)
	}
	if old, _, err = backup.Older(opts, 29*day); err != nil || !strings.Contains(ids(old), "-cccccc") || !strings.Contains(ids(old), "-dddddd") {
		t.Fatalf("Older(29d) = [%s] %v; want op2 whole", ids(old), err)
	}
}

// TestListOrdersRunsOfOneSecondByTheirTime: the runs of one fix can share
// their second, and their ids then sort by a random suffix; List (and so
// `sessfix backups` and undo) orders them by the time in their manifests,
// newest first.
func TestListOrdersRunsOfOneSecondByTheirTime(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 100, time.UTC)
	writeRun(t, dir, "20261121T120000Z-zzzzzz", "20261121T120000Z-op1op1", "/s/a.db", t0, false)
	writeRun(t, dir, "20261121T120000Z-aaaaaa", "20261121T120000Z-op1op1", "/s/a.db", t0.Add(300*time.Millisecond), false)
	runs, err := backup.List(backup.Options{Dir: dir})
	if err != nil || ids(runs) != "20261121T120000Z-aaaaaa 20261121T120000Z-zzzzzz" {
		t.Fatalf("List = %q %v; want the run made second first, whatever its id", ids(runs), err)
	}
}

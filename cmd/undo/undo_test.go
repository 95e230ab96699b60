package undo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	backupscmd "github.com/sessfix/sessfix/cmd/backups"
	fixcmd "github.com/sessfix/sessfix/cmd/fix"
	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

var clock = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func factory() (*cli.Factory, *bytes.Buffer, *bytes.Buffer) {
	ios, _, out, errOut := iostreams.Test()
	f := cli.New(cli.BuildInfo{Version: "test"})
	f.IOStreams = ios
	f.Now = func() time.Time { return clock }
	return f, out, errOut
}

func materialize(t *testing.T, shape store.Shape, cases ...string) string {
	t.Helper()
	return storetest.MaterializeCases(t, shape, "../../testdata/sessions", clock.Add(-24*time.Hour), cases...)
}

// fixBackedUp runs sessfix fix --yes on the store at path, backing up into
// journal, and returns what it printed on stderr.
func fixBackedUp(t *testing.T, path string, journal backup.Options) string {
	t.Helper()
	f, _, errOut := factory()
	fo := &fixcmd.FixOptions{Factory: f, Paths: []string{path}, Yes: true, Settle: 5 * time.Second, Placeholder: "[user interrupted]",
		Apply: func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
			return backup.Apply(ctx, journal, info, sets)
		}}
	if err := fixcmd.RunFix(context.Background(), fo); err != nil && !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("fix: %v\n%s", err, errOut)
	}
	return errOut.String()
}

// TestFixUndoRoundTrip: fix writes through the real backup journal, a
// second fix plans nothing, undo --last restores the whole store, a second
// undo does nothing, and backups lists the run.
func TestFixUndoRoundTrip(t *testing.T) {
	cases := []string{"preflight-reasoning-after-tool", "preflight-blank-text", "preflight-thinking-only", "sf105-abandoned-tool", "sf205-foreign-parts"}
	for _, shape := range []store.Shape{store.ShapeSessions, store.ShapeStorage, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			path := materialize(t, shape, cases...)
			journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
			before := storetest.Hash(t, path, shape)

			fixOnce := func() string { return fixBackedUp(t, path, journal) }
			first := fixOnce()
			if !strings.Contains(first, "sessfix undo ") {
				t.Fatalf("no undo command in:\n%s", first)
			}
			fixed := storetest.Hash(t, path, shape)
			if fixed == before {
				t.Fatal("fix changed nothing")
			}
			if second := fixOnce(); !strings.Contains(second, "nothing to change") || storetest.Hash(t, path, shape) != fixed {
				t.Fatalf("second fix changed something:\n%s", second)
			}

			f, out, _ := factory()
			lo := &backupscmd.BackupsOptions{Factory: f, Backup: journal}
			if err := backupscmd.RunList(context.Background(), lo); err != nil {
				t.Fatal(err)
			}
			if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "applied") {
				t.Errorf("backups lists:\n%s", out)
			}

			f, _, errOut := factory()
			if err := RunUndo(context.Background(), &UndoOptions{Factory: f, Last: true, Backup: journal}); err != nil {
				t.Fatalf("undo: %v\n%s", err, errOut)
			}
			if storetest.Hash(t, path, shape) != before {
				t.Error("undo did not restore the store")
			}
			f, _, errOut = factory()
			if err := RunUndo(context.Background(), &UndoOptions{Factory: f, Last: true, Backup: journal}); err != nil || !strings.Contains(errOut.String(), "already undone") {
				t.Errorf("second undo: %v\n%s", err, errOut)
			}
		})
	}
}

func TestUndoUsage(t *testing.T) {
	f, _, _ := factory()
	var fe *cli.FlagError
	if err := RunUndo(context.Background(), &UndoOptions{Factory: f}); !errors.As(err, &fe) {
		t.Errorf("no run and no --last: %v", err)
	}
	if err := RunUndo(context.Background(), &UndoOptions{Factory: f, RunID: "x", Last: true}); !errors.As(err, &fe) {
		t.Errorf("run and --last: %v", err)
	}
	err := RunUndo(context.Background(), &UndoOptions{Factory: f, Last: true, Backup: backup.Options{Dir: t.TempDir()}})
	if err == nil || !strings.Contains(strings.Join(cli.Hints(err), " "), "sessfix backups") {
		t.Errorf("empty journal: %v", err)
	}
}

// TestUndoRefusalSaysItOnce: a record changed after the repair is refused
// once, in the error, with one hint about --force; with --force it is
// named as overwritten.
func TestUndoRefusalSaysItOnce(t *testing.T) {
	path := materialize(t, store.ShapeSessions, "preflight-blank-text")
	journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
	files := func() map[string][]byte {
		out := map[string][]byte{}
		filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out[p], _ = os.ReadFile(p)
			}
			return nil
		})
		return out
	}
	before := files()
	fixBackedUp(t, path, journal)
	changed := ""
	for p, b := range files() {
		if !bytes.Equal(b, before[p]) {
			changed = p
			break
		}
	}
	if changed == "" {
		t.Fatal("fix changed no file")
	}
	if err := os.WriteFile(changed, []byte(`{"edited":"after the repair"}`), 0o644); err != nil {
		t.Fatal(err)
	}

	f, _, errOut := factory()
	err := RunUndo(context.Background(), &UndoOptions{Factory: f, Last: true, Backup: journal})
	if !errors.Is(err, store.ErrChanged) {
		t.Fatalf("undo: %v, want a refusal", err)
	}
	all := errOut.String() + err.Error() + strings.Join(cli.Hints(err), "\n")
	if n := strings.Count(all, filepath.Base(changed)); n != 1 {
		t.Errorf("the refused record is named %d times, want once:\n%s", n, all)
	}
	if n := strings.Count(all, "--force"); n != 1 {
		t.Errorf("--force is suggested %d times, want once:\n%s", n, all)
	}

	f, _, errOut = factory()
	if err := RunUndo(context.Background(), &UndoOptions{Factory: f, Last: true, Force: true, Backup: journal}); err != nil {
		t.Fatalf("forced undo: %v", err)
	}
	if !strings.Contains(errOut.String(), "overwrote ") || !strings.Contains(errOut.String(), filepath.Base(changed)) {
		t.Errorf("forced undo does not say what it overwrote:\n%s", errOut)
	}
}

// TestUndoRollsBackAKilledRunFirst: undo writes through a backup.Tx, so
// it takes the writer lock through backup.Lock: a change set a killed run
// left half-written is rolled back first and said on stderr, and the
// undo of that run then finds nothing left to restore.
func TestUndoRollsBackAKilledRunFirst(t *testing.T) {
	path := materialize(t, store.ShapeStorage, "preflight-blank-text")
	journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
	before := storetest.Hash(t, path, store.ShapeStorage)
	var run string
	f, _, errOut := factory()
	fo := &fixcmd.FixOptions{Factory: f, Paths: []string{path}, Yes: true, Settle: 5 * time.Second, Placeholder: "[user interrupted]",
		// Killed after the write, before it was recorded: the entry
		// stays "recorded".
		Apply: func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
			w, err := shapes.OpenWriter(info, store.WriteOptions{})
			if err != nil {
				return "", err
			}
			defer w.Close()
			j, err := backup.Begin(journal, info)
			if err != nil {
				return "", err
			}
			run = j.ID()
			if err := j.Record(ctx, w, sets[0]); err != nil {
				return "", err
			}
			return run, w.Apply(ctx, sets[0])
		}}
	if err := fixcmd.RunFix(context.Background(), fo); err != nil && !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("fix: %v\n%s", err, errOut)
	}
	if run == "" || storetest.Hash(t, path, store.ShapeStorage) == before {
		t.Fatal("the fix wrote nothing")
	}

	f, _, errOut = factory()
	if err := RunUndo(context.Background(), &UndoOptions{Factory: f, RunID: run, Backup: journal}); err != nil {
		t.Fatalf("undo: %v\n%s", err, errOut)
	}
	if got := errOut.String(); !strings.Contains(got, "run "+run+" was killed while it wrote session") ||
		!strings.Contains(got, "changed nothing that is still different") {
		t.Errorf("undo does not say it rolled the killed run back first:\n%s", got)
	}
	if storetest.Hash(t, path, store.ShapeStorage) != before {
		t.Error("undo did not restore the store")
	}
}

// TestUndoLockedStorePrintsItsDocument: an undo stopped because another
// sessfix holds the store (exit 4) prints its --format json document, as
// fix and the cuts do, nothing restored.
func TestUndoLockedStorePrintsItsDocument(t *testing.T) {
	path := materialize(t, store.ShapeSessions, "preflight-blank-text")
	journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
	fixBackedUp(t, path, journal)
	fixed := storetest.Hash(t, path, store.ShapeSessions)
	lock, err := store.AcquireLock(storetest.OpenOne(t, path).Info())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, last := range []bool{false, true} {
		f, out, _ := factory()
		f.Globals.Format = "json"
		opts := &UndoOptions{Factory: f, Last: last, Backup: journal}
		if !last {
			runs, _ := backup.List(journal)
			opts.RunID = runs[0].ID
		}
		if err := RunUndo(context.Background(), opts); !errors.Is(err, store.ErrLocked) {
			t.Fatalf("undo (--last %v) of a locked store: %v", last, err)
		}
		var doc map[string]any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil || !strings.Contains(fmt.Sprint(doc["error"]), "another sessfix") {
			t.Errorf("undo (--last %v): document %v (%v)\n%s", last, doc, err, out)
		}
	}
	if storetest.Hash(t, path, store.ShapeSessions) != fixed {
		t.Error("the locked store changed")
	}
}

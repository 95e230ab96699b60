package fix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/internal/atomicfile/atomicfiletest"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// midRunCases are four sessions that each need a repair.
var midRunCases = []string{"preflight-reasoning-after-tool", "preflight-blank-text", "preflight-thinking-only", "sf105-abandoned-tool"}

// midRun runs `sessfix fix --yes` on path through the real backup journal
// with the writers' options given, and returns the journal and the error.
func midRun(t *testing.T, path string, write store.WriteOptions) (backup.Options, error) {
	t.Helper()
	journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }, Write: write}
	e := newEnv(path)
	e.opts.Yes = true
	e.opts.Apply = func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
		return backup.Apply(ctx, journal, info, sets)
	}
	return journal, e.run(t)
}

// checkMidRun checks what fix said about a write that failed part way
// through a run, and that the run holds exactly the sessions it says were
// written, which `sessfix undo RUN` reverts byte for byte.
func checkMidRun(t *testing.T, err error, journal backup.Options, path string, shape store.Shape, before string) *backup.ApplyError {
	t.Helper()
	var ae *backup.ApplyError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want a *backup.ApplyError", err)
	}
	hints := strings.Join(cli.Hints(err), "\n")
	runs, lerr := backup.List(journal)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if len(ae.Written) == 0 {
		if ae.RunID != "" || len(runs) != 0 {
			t.Errorf("nothing was written, yet the run is %q and the journal holds %d runs", ae.RunID, len(runs))
		}
		if strings.Contains(hints, "undo") {
			t.Errorf("nothing was written, yet the hints speak of undo:\n%s", hints)
		}
		if got := storetest.State(t, path, shape); got != before {
			t.Errorf("nothing was written, yet the store changed")
		}
		return ae
	}
	if slices.Contains(ae.Written, ae.Session) {
		t.Errorf("session %s failed but is listed as written: %v", ae.Session, ae.Written)
	}
	verb := map[bool]string{true: "was", false: "were"}[len(ae.Written) == 1]
	want := fmt.Sprintf("%s %s written before the failure", strings.Join(ae.Written, ", "), verb)
	if !strings.Contains(hints, want) || !strings.Contains(hints, "`sessfix undo "+ae.RunID+"` reverts") {
		t.Errorf("hints do not say %q and how to undo run %s:\n%s", want, ae.RunID, hints)
	}
	if strings.Contains(hints, "nothing was changed") || strings.Contains(hints, "nothing was written") {
		t.Errorf("hints say nothing was changed after sessions were written:\n%s", hints)
	}
	if len(runs) != 1 || runs[0].ID != ae.RunID || runs[0].Sessions != len(ae.Written) || runs[0].State != backup.StateApplied {
		t.Errorf("journal = %+v, want run %s holding the %d written sessions, applied", runs, ae.RunID, len(ae.Written))
	}
	if storetest.State(t, path, shape) == before {
		t.Errorf("sessions %v are said to be written, but the store did not change", ae.Written)
	}
	if _, err := backup.Undo(context.Background(), journal, ae.RunID, false); err != nil {
		t.Fatalf("undo %s: %v", ae.RunID, err)
	}
	if storetest.State(t, path, shape) != before {
		t.Errorf("undo %s did not restore the store byte for byte", ae.RunID)
	}
	return ae
}

// TestMidRunWriteFailureSaysWhatWasWritten: a disk that fills up at any
// write of a JSON store's run stops fix there. The sessions written before
// stay written, and the error and hints say which they are and that undo
// reverts them, never that nothing was changed; the failed session is put
// back and left out of the run, and a run that wrote nothing leaves no
// backup.
func TestMidRunWriteFailureSaysWhatWasWritten(t *testing.T) {
	seen := map[int]bool{}
	for n := 1; ; n++ {
		if n > 200 {
			t.Fatal("the run never completed")
		}
		path := materialize(t, store.ShapeStorage, midRunCases...)
		before := storetest.State(t, path, store.ShapeStorage)
		journal, err := midRun(t, path, store.WriteOptions{Files: &atomicfiletest.FaultOps{WriteErr: syscall.ENOSPC, FailWriteAt: n}})
		if err == nil || errors.Is(err, cli.ErrFindings) {
			break // past the run's last write
		}
		ae := checkMidRun(t, err, journal, path, store.ShapeStorage, before)
		if !strings.Contains(strings.Join(cli.Hints(err), "\n"), "the disk is full") {
			t.Errorf("write %d: no disk-full hint: %q", n, cli.Hints(err))
		}
		seen[len(ae.Written)] = true
	}
	for w := range len(midRunCases) {
		if !seen[w] {
			t.Errorf("no failure point with %d sessions written before it", w)
		}
	}
}

// TestMidRunDatabaseFailureSaysWhatWasWritten is the same on SQLite: a
// trigger makes every write to one session's rows fail, as a full disk
// would, for each session in turn.
func TestMidRunDatabaseFailureSaysWhatWasWritten(t *testing.T) {
	probe := materialize(t, store.ShapeSQLite, midRunCases...)
	sessions := storetest.LoadAll(t, storetest.OpenOne(t, probe))
	if len(sessions) != len(midRunCases) {
		t.Fatalf("%d sessions, want %d", len(sessions), len(midRunCases))
	}
	written := map[int]bool{}
	for _, s := range sessions {
		t.Run(s.ID, func(t *testing.T) {
			path := materialize(t, store.ShapeSQLite, midRunCases...)
			var stmts []string
			for _, table := range []string{"message", "part"} {
				for _, ev := range []struct{ op, row string }{{"UPDATE", "OLD"}, {"DELETE", "OLD"}, {"INSERT", "NEW"}} {
					stmts = append(stmts, fmt.Sprintf(`CREATE TRIGGER fail_%s_%s BEFORE %s ON %s WHEN %s.session_id = '%s'
						BEGIN SELECT RAISE(ABORT, 'database or disk is full (injected)'); END`, table, ev.op, ev.op, table, ev.row, s.ID))
				}
			}
			storetest.ExecSQL(t, path, stmts...)
			before := storetest.State(t, path, store.ShapeSQLite)
			journal, err := midRun(t, path, store.WriteOptions{})
			ae := checkMidRun(t, err, journal, path, store.ShapeSQLite, before)
			if ae.Session != s.ID {
				t.Errorf("failed session = %s, want %s", ae.Session, s.ID)
			}
			written[len(ae.Written)] = true
		})
	}
	if !written[0] || len(written) < 2 {
		t.Errorf("failures with %v sessions written before them; want the first session and a later one", written)
	}
}

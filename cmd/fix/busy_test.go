package fix

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// killedMidTurn is a session OpenCode was killed in the middle of (its
// newest assistant message has neither time.completed nor an error: only
// SF301 repairs it), written to a sessions store whose files are idle old.
func killedMidTurn(t *testing.T, idle time.Duration) (path string, now time.Time) {
	t.Helper()
	fx, err := storetest.LoadExportFixture(filepath.Join(fixtures, "sf301-stale", "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	created, err := fx.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	now = created.Add(time.Hour)
	path = storetest.Materialize(t, store.ShapeSessions, t.TempDir(), fx)
	storetest.SetTimes(t, path, now.Add(-idle))
	return path, now
}

// TestFixShowsTheRepairOfABusySession: OpenCode has the store open and a
// session it was killed in was written 30s ago, so the settle policy says
// it may be in use. Its repair is the one the rules would make if it were
// not (SF301, the unfinished turn), and the dry run shows it, marked as
// skipped, with the reason and the flag that includes it (--dry-run); the JSON
// document counts it as skipped_busy; --force --yes writes it.
func TestFixShowsTheRepairOfABusySession(t *testing.T) {
	path, now := killedMidTurn(t, 30*time.Second)

	dry := newEnv(path)
	dry.opts.Factory.Now = func() time.Time { return now }
	dry.opts.Activity = activityOf(store.ActivityOpen)
	dry.opts.DryRun = true
	if err := dry.run(t); !errors.Is(err, cli.ErrFindings) {
		t.Errorf("dry run: %v, want findings\n%s", err, dry.errOut)
	}
	for _, want := range []string{"would be skipped: its last assistant message is unfinished and opencode (pid 42) has the store open", "add --force", "SF301"} {
		if !strings.Contains(dry.out.String()+dry.errOut.String(), want) {
			t.Errorf("the dry run lacks %q:\n%s%s", want, dry.out, dry.errOut)
		}
	}

	js := newEnv(path)
	js.opts.Factory.Now = func() time.Time { return now }
	js.opts.Factory.Globals.Format = "json"
	js.opts.Activity = activityOf(store.ActivityOpen)
	js.opts.DryRun = true
	_ = js.run(t)
	if !strings.Contains(js.out.String(), `"skipped_busy": 1`) {
		t.Errorf("the JSON document does not count the busy session:\n%s", js.out)
	}

	// fix --yes holds the session back, names it, writes nothing, and
	// exits 0: it did all it may do now (a live turn is not a finding).
	held := newEnv(path)
	held.opts.Factory.Now = func() time.Time { return now }
	held.opts.Activity = activityOf(store.ActivityOpen)
	held.opts.Yes = true
	if err := held.run(t); err != nil {
		t.Errorf("fix --yes with the session held back: %v, want exit 0\n%s", err, held.errOut)
	}
	if held.ap.n != 0 || !strings.Contains(held.errOut.String(), "skipped session") {
		t.Errorf("fix --yes wrote the busy session or did not name it:\n%s", held.errOut)
	}

	forced := newEnv(path)
	forced.opts.Factory.Now = func() time.Time { return now }
	forced.opts.Activity = activityOf(store.ActivityOpen)
	forced.opts.Yes, forced.opts.Force = true, true
	if err := forced.run(t); err != nil && !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("fix --force --yes: %v\n%s", err, forced.errOut)
	}
	if forced.ap.n != 1 || !strings.Contains(forced.errOut.String(), "fixing it anyway because of --force") {
		t.Errorf("--force did not fix the busy session:\n%s", forced.errOut)
	}
}

// TestFixAbandonedTurnIsNotBusyWhileOpenCodeRuns: the unfinished turn was
// last written 11 minutes ago, past the abandon window, and OpenCode has
// the store open and touched the session record a minute ago (its title,
// say): that is no sign of the turn being written, so `fix --yes` repairs
// it without --force.
func TestFixAbandonedTurnIsNotBusyWhileOpenCodeRuns(t *testing.T) {
	path, now := killedMidTurn(t, 11*time.Minute)
	infos, _ := filepath.Glob(filepath.Join(path, "*", "session.json"))
	if len(infos) != 1 {
		t.Fatalf("session records %v, want one", infos)
	}
	if err := os.Chtimes(infos[0], now.Add(-time.Minute), now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	e := newEnv(path)
	e.opts.Factory.Now = func() time.Time { return now }
	e.opts.Activity = activityOf(store.ActivityOpen)
	e.opts.Yes = true
	if err := e.run(t); err != nil && !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("fix --yes: %v\n%s", err, e.errOut)
	}
	if e.ap.n != 1 || !strings.Contains(e.errOut.String(), "fixed 1 session") {
		t.Errorf("the abandoned turn was not fixed:\n%s", e.errOut)
	}
}

package cut

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/cmd/internal/plandoc"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

const fixtures = "../../../testdata/sessions"

// session writes a fixture (a finished turn whose thinking comes after its
// tool call) into a sessions-layout store, its files written a second
// before the clock it returns; reopen drops time.completed from its newest
// assistant message, as while OpenCode streams the next step.
func session(t *testing.T, reopen bool) (path, id string, now time.Time) {
	t.Helper()
	fx, err := storetest.LoadExportFixture(filepath.Join(fixtures, "preflight-reasoning-after-tool", "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	if reopen {
		created, err := fx.Reopen()
		if err != nil {
			t.Fatal(err)
		}
		now = created.Add(time.Minute)
	}
	path = storetest.Materialize(t, store.ShapeSessions, t.TempDir(), fx)
	storetest.SetTimes(t, path, now.Add(-time.Second))
	return path, fx.ID, now
}

// run cuts the session with the repairs fix would plan, and returns
// stderr, whether anything was written, and the error.
func run(t *testing.T, path, id string, now time.Time, force bool) (stderr string, written bool, err error) {
	t.Helper()
	_, stderr, written, err = runOpts(t, path, id, now, func(o *Options) { o.Force = force })
	return stderr, written, err
}

// runOpts is run with the options edit changes, returning stdout too.
func runOpts(t *testing.T, path, id string, now time.Time, edit func(*Options)) (stdout, stderr string, written bool, err error) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := cli.New(cli.BuildInfo{Version: "test"})
	f.IOStreams = ios
	f.Now = func() time.Time { return now }
	opts := &Options{
		Factory: f, Verb: "drop", Session: id, Paths: []string{path}, Yes: true,
		Settle: opencode.DefaultSettle, Abandon: opencode.DefaultAbandon,
		Apply: func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
			w, err := shapes.OpenWriter(info, store.WriteOptions{})
			if err != nil {
				return "", err
			}
			defer w.Close()
			for _, cs := range sets {
				if err := w.Apply(ctx, cs); err != nil {
					return "", err
				}
			}
			written = true
			return "run", nil
		},
	}
	edit(opts)
	planner := func(s *store.Session, so *scan.Options) (*fix.SessionPlan, error) {
		return fix.Plan(s, scan.CheckSession(s, so), fix.Options{Now: f.Now, Scan: so})
	}
	err = Run(context.Background(), opts, planner)
	return out.String(), errOut.String(), written, err
}

// TestCutFollowsTheSettlePolicy: a cut asks the settle policy fix asks. A
// session whose newest assistant message is unfinished and changed a
// second ago is left alone (exit 4, said why), or cut loudly with --force;
// a finished turn written a second ago is cut at once.
func TestCutFollowsTheSettlePolicy(t *testing.T) {
	path, id, now := session(t, true)
	stderr, written, err := run(t, path, id, now, false)
	const why = "its last assistant message is unfinished and the session changed 1s ago"
	if !errors.Is(err, store.ErrLocked) || written || !strings.Contains(err.Error(), why+", so OpenCode may still be writing it") {
		t.Errorf("an open turn changed 1s ago: err %v, written %v\n%s", err, written, stderr)
	}
	// A dry run shows the plan, marked as one that would be skipped.
	var stdout string
	stdout, stderr, written, err = runOpts(t, path, id, now, func(o *Options) { o.DryRun = true })
	if !errors.Is(err, store.ErrLocked) || written || !strings.Contains(stdout, "    would be skipped: "+why) || !strings.Contains(stdout, "fix SF") {
		t.Errorf("--dry-run: err %v, written %v\n%s%s", err, written, stdout, stderr)
	}
	stderr, written, err = run(t, path, id, now, true)
	if err != nil || !written || !strings.Contains(stderr, "may still be in use ("+why+"); writing anyway because of --force") {
		t.Errorf("--force: err %v, written %v\n%s", err, written, stderr)
	}

	path, id, now = session(t, false)
	if stderr, written, err := run(t, path, id, now, false); err != nil || !written {
		t.Errorf("a finished turn changed 1s ago: err %v, written %v\n%s", err, written, stderr)
	}
}

// TestCutLockedStorePrintsItsDocument: a cut stopped because another
// sessfix holds the store (exit 4) still prints its --format json
// document, the lock as the store's error, nothing written.
func TestCutLockedStorePrintsItsDocument(t *testing.T) {
	path, id, now := session(t, false)
	lock, err := store.AcquireLock(storetest.OpenOne(t, path).Info())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	stdout, stderr, written, err := runOpts(t, path, id, now, func(o *Options) { o.Factory.Globals.Format = "json" })
	if !errors.Is(err, store.ErrLocked) || written {
		t.Fatalf("err %v, written %v\n%s", err, written, stderr)
	}
	var doc plandoc.FixDocument
	if jerr := json.Unmarshal([]byte(stdout), &doc); jerr != nil {
		t.Fatalf("no JSON document: %v\n%q", jerr, stdout)
	}
	if doc.Written || len(doc.Stores) != 1 || doc.Stores[0].Path != path || !strings.Contains(doc.Stores[0].Error, "another sessfix") {
		t.Errorf("document %+v, want the store with the lock as its error", doc)
	}
}

package fix

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestFixQuarantinesAnUnreadableMessageWithItsUnreadablePart: an
// unreadable message whose part directory also holds an unreadable part.
// Quarantining the message takes its parts along, so the plan must not
// also hold the part's own quarantine (which would then find the part gone
// and fail every run with "changed since the scan"). The run succeeds and
// a second run has nothing to change.
func TestFixQuarantinesAnUnreadableMessageWithItsUnreadablePart(t *testing.T) {
	root := t.TempDir()
	if err := ocrelease.CopyTree(filepath.Join(fixtures, "sf201-corrupt-records", "store"), root); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "sessions")
	partDir := filepath.Join(path, "ses_3b938957ffffNnlPTlzDVPmdaI", "parts", "msg_c46c78a4a000GDwaxRbGfFfs3w")
	if err := os.WriteFile(filepath.Join(partDir, "prt_c46c78a4b000TruncatedPart01.json"), []byte(`{"id":"prt_c46c78a4b0`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := storetest.State(t, path, store.ShapeSessions)
	journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
	apply := func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
		return backup.Apply(ctx, journal, info, sets)
	}
	e := newEnv(path)
	e.opts.Yes, e.opts.Apply = true, apply
	if err := e.run(t); err != nil && !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("fix: %v\n%s", err, e.errOut)
	}
	runs, err := backup.List(journal)
	if err != nil || len(runs) != 1 {
		t.Fatalf("backup runs %v (%v), want one", runs, err)
	}
	if _, err := os.Stat(partDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the quarantined message's parts are still there (%v)", err)
	}
	again := newEnv(path)
	again.opts.Yes, again.opts.Apply = true, apply
	if err := again.run(t); err != nil && !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("second fix: %v\n%s", err, again.errOut)
	}
	if !strings.Contains(again.errOut.String(), "nothing to change") {
		t.Errorf("second fix changed something:\n%s", again.errOut)
	}
	// The part went with its message, backed up: undo puts both back.
	if _, err := backup.Undo(context.Background(), journal, runs[0].ID, false); err != nil {
		t.Fatal(err)
	}
	if got := storetest.State(t, path, store.ShapeSessions); got != before {
		t.Error("undo did not put the store back as it was")
	}
}

package write

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// exportStore copies a healthy export file into a temporary directory and
// opens it.
func exportStore(t *testing.T) store.Store {
	t.Helper()
	b, err := os.ReadFile("../../testdata/stores/healthy.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "healthy.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return storetest.OpenOne(t, path)
}

// flow is a flow over a journal in dir, closed when the test ends.
func flow(t *testing.T, dir string, opts Options) *Flow {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	f := cli.New(cli.BuildInfo{Version: "test"})
	f.IOStreams = ios
	fl := New(f, &fix.Pipeline{Write: fix.WriteOptions{Backup: backup.Options{Dir: dir}}}, opts)
	t.Cleanup(func() {
		if err := fl.Close(); err != nil {
			t.Error(err)
		}
	})
	return fl
}

// TestDryRunWarnsOnAnUnreadableJournal: a dry run that cannot look in the
// backup journal for a killed run says so, since the run that writes will
// stop on the same journal.
func TestDryRunWarnsOnAnUnreadableJournal(t *testing.T) {
	state := t.TempDir()
	// backups is a file, not a folder: the journal cannot be listed.
	if err := os.WriteFile(filepath.Join(state, "backups"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ios, _, _, errOut := iostreams.Test()
	f := cli.New(cli.BuildInfo{Version: "test"})
	f.IOStreams = ios
	fl := New(f, &fix.Pipeline{Write: fix.WriteOptions{Backup: backup.Options{Dir: state}}}, Options{DryRun: true})
	defer fl.Close()
	if err := fl.Begin(context.Background(), exportStore(t)); err != nil {
		t.Fatal(err)
	}
	if got := errOut.String(); !strings.HasPrefix(got, "warning: cannot look for a sessfix run killed") {
		t.Fatalf("stderr = %q, want a warning that the journal cannot be read", got)
	}
}

// TestFlowLocksOnlyWhenItWrites: a dry run's flow leaves the store's
// writer lock free; one that writes (--yes) holds it from Begin to Close.
func TestFlowLocksOnlyWhenItWrites(t *testing.T) {
	ctx := context.Background()
	st := exportStore(t)
	dir := t.TempDir()
	opts := fix.WriteOptions{Backup: backup.Options{Dir: dir}}

	dry := flow(t, dir, Options{DryRun: true, Yes: true})
	if dry.Mode() != cli.WriteDry {
		t.Fatalf("mode %v, want a dry run", dry.Mode())
	}
	if err := dry.Begin(ctx, st); err != nil {
		t.Fatal(err)
	}
	tx, err := fix.Begin(ctx, st, opts, false)
	if err != nil {
		t.Fatalf("a writing transaction beside a dry run: %v", err)
	}
	if err := tx.Close(); err != nil {
		t.Fatal(err)
	}

	wet := flow(t, dir, Options{Yes: true})
	if err := wet.Begin(ctx, st); err != nil {
		t.Fatal(err)
	}
	if tx, err := fix.Begin(ctx, st, opts, false); !errors.Is(err, store.ErrLocked) {
		tx.Close()
		t.Fatalf("Begin beside a writing flow = %v, want store.ErrLocked", err)
	}
	if err := wet.Close(); err != nil {
		t.Fatal(err)
	}
	tx, err = fix.Begin(ctx, st, opts, false)
	if err != nil {
		t.Fatalf("Begin after the flow closed: %v", err)
	}
	if err := tx.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFlowAsksThroughTheFactory: the question comes from the Factory's
// Prompter, and a declined write is nothing written (exit 1).
func TestFlowAsksThroughTheFactory(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	f := cli.New(cli.BuildInfo{Version: "test"})
	f.IOStreams = ios
	var asked string
	f.Prompter = &cli.StubPrompter{Terminal: true, Answer: func(q string) (bool, error) { asked = q; return false, nil }}
	fl := New(f, &fix.Pipeline{}, Options{})
	if fl.Mode() != cli.WriteAsk {
		t.Fatalf("mode %v, want a question", fl.Mode())
	}
	if err := fl.Confirm(context.Background(), "2 edits"); !errors.Is(err, cli.ErrFindings) {
		t.Errorf("declined: %v, want ErrFindings", err)
	}
	if asked != "write 2 edits?" || !strings.Contains(errOut.String(), "nothing written") {
		t.Errorf("asked %q, stderr %q", asked, errOut)
	}
}

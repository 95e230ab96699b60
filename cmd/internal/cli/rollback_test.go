package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
)

// TestSayInterruptedWarnsOnAnUnreadableJournal: a dry run that cannot look
// in the backup journal for a killed run says so, since the run that
// writes will stop on the same journal.
func TestSayInterruptedWarnsOnAnUnreadableJournal(t *testing.T) {
	state := t.TempDir()
	// backups is a file, not a folder: the journal cannot be listed.
	if err := os.WriteFile(filepath.Join(state, "backups"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ios, _, _, errOut := iostreams.Test()
	SayInterrupted(ios, backup.Options{Dir: state}, store.Info{Shape: store.ShapeStorage, Path: t.TempDir()})
	if got := errOut.String(); !strings.HasPrefix(got, "warning: cannot look for a sessfix run killed") {
		t.Fatalf("stderr = %q, want a warning that the journal cannot be read", got)
	}
}

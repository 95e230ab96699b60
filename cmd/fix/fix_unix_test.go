//go:build unix

package fix

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestFixLeavesEntriesItCannotBackUp: a directory, a FIFO or a file where a
// record or a directory belongs cannot be backed up, so fix reports it
// without a repair, still repairs the rest of the session, and never plans
// a change set it cannot write.
func TestFixLeavesEntriesItCannotBackUp(t *testing.T) {
	path := materialize(t, store.ShapeStorage, "preflight-blank-text")
	parts := filepath.Join(path, "part")
	if err := os.Mkdir(filepath.Join(parts, "msg_cc3e098fc0007xyAOKWXuOhe7q", "prt_cc3e09cb5001zzzzzzzzzzzzzz.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(parts, "msg_cc3e098fc0007xyAOKWXuOhe7q", "prt_cc3e09cb5002zzzzzzzzzzzzzz.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(parts, "msg_cc3e0a2b90007TIwsFVAjCqUB1")
	if err := os.RemoveAll(user); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte("a file where the message's part directory belongs"), 0o644); err != nil {
		t.Fatal(err)
	}
	storetest.SetTimes(t, path, clock.Add(-24*time.Hour))

	e := newEnv(path)
	e.opts.Yes = true
	if err := e.run(t); !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("fix: err = %v, want findings left\n%s", err, e.errOut)
	}
	out := e.out.String()
	if got := strings.Count(out, "sessfix cannot back it up"); got != 3 {
		t.Errorf("%d entries reported as impossible to back up, want 3:\n%s", got, out)
	}
	if strings.Contains(out, "fix SF201") || e.ap.n != 1 {
		t.Errorf("fix planned a repair for an entry it cannot back up, or did not write the rest (%d writes):\n%s\n%s", e.ap.n, out, e.errOut)
	}
	if !strings.Contains(out, "fix SF151") { // the empty text, as the preflight reports it
		t.Errorf("the session's other findings were not repaired:\n%s\n%s", out, e.errOut)
	}
}

package fix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
)

// TestFixNeverWritesADamagedDatabase: a copy of the recorded 1.18.33
// database with a blank text part (a repair fix plans) and one leaf page of
// the part table overwritten, as a torn write or a bad sector leaves it.
// With the salvage (SF501) left out by --ignore, the sessions on the
// other pages still load and the dry run shows their plan, but `fix --yes`
// refuses with a *store.DamagedError naming the
// file (exit 3, a hint to keep a copy), before any backup run: not a byte
// of the database changes.
func TestFixNeverWritesADamagedDatabase(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.WhitespaceText(t)
	keep := []string{}
	for _, m := range rs.Load(t).Messages {
		for _, p := range m.Parts {
			keep = append(keep, p.ID)
		}
	}
	rs.DamagePage(t, "part", keep...)
	before := fileBytes(t, rs.Path)

	dry := newEnv(rs.Path)
	dry.opts.Ignore = []string{"SF501"}
	if err := dry.run(t); !strings.Contains(fmt.Sprint(err)+dry.errOut.String(), "1 edit to 1 session") {
		t.Fatalf("dry run on the damaged database: %v\n%s", err, dry.errOut)
	}

	journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
	e := newEnv(rs.Path)
	e.opts.Yes = true
	e.opts.Ignore = []string{"SF501"}
	e.opts.Apply = func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
		return backup.Apply(ctx, journal, info, sets)
	}
	err := e.run(t)
	var damaged *store.DamagedError
	if !errors.As(err, &damaged) || damaged.Path != rs.Path || !strings.Contains(err.Error(), rs.Path+" is damaged") {
		t.Fatalf("fix --yes on a damaged database: %v, want a *store.DamagedError naming %s\n%s", err, rs.Path, e.errOut)
	}
	if hints := cli.Hints(err); len(hints) == 0 || !strings.Contains(strings.Join(hints, "\n"), "keep a copy") {
		t.Errorf("hints %q do not say to keep a copy", hints)
	}
	if !bytes.Equal(fileBytes(t, rs.Path), before) {
		t.Error("fix wrote into the damaged database")
	}
	if runs, err := backup.List(journal); err != nil || len(runs) != 0 {
		t.Errorf("backup runs %v (%v), want none", runs, err)
	}
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

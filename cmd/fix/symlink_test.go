//go:build unix

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
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
)

// TestFixLeavesThePartsOfASymlinkedMessage: a message file that is a
// symlink out of the store is reported and left alone; its parts are not
// "orphans" (their message exists, sessfix just does not read it), so
// `fix --yes` quarantines none of them, in every JSON layout.
func TestFixLeavesThePartsOfASymlinkedMessage(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeSessions, store.ShapeProject} {
		t.Run(string(shape), func(t *testing.T) {
			path := materialize(t, shape, "tool-loop-negative")
			var msg string
			_ = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
				if err == nil && msg == "" && strings.HasPrefix(d.Name(), "msg_") && strings.HasSuffix(d.Name(), ".json") {
					msg = p
				}
				return nil
			})
			if msg == "" {
				t.Fatalf("no message file under %s", path)
			}
			id := strings.TrimSuffix(filepath.Base(msg), ".json")
			outside := filepath.Join(t.TempDir(), filepath.Base(msg))
			if err := os.Rename(msg, outside); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, msg); err != nil {
				t.Fatal(err)
			}
			var parts []string
			_ = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "prt_") && filepath.Base(filepath.Dir(p)) == id {
					parts = append(parts, p)
				}
				return nil
			})
			if len(parts) == 0 {
				t.Fatalf("message %s has no parts under %s", id, path)
			}

			e := newEnv(path)
			e.opts.Yes = true
			journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
			e.opts.Apply = func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
				return backup.Apply(ctx, journal, info, sets)
			}
			if err := e.run(t); err != nil && !errors.Is(err, cli.ErrFindings) {
				t.Fatalf("fix: %v\n%s", err, e.errOut)
			}
			for _, p := range parts {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("part %s of the symlinked message was removed: %v\n%s", filepath.Base(p), err, e.errOut)
				}
			}
			if strings.Contains(e.out.String()+e.errOut.String(), "SF203") {
				t.Errorf("the symlinked message's parts are reported as orphans:\n%s\n%s", e.out, e.errOut)
			}
		})
	}
}

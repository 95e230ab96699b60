package fix

import (
	"context"
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// WriteOptions configure the write step of a Pipeline.
type WriteOptions struct {
	// Backup locates the backup journal and tunes the store writers.
	Backup backup.Options
	// Rollbacks, when set, hears what Begin did about change sets a killed
	// sessfix left half-written: rolled back under the writer lock
	// (backup.Lock), or, in a dry run, to be rolled back by the first run
	// that writes (backup.Interrupted).
	Rollbacks func([]backup.Rollback)
	// Warn, when set, hears a dry run's backup journal that cannot be
	// read: the first run that writes stops on it.
	Warn func(error)
	// Apply replaces backup.Tx.Apply in a transaction's writes: the one seam
	// where tests inject a failing or counting write. It is called under
	// the store's writer lock, with the store the change sets name.
	Apply func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (runID string, err error)
	// Scan holds the settle window and clock verification scans with; its
	// rule filters are ignored.
	Scan *scan.Options
}

// verify ends a write: it names the store in a failure, else re-reads
// every written session from disk and checks it (Verify).
func verify(ctx context.Context, st store.Store, plans []Outcome, opts WriteOptions, runID string, err error) (string, error) {
	if err != nil {
		info := st.Info()
		if strings.Contains(err.Error(), info.Path) {
			// A database's errors name it already: once is enough.
			return runID, fmt.Errorf("cannot write %s store: %w", info.Shape, err)
		}
		return runID, fmt.Errorf("cannot write %s store %s: %w", info.Shape, info.Path, err)
	}
	for _, p := range plans {
		if !p.Changes() {
			continue
		}
		if err := Verify(context.WithoutCancel(ctx), st, p.Ref, p.Plan, opts.Scan); err != nil {
			return runID, err
		}
	}
	return runID, nil
}

// Verify re-reads a written session from disk and checks that every finding
// its plan fixes is gone (a stored failed attempt, SF302, stays on purpose).
func Verify(ctx context.Context, st store.Store, ref store.SessionRef, plan *SessionPlan, sopts *scan.Options) error {
	s, err := st.Load(ctx, ref)
	if err != nil {
		return fmt.Errorf("session %s cannot be loaded after the fix: %w", ref.ID, err)
	}
	var vopts scan.Options
	if sopts != nil {
		vopts = *sopts
	}
	vopts.Select, vopts.Ignore, vopts.Sessions = nil, nil, nil
	after := scan.CheckSession(s, &vopts)
	for _, r := range plan.Fixed {
		if r.Finding.Code == scan.SF302 {
			continue
		}
		for _, g := range after {
			if g.Code == r.Finding.Code && g.MessageID == r.Finding.MessageID && g.PartID == r.Finding.PartID {
				return fmt.Errorf("verification failed: %s is still reported on session %s after the fix (%s)", g.Code, s.ID, g.Message)
			}
		}
	}
	return nil
}

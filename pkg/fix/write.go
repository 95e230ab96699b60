package fix

import (
	"context"
	"fmt"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// Planned is one session's plan, ready to write.
type Planned struct {
	Ref  store.SessionRef
	Plan *SessionPlan
}

// WriteOptions configure Write.
type WriteOptions struct {
	// Backup locates the backup journal and tunes the store writers.
	Backup backup.Options
	// Apply replaces backup.Apply (tests). The caller of Apply holds the
	// store's writer lock.
	Apply func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (runID string, err error)
	// Scan holds the settle window and clock verification scans with; its
	// rule filters are ignored.
	Scan *scan.Options
}

// Write is the write half of `fix` for one store: it takes the store's
// writer lock, backs every change set up and applies it in one backup run
// (so `sessfix undo RUN` reverts it), releases the lock, and re-reads every
// written session from disk to verify that the findings its plan fixes are
// gone.
//
// When another sessfix holds the writer lock the error wraps
// store.ErrLocked and nothing is written. Once applying has begun it is not
// interrupted by ctx: a change set is either applied whole or not at all.
// On failure the run id is still returned when something was written, so
// it can be undone.
func Write(ctx context.Context, st store.Store, plans []Planned, opts WriteOptions) (runID string, err error) {
	var sets []*store.ChangeSet
	for _, p := range plans {
		if !p.Plan.Empty() {
			sets = append(sets, p.Plan.Changes)
		}
	}
	if len(sets) == 0 {
		return "", nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	info := st.Info()
	lock, err := store.AcquireLock(info)
	if err != nil {
		return "", err
	}
	apply := opts.Apply
	if apply == nil {
		apply = func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
			return backup.Apply(ctx, opts.Backup, info, sets)
		}
	}
	runID, err = apply(context.WithoutCancel(ctx), info, sets)
	if uerr := lock.Release(); uerr != nil && err == nil {
		err = uerr
	}
	if err != nil {
		return runID, fmt.Errorf("cannot fix %s store %s: %w", info.Shape, info.Path, err)
	}
	for _, p := range plans {
		if p.Plan.Empty() {
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
		if r.Finding.Code == "SF302" {
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

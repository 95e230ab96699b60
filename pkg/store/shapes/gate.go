package shapes

import (
	"context"

	"github.com/sessfix/sessfix/pkg/store"
)

// gated is a shape's writer whose changes to the store are marked under
// way (store.Writing) while they run, so that a sessfix stopped at once
// (store.ReleaseHeld) never removes a writer lock in the middle of one.
type gated struct{ store.Writer }

var _ store.Writer = gated{}

func (g gated) Apply(ctx context.Context, cs *store.ChangeSet) error {
	defer store.Writing()()
	return g.Writer.Apply(ctx, cs)
}

func (g gated) Restore(ctx context.Context, images []store.Image) error {
	defer store.Writing()()
	return g.Writer.Restore(ctx, images)
}

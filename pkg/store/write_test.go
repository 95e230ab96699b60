package store

import (
	"context"
	"testing"
)

// applyBackedUp applies cs the way a backup run drives a writer: it lists
// the targets, reads their images, then applies. It returns the targets and
// the images, so a test can check what was covered and restore it.
func applyBackedUp(t *testing.T, w StoreWriter, cs *ChangeSet) ([]Target, []Image) {
	t.Helper()
	ctx := context.Background()
	targets, err := w.Targets(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	images, err := w.Read(ctx, targets)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(ctx, cs); err != nil {
		t.Fatal(err)
	}
	return targets, images
}

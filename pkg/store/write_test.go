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
	targets, images := backedUp(t, w, cs)
	if err := w.Apply(context.Background(), cs); err != nil {
		t.Fatal(err)
	}
	return targets, images
}

// backedUp lists and reads what cs will touch, as the backup journal does
// before Apply.
func backedUp(t *testing.T, w StoreWriter, cs *ChangeSet) ([]Target, []Image) {
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
	return targets, images
}

// expectNow sets each image's Expect to its target's current state, as
// undo does after checking the store.
func expectNow(t *testing.T, w StoreWriter, targets []Target, images []Image) {
	t.Helper()
	cur, err := w.Read(context.Background(), targets)
	if err != nil {
		t.Fatal(err)
	}
	for i := range images {
		h := cur[i].Hash()
		images[i].Expect = &h
	}
}

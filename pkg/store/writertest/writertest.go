// Package writertest drives a store.Writer the way pkg/backup does (list
// the targets, read their images, apply; restore over an expected state),
// for the tests of every shape's writer.
package writertest

import (
	"context"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// The ids of the session every writer test builds: messages A (part 1)
// and B (parts 2 and 3), and ids to add or re-key to.
const (
	Ses    = "ses_7ffffffffff0aaaaaaaaaaaaaa"
	MsgA   = "msg_0000000000010000000000000a"
	MsgB   = "msg_0000000000020000000000000b"
	MsgNew = "msg_00000000000100000000000009"
	Prt1   = "prt_0000000000010000000000000a"
	Prt2   = "prt_0000000000020000000000000a"
	Prt3   = "prt_0000000000020000000000000b"
	PrtNew = "prt_0000000000020000000000000c"
	PrtRk  = "prt_00000000000200000000000001"
)

// ApplyBackedUp applies cs the way a backup run drives a writer: it lists
// the targets, reads their images, then applies. It returns the targets and
// the images, so a test can check what was covered and restore it.
func ApplyBackedUp(t testing.TB, w store.Writer, cs *store.ChangeSet) ([]store.Target, []store.Image) {
	t.Helper()
	targets, images := BackedUp(t, w, cs)
	if err := w.Apply(context.Background(), cs); err != nil {
		t.Fatal(err)
	}
	return targets, images
}

// BackedUp lists and reads what cs will touch, as the backup journal does
// before Apply.
func BackedUp(t testing.TB, w store.Writer, cs *store.ChangeSet) ([]store.Target, []store.Image) {
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

// ExpectNow sets each image's Expect to its target's current state, as
// undo does after checking the store.
func ExpectNow(t testing.TB, w store.Writer, targets []store.Target, images []store.Image) {
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

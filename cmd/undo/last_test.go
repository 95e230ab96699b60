package undo

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestUndoLastInterruptedSaysSo: undo --last interrupted before a run of
// the operation is undone restores nothing, and its JSON document says
// it failed and why instead of reporting the operation undone.
func TestUndoLastInterruptedSaysSo(t *testing.T) {
	path := materialize(t, store.ShapeSessions, "preflight-blank-text")
	journal := backup.Options{Dir: t.TempDir(), Now: func() time.Time { return clock }}
	fixBackedUp(t, path, journal)
	fixed := storetest.Hash(t, path, store.ShapeSessions)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f, out, _ := factory()
	f.Globals.Format = "json"
	err := RunUndo(ctx, &UndoOptions{Factory: f, Last: true, Backup: journal})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted undo --last = %v, want context.Canceled", err)
	}
	if storetest.Hash(t, path, store.ShapeSessions) != fixed {
		t.Fatal("an undo interrupted before it began changed the store")
	}
	var doc UndoDocument
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("undo document: %v\n%s", err, out)
	}
	if doc.Outcome != OutcomeFailed || doc.Error == "" || doc.Operation == "" || len(doc.Runs) != 0 {
		t.Fatalf("outcome %q, error %q, operation %q, %d runs; want failed, the interruption, the operation and no run undone",
			doc.Outcome, doc.Error, doc.Operation, len(doc.Runs))
	}
}

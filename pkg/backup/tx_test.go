package backup_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
)

// TestTxUndoRefusesWhileAnotherWriterHoldsTheStore: undo goes through a
// writing backup.Tx, so while another writer holds the store's lock it is
// refused with store.ErrLocked and restores nothing; once the other
// writer closes, the same undo puts the store back.
func TestTxUndoRefusesWhileAnotherWriterHoldsTheStore(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, store.ShapeStorage)
	run := r.repairRun(t)
	left := storeState(t, r.info)

	info, done, err := backup.Undoable(r.opts, run)
	if err != nil || done != nil {
		t.Fatalf("Undoable = %+v, %v; want the run's store", done, err)
	}
	other, _, err := backup.BeginTx(ctx, r.opts, r.info, false)
	if err != nil {
		t.Fatal(err)
	}
	if tx, _, err := backup.BeginTx(ctx, r.opts, info, false); !errors.Is(err, store.ErrLocked) {
		tx.Close()
		t.Fatalf("undo's BeginTx beside another writer = %v; want store.ErrLocked", err)
	}
	if _, err := backup.Undo(ctx, r.opts, run, false); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Undo beside another writer = %v; want store.ErrLocked", err)
	}
	if storeState(t, r.info) != left {
		t.Fatal("a refused undo changed the store")
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}

	tx, _, err := backup.BeginTx(ctx, r.opts, info, false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.Undo(ctx, run, false)
	if err != nil || len(res.Restored) == 0 {
		t.Fatalf("Tx.Undo once the other writer closed = %+v, %v", res, err)
	}
	if err := tx.Close(); err != nil {
		t.Fatal(err)
	}
	r.assertAsBefore(t, "after undo")
	if _, err := tx.Undo(ctx, run, false); err == nil {
		t.Error("Undo through a closed transaction succeeded")
	}
}

// TestTxDryRunTakesNoLock: a dry-run backup.Tx leaves the writer lock free
// (a writing one begins while it is open), writes nothing and undoes
// nothing.
func TestTxDryRunTakesNoLock(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, store.ShapeStorage)
	dry, rbs, err := backup.BeginTx(ctx, r.opts, r.info, true)
	if err != nil || rbs != nil {
		t.Fatalf("dry BeginTx = %v, %v", rbs, err)
	}
	defer dry.Close()
	if dry.Held() || !dry.DryRun() {
		t.Errorf("dry transaction: Held %v, DryRun %v", dry.Held(), dry.DryRun())
	}
	wet, _, err := backup.BeginTx(ctx, r.opts, r.info, false)
	if err != nil {
		t.Fatalf("a writing transaction beside a dry one: %v", err)
	}
	if !wet.Held() {
		t.Error("a writing transaction does not hold the lock")
	}
	if err := wet.Close(); err != nil {
		t.Fatal(err)
	}
	if run, err := dry.Apply(ctx, []*store.ChangeSet{repair(t, r.s)}); run != "" || err != nil {
		t.Errorf("dry Apply = %q, %v; want nothing written", run, err)
	}
	r.assertAsBefore(t, "after a dry Apply")
	if runs, err := backup.List(r.opts); err != nil || len(runs) != 0 {
		t.Errorf("a dry Apply left runs %+v (%v)", runs, err)
	}
	run := r.repairRun(t)
	if _, err := dry.Undo(ctx, run, false); err == nil {
		t.Error("a dry transaction undid a run")
	}
}

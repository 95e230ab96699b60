package fix

import (
	"context"
	"errors"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestTxDryRunTakesNoLockAndWritesNothing: a dry-run transaction leaves
// the writer lock free (a writing one begins while it is open) and its
// Apply writes nothing, not even through the write seam.
func TestTxDryRunTakesNoLockAndWritesNothing(t *testing.T) {
	p := testPipeline(t)
	path, targets := pipelineStore(t, p, store.ShapeStorage, "preflight-blank-text")
	st := targets[0].Store
	planned := collect(t, p.Plan, targets)
	if !planned[0].Changes() {
		t.Fatal("the fixture plans no change")
	}
	writes := 0
	p.Write.Apply = func(context.Context, store.Info, []*store.ChangeSet) (string, error) { writes++; return "run", nil }
	before := storetest.Hash(t, path, store.ShapeStorage)
	ctx := context.Background()
	dry, err := p.Begin(ctx, st, true)
	if err != nil {
		t.Fatal(err)
	}
	defer dry.Close()
	wet, err := p.Begin(ctx, st, false)
	if err != nil {
		t.Fatalf("a writing transaction beside a dry one: %v", err)
	}
	if err := wet.Close(); err != nil {
		t.Fatal(err)
	}
	if run, err := dry.Apply(ctx, planned); run != "" || err != nil {
		t.Errorf("dry Apply = %q, %v; want nothing written", run, err)
	}
	if writes != 0 || storetest.Hash(t, path, store.ShapeStorage) != before {
		t.Errorf("a dry run wrote: %d writes through the seam, store changed %v", writes, storetest.Hash(t, path, store.ShapeStorage) != before)
	}
}

// TestTxHoldsTheLockUntilClose: a writing transaction holds the store's
// writer lock, so a second one gets store.ErrLocked until the first is
// closed; Apply writes through the seam in one run.
func TestTxHoldsTheLockUntilClose(t *testing.T) {
	p := testPipeline(t)
	_, targets := pipelineStore(t, p, store.ShapeStorage, "preflight-blank-text")
	st := targets[0].Store
	var sets int
	p.Write.Apply = func(_ context.Context, _ store.Info, cs []*store.ChangeSet) (string, error) {
		sets += len(cs)
		return "", nil
	}
	ctx := context.Background()
	tx, err := p.Begin(ctx, st, false)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := p.Begin(ctx, st, false); !errors.Is(err, store.ErrLocked) {
		second.Close()
		t.Fatalf("second Begin = %v, want store.ErrLocked", err)
	}
	if _, err := p.Begin(ctx, st, true); err != nil {
		t.Errorf("a dry run beside a writing one: %v", err)
	}
	planned := collect(t, p.Plan, targets)
	if _, err := tx.Apply(ctx, planned); err == nil || sets != 1 {
		// The seam wrote nothing, so the read-back finds the findings
		// still there: a failed verification.
		t.Errorf("Apply: %d change sets through the seam, err %v; want 1 and a failed verification", sets, err)
	}
	if err := tx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	again, err := p.Begin(ctx, st, false)
	if err != nil {
		t.Fatalf("Begin after Close: %v", err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}

package storegen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// TestCached: a store is generated once and reused; another config or a
// removed store makes it generate again.
func TestCached(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	cfg := Config{Sessions: 2, Messages: 8, Parts: 5, ToolOutput: 40, DefectRate: 0.5, Seed: 2}
	path, st, err := Cached(store.ShapeSQLite, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 2 || st.Messages != 16 || st.DefectCount() == 0 {
		t.Fatalf("stats %+v", st)
	}
	// Reused: a mark left in the directory survives.
	mark := filepath.Join(dir, "mark")
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	again, st2, err := Cached(store.ShapeSQLite, dir, cfg)
	if err != nil || again != path || st2.Messages != st.Messages || st2.DefectCount() != st.DefectCount() {
		t.Fatalf("second call: %s %+v %v, want %s %+v", again, st2, err, path, st)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("the cached store was generated again")
	}
	// Another config: generated anew.
	cfg.Messages = 12
	_, st3, err := Cached(store.ShapeSQLite, dir, cfg)
	if err != nil || st3.Messages != 24 {
		t.Fatalf("another config: %+v %v", st3, err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the store of the old config was kept")
	}
	// The store removed: generated anew.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if p, _, err := Cached(store.ShapeSQLite, dir, cfg); err != nil {
		t.Fatal(err)
	} else if _, err := os.Stat(p); err != nil {
		t.Errorf("no store after its removal: %v", err)
	}
}

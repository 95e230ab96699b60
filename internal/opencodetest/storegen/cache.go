package storegen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessfix/sessfix/pkg/store"
)

// BenchDir is where benchmarks keep generated stores between runs:
// $SESSFIX_BENCH_DIR, default $TMPDIR/sessfix-bench. Remove it to free the
// space.
func BenchDir() string {
	if d := os.Getenv("SESSFIX_BENCH_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "sessfix-bench")
}

// cacheStamp is what a cached store's stamp file records: what it was
// generated from (Key) and what was generated.
type cacheStamp struct {
	Key   string
	Path  string
	Stats Stats
}

// Cached returns the store of the shape generated with cfg in dir,
// generating it when dir holds none, or one from another generator version
// or config (a stamp file in dir records them). dir is removed and written
// anew then.
func Cached(shape store.Shape, dir string, cfg Config) (string, Stats, error) {
	cfg = cfg.withDefaults()
	stampPath := filepath.Join(dir, "stamp.json")
	key, err := json.Marshal(struct {
		Version int
		Shape   store.Shape
		Config  Config
	}{Version, shape, cfg})
	if err != nil {
		return "", Stats{}, err
	}
	want := cacheStamp{Key: string(key)}
	if b, err := os.ReadFile(stampPath); err == nil {
		var got cacheStamp
		if json.Unmarshal(b, &got) == nil && got.Key == want.Key && got.Path != "" {
			if _, err := os.Stat(got.Path); err == nil {
				return got.Path, got.Stats, nil
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", Stats{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", Stats{}, err
	}
	path, st, err := Generate(shape, dir, cfg)
	if err != nil {
		return "", Stats{}, err
	}
	want.Path, want.Stats = path, st
	b, err := json.Marshal(want)
	if err != nil {
		return "", Stats{}, err
	}
	if err := os.WriteFile(stampPath, b, 0o644); err != nil {
		return "", Stats{}, fmt.Errorf("record the generated store: %w", err)
	}
	return path, st, nil
}

// DefectCount is the number of defects injected into a generated store.
func (s Stats) DefectCount() int {
	n := 0
	for _, c := range s.Defects {
		n += c
	}
	return n
}

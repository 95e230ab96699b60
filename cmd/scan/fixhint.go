package scan

import (
	"path/filepath"
	"strings"

	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// fixPaths are the paths a suggested `sessfix fix` names: those the user
// named, less those that could not be opened (fix would fail on them) and
// those whose every store is one sessfix never writes (fix would refuse
// them). A path matches the stores at or under it.
func fixPaths(paths []string, disc *shapes.Discovery) []string {
	failed := map[string]bool{}
	for _, in := range disc.Failed {
		failed[in.Path] = true
	}
	var out []string
	for _, p := range paths {
		if failed[p] {
			continue
		}
		abs, err := filepath.Abs(p)
		matched, writable := false, false
		for _, st := range disc.Stores {
			sp, serr := filepath.Abs(st.Info().Path)
			if err != nil || serr != nil || sp != abs && !strings.HasPrefix(sp, abs+string(filepath.Separator)) {
				continue
			}
			matched = true
			writable = writable || shapes.CheckWritable(st.Info()) == nil
		}
		if !matched || writable {
			out = append(out, p)
		}
	}
	return out
}

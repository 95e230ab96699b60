package scan

import (
	"path/filepath"
	"strings"

	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// fixPaths are the paths a suggested `sessfix fix` names: those of read
// (the paths named that could be opened, cli.ReadPaths) less those whose
// every store is one sessfix never writes (fix would refuse them). A path
// matches the stores at or under it.
func fixPaths(read []string, disc *shapes.Discovery) []string {
	var out []string
	for _, p := range read {
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

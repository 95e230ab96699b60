package watch

import (
	"context"
	"os"
	"path/filepath"

	"github.com/sessfix/sessfix/pkg/store"
)

func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// walkDirs calls fn for dir and every directory below it (symlinks are not
// followed), with the paths of the files each holds.
func walkDirs(dir string, fn func(dir string, files []string)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var files, dirs []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			dirs = append(dirs, p)
		case e.Type().IsRegular():
			files = append(files, p)
		}
	}
	fn(dir, files)
	for _, d := range dirs {
		walkDirs(d, fn)
	}
}

// walkStamps records size and mtime of every record file under dir.
func walkStamps(dir string) map[string]fileStamp {
	out := map[string]fileStamp{}
	walkDirs(dir, func(_ string, files []string) {
		for _, f := range files {
			if ignoredName(filepath.Base(f)) {
				continue
			}
			if fi, err := os.Lstat(f); err == nil {
				out[f] = fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
			}
		}
	})
	return out
}

// stampFiles records size and mtime of the named files that exist.
func stampFiles(paths ...string) map[string]fileStamp {
	out := map[string]fileStamp{}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			out[p] = fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		}
	}
	return out
}

// changed returns the paths whose stamp differs between two snapshots,
// including paths that appeared or disappeared.
func changed(old, cur map[string]fileStamp) []string {
	var out []string
	for p, s := range cur {
		if o, ok := old[p]; !ok || o != s {
			out = append(out, p)
		}
	}
	for p := range old {
		if _, ok := cur[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// poll compares each store with its last snapshot and marks what changed,
// and the places with theirs: a store replaced, gone or new is looked for
// again.
func (w *Watcher) poll(ctx context.Context) {
	if w.opts.Rediscover != nil {
		if cur := w.placeStamps(); !sameStamps(w.placeSnap, cur) {
			w.placeSnap = cur
			w.scheduleRediscover()
		}
	}
	for _, ss := range w.stores {
		if ctx.Err() != nil {
			return
		}
		if ss.gone || w.checkIdentity(ss) {
			continue
		}
		switch ss.info.Shape {
		case store.ShapeSQLite:
			cur := stampFiles(ss.root, ss.root+"-wal")
			if len(changed(ss.snap, cur)) > 0 {
				w.markDB(ss)
			}
			ss.snap = cur
		case store.ShapeExport:
			cur := stampFiles(ss.root)
			if len(changed(ss.snap, cur)) > 0 {
				if ss.exportID == "" {
					_ = w.list(ctx, ss)
				}
				w.mark(ss, ss.exportID)
			}
			ss.snap = cur
		default:
			cur := walkStamps(ss.root)
			for _, p := range changed(ss.snap, cur) {
				if id, ok := ss.sessionOf(p, false); ok {
					w.mark(ss, id)
				}
			}
			ss.snap = cur
		}
	}
}

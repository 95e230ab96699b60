package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// watched is what watch follows: the stores found at the start, the
// places where stores are found (the data dir, the paths named), those of
// the paths named that hold no store yet, and how to find the stores
// again when something changes there.
type watched struct {
	disc       *shapes.Discovery
	places     []string
	waiting    []string
	rediscover func(context.Context) ([]store.Store, error)
}

// openWatched opens the stores as `sessfix scan` finds them. Unlike scan,
// a store that does not exist yet is no error: with no path, a data dir
// without a store (OpenCode has not run yet); a path named that does not
// exist, or a directory that holds no store yet. watch then waits for
// it. Anything else that cannot be opened is an error, as for scan.
func openWatched(f *cli.Factory, paths []string) (*watched, error) {
	w := &watched{}
	if len(paths) == 0 {
		env := f.Env()
		dir, err := env.DataDir()
		if err != nil {
			return nil, err
		}
		w.places = append(w.places, dir)
		if env.Home != "" {
			w.places = append(w.places, filepath.Join(env.Home, ".opencode"))
		}
		if db := env.OpencodeDB; db != "" {
			if !filepath.IsAbs(db) {
				db = filepath.Join(dir, db)
			}
			w.places = append(w.places, db)
		}
		w.rediscover = func(context.Context) ([]store.Store, error) { return stores(f.Discover(f.Env())) }
	} else {
		w.places = paths
		w.rediscover = func(context.Context) ([]store.Store, error) { return stores(f.Open(paths)) }
	}
	var present []string
	for _, p := range paths {
		if noStoreYet(f, p) {
			w.waiting = append(w.waiting, p)
		} else {
			present = append(present, p)
		}
	}
	if len(paths) > 0 && len(present) == 0 {
		w.disc = &shapes.Discovery{}
		return w, nil
	}
	disc, err := f.OpenStores("watch", present)
	switch {
	case err == nil:
		w.disc = disc
	case len(paths) == 0 && errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrUnsupported):
		w.disc = &shapes.Discovery{}
	default:
		return nil, err
	}
	if err := cli.InputsFailed("watch", w.disc); err != nil {
		w.disc.Close()
		return nil, err // a watcher runs unattended: every path it was given, or none
	}
	return w, nil
}

// noStoreYet reports whether a path named holds no store yet: it does not
// exist, or it is a directory in which no store is found.
func noStoreYet(f *cli.Factory, p string) bool {
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil || !fi.IsDir() {
		return false
	}
	d, err := f.Open([]string{p})
	if err == nil {
		d.Close()
		return false
	}
	return errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrUnsupported)
}

// stores is what a look for the stores again found. No store is
// store.ErrNotFound, which the watcher takes as "none yet"; a store that
// cannot be opened is an error, so that the watcher keeps what it follows
// rather than dropping a store caught in the middle of being written.
func stores(d *shapes.Discovery, err error) ([]store.Store, error) {
	if err != nil {
		return nil, err
	}
	var failed []error
	for _, fl := range d.Failed {
		if !errors.Is(fl.Err, store.ErrNotFound) {
			failed = append(failed, fl.Err)
		}
	}
	if len(failed) > 0 {
		d.Close()
		return nil, errors.Join(failed...)
	}
	return d.Stores, nil
}

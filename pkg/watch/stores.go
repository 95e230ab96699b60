package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sessfix/sessfix/pkg/store"
)

// rediscoverKey is the pending entry of a look for stores again (Options.Rediscover).
var rediscoverKey = key{store: -1}

// A store's identity is the file or directory at its path when it was
// opened (os.SameFile: device and inode on Unix). A store whose path now
// names another file (mv other.db opencode.db, a restore, a sync tool,
// a swapped storage/ directory) or nothing was replaced or is gone: its
// open database and its watches follow the old file, so the watcher
// looks for the stores again and follows the new one.

// identity stats a store's path.
func identity(root string) (os.FileInfo, error) { return os.Stat(root) }

// replaced reports whether a store's path no longer names the file or
// directory the watcher opened.
func (ss *storeState) replaced() bool {
	if ss.ident == nil {
		return false
	}
	fi, err := identity(ss.root)
	return err != nil || !os.SameFile(fi, ss.ident)
}

// checkIdentity looks for the stores again when a store was replaced or
// removed. Without Options.Rediscover it can only say so, once.
func (w *Watcher) checkIdentity(ss *storeState) bool {
	if ss.gone || !ss.replaced() {
		return false
	}
	if w.opts.Rediscover == nil {
		if !ss.warned {
			ss.warned = true
			w.warn(ss, "the store was replaced or removed; watch still follows the old one: restart watch", nil)
		}
		return true
	}
	w.scheduleRediscover()
	return true
}

// scheduleRediscover looks for the stores again once file events have
// been gathered for a moment, unless a look is already due.
func (w *Watcher) scheduleRediscover() { w.scheduleRediscoverIn(w.opts.Coalesce) }

func (w *Watcher) scheduleRediscoverIn(d time.Duration) {
	if w.opts.Rediscover == nil || w.pending[rediscoverKey] != nil {
		return
	}
	w.pending[rediscoverKey] = &pending{due: w.clock.Now().Add(d)}
}

// placeEvent reports whether a file event may mean a store appeared, was
// replaced or vanished, and how soon to look for the stores again: at
// once (after Coalesce) when a place itself or one of its parents, or an
// entry of a place, was created, renamed or removed; after the settle
// window when an entry that is no store followed was written (a database
// being copied into a data dir, or created by OpenCode and filled through
// its write-ahead log). Hidden files (sessfix's lock and temp files) and
// the journals (-wal, -shm, -journal) of the stores followed come and go
// with every writer and are left out.
func (w *Watcher) placeEvent(ev fsnotify.Event, path string) (time.Duration, bool) {
	moved := ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	if !moved && !ev.Has(fsnotify.Write) {
		return 0, false
	}
	for _, p := range w.places {
		if moved && (path == p || within(path, p)) {
			return w.opts.Coalesce, true
		}
		if filepath.Dir(path) != p || strings.HasPrefix(filepath.Base(path), ".") {
			continue
		}
		base, journal := journalOf(path)
		switch {
		case w.followed(base) && (journal || !moved):
		case moved:
			return w.opts.Coalesce, true
		default:
			return max(w.opts.Coalesce, w.settlePolicy.Window()), true
		}
	}
	return 0, false
}

// journalOf returns the database a journal file belongs to, and whether
// path is one; path itself otherwise.
func journalOf(path string) (string, bool) {
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if base, ok := strings.CutSuffix(path, suffix); ok {
			return base, true
		}
	}
	return path, false
}

// followed reports whether path is the root of a store the watcher follows.
func (w *Watcher) followed(path string) bool {
	for _, ss := range w.stores {
		if !ss.gone && ss.root == path {
			return true
		}
	}
	return false
}

// existingDir returns p's nearest directory that exists (p itself
// included), following symlinks; "" when none does.
func existingDir(p string) string {
	for {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		up := filepath.Dir(p)
		if up == p {
			return ""
		}
		p = up
	}
}

// anchorPlaces watches every place that is a directory (its entries
// appear there) and the nearest existing directory above each place (the
// place itself appears, is replaced or vanishes there). Watching a
// directory twice is harmless; a watch lost with its directory is added
// back here, on the next look.
func (w *Watcher) anchorPlaces() {
	if w.fsw == nil {
		return
	}
	for _, p := range w.places {
		for _, d := range []string{existingDir(p), existingDir(filepath.Dir(p))} {
			if d == "" {
				continue
			}
			if err := w.fsw.Add(d); err != nil {
				if !w.anchorWarned[d] {
					w.anchorWarned[d] = true
					w.warn(nil, "cannot watch "+d+" for stores that appear or are replaced (use --poll)", err)
				}
				continue
			}
			w.anchored[d] = true
		}
	}
}

// placeStamps is what polling compares to notice a store appearing,
// being replaced or vanishing: the identity of every place and of every
// entry of a place that is a directory.
func (w *Watcher) placeStamps() map[string]os.FileInfo {
	out := map[string]os.FileInfo{}
	for _, p := range w.places {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		out[p] = fi
		if !fi.IsDir() {
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if _, journal := journalOf(e.Name()); journal || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if efi, err := os.Stat(filepath.Join(p, e.Name())); err == nil {
				out[filepath.Join(p, e.Name())] = efi
			}
		}
	}
	return out
}

func sameStamps(a, b map[string]os.FileInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for p, fa := range a {
		fb, ok := b[p]
		if !ok || !os.SameFile(fa, fb) {
			return false
		}
	}
	return true
}

// rediscover looks for the stores again (Options.Rediscover) and follows
// what changed: a store at a new path is added, a store whose path names
// another file than the one opened is replaced by the new one, a store no
// longer found is dropped until it comes back. Unchanged stores are kept
// as they are (their own reader, their watches); the fresh copies are
// closed.
func (w *Watcher) rediscover(ctx context.Context) {
	w.anchorPlaces()
	if w.opts.Poll > 0 {
		w.placeSnap = w.placeStamps()
	}
	fresh, err := w.opts.Rediscover(ctx)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		closeStores(fresh)
		if ctx.Err() == nil && err.Error() != w.rediscoverErr {
			// Said once per cause, and tried once more after the
			// settle window: a store caught while it is being copied is
			// complete by then; one that stays broken waits for its
			// next change.
			w.rediscoverErr = err.Error()
			w.warn(nil, "cannot look for the stores again; keeping the ones watched", err)
			w.pending[rediscoverKey] = &pending{due: w.clock.Now().Add(w.retry())}
		}
		return
	}
	w.rediscoverErr = ""
	byPath := map[string]store.Store{}
	for _, st := range fresh {
		p, err := filepath.Abs(st.Info().Path)
		if err != nil || byPath[filepath.Clean(p)] != nil {
			st.Close()
			continue
		}
		byPath[filepath.Clean(p)] = st
	}
	for _, ss := range w.stores {
		st, ok := byPath[ss.root]
		delete(byPath, ss.root)
		switch {
		case !ok:
			if !ss.gone {
				w.drop(ss)
			}
		case !ss.gone && !ss.replaced() && st.Info().Shape == ss.info.Shape:
			st.Close() // the same store: keep following it
		default:
			w.replace(ctx, ss, st)
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		ss := newStoreState(byPath[p], p)
		w.stores = append(w.stores, ss)
		w.follow(ctx, ss, false)
	}
}

func closeStores(stores []store.Store) {
	for _, st := range stores {
		if st != nil {
			st.Close()
		}
	}
}

// release stops following a store: its change reader, its reader, its
// watches (but those another store or a place needs), and what was
// pending for it.
func (w *Watcher) release(ss *storeState) {
	if ss.db != nil {
		ss.db.Close()
		ss.db = nil
	}
	if ss.st != nil {
		ss.st.Close()
	}
	i := w.storeIndex(ss)
	for k := range w.pending {
		if k.store == i {
			delete(w.pending, k)
		}
	}
	if w.fsw != nil {
		for d := range ss.dirs {
			if !w.anchored[d] && !w.watchedByOther(ss, d) {
				_ = w.fsw.Remove(d) // gone with its directory already: fine
			}
		}
	}
	ss.dirs = map[string]bool{}
	ss.snap, ss.ident = nil, nil
}

func (w *Watcher) watchedByOther(ss *storeState, d string) bool {
	for _, o := range w.stores {
		if o != ss && !o.gone && o.dirs[d] {
			return true
		}
	}
	return false
}

// drop stops following a store that is no longer found, and says so.
func (w *Watcher) drop(ss *storeState) {
	w.release(ss)
	ss.gone = true
	w.warn(ss, "the store is gone (moved, deleted, or superseded by a newer one); watching for it to come back", nil)
}

// replace follows the store now found at a store's path instead of the
// one opened before: the same sessions are kept apart by content, so only
// those whose content differs from what was last examined are repaired.
func (w *Watcher) replace(ctx context.Context, ss *storeState, st store.Store) {
	wasGone := ss.gone
	w.release(ss)
	ss.st, ss.info, ss.gone, ss.warned = st, st.Info(), false, false
	ss.refs, ss.msgSession, ss.exportID = map[string]store.SessionRef{}, map[string]string{}, ""
	w.follow(ctx, ss, !wasGone)
}

// follow sets a store up (found after the start, or replaced), reports
// it and examines every session of it once the settle window has passed.
func (w *Watcher) follow(ctx context.Context, ss *storeState, replaced bool) {
	if err := w.setup(ctx, ss); err != nil {
		w.release(ss)
		ss.gone = true
		w.warn(ss, "cannot watch the store found; watching for it to change", err)
		return
	}
	switch {
	case replaced && ss.info.Shape == store.ShapeExport:
		// An export file is one file: editors save it by writing another
		// and renaming it over the old one.
		w.report(Event{Kind: Rescan, Store: refOf(ss.info), Message: "the file was replaced (an editor's save); examining it again"})
	case replaced:
		w.warn(ss, "the store was replaced (another file or directory at its path); watching the new one and examining every session again", nil)
	default:
		e := Event{Kind: StoreFound, Store: refOf(ss.info), Message: "found a store; watching it and examining every session"}
		w.report(e)
	}
	// The store changed now: its sessions are examined once the settle
	// window has passed, as any change.
	for id := range ss.refs {
		w.mark(ss, id)
	}
}

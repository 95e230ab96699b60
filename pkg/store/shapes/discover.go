package shapes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// Env is the part of the process environment discovery reads.
type Env struct {
	Home        string // $HOME
	XDGDataHome string // $XDG_DATA_HOME (empty counts as unset)
	OpencodeDB  string // $OPENCODE_DB (absolute, or relative to the data dir)
}

// Discovery is the outcome of finding stores.
type Discovery struct {
	// Stores found, in a stable order.
	Stores []store.Store
	// Looked lists every place checked, for "no store found" messages.
	Looked []string
	// Notes are facts to tell the user (stale pre-migration copies skipped, ...).
	Notes []string
	// Failed are the inputs that could not be opened while others could:
	// a named path that holds no store or cannot be read, a store found
	// that cannot be opened. The caller reads the Stores and reports these.
	Failed []Failure
}

// Failure is an input that could not be opened.
type Failure struct {
	// Path is the path named, or the store found.
	Path string
	Err  error
}

// InputsError is the error of Open and Discover when not one input could
// be opened: every input with its error, so that a report can name each.
// Its message is FailedErr's, and errors.Is and errors.As see every
// input's error.
type InputsError struct{ Failed []Failure }

func (e *InputsError) Error() string { return (&Discovery{Failed: e.Failed}).FailedErr().Error() }

func (e *InputsError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f.Err
	}
	return errs
}

// FailedErr joins the errors of d's failed inputs; nil when there are none.
func (d *Discovery) FailedErr() error {
	if d == nil || len(d.Failed) == 0 {
		return nil
	}
	errs := make([]error, len(d.Failed))
	for i, f := range d.Failed {
		errs[i] = f.Err
	}
	return errors.Join(errs...)
}

// Close closes every store.
func (d *Discovery) Close() error {
	var first error
	for _, s := range d.Stores {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// EnvFromOS reads Env from the process environment. Home is the user's
// home directory ($HOME, or %USERPROFILE% on Windows).
func EnvFromOS() Env {
	home, _ := os.UserHomeDir()
	return Env{
		Home:        home,
		XDGDataHome: os.Getenv("XDG_DATA_HOME"),
		OpencodeDB:  os.Getenv("OPENCODE_DB"),
	}
}

// DataDir returns OpenCode's data dir for env: $XDG_DATA_HOME/opencode, or
// ~/.local/share/opencode when XDG_DATA_HOME is empty (on every OS).
func (e Env) DataDir() (string, error) {
	if e.XDGDataHome != "" {
		return filepath.Join(e.XDGDataHome, "opencode"), nil
	}
	if e.Home == "" {
		return "", errors.New("cannot locate the opencode data dir: neither HOME nor XDG_DATA_HOME is set; name the store path explicitly")
	}
	return filepath.Join(e.Home, ".local", "share", "opencode"), nil
}

// Discover finds the stores of the current user with no paths given:
// the OpenCode data dir ($XDG_DATA_HOME/opencode, default ~/.local/share/opencode)
// with its databases, JSON storage/ tree and project/*/storage trees, and
// ~/.opencode/sessions. It returns ErrNotFound (wrapped, naming the places
// looked) when nothing is there.
//
// Databases are $OPENCODE_DB when set (absolute, or relative to the data
// dir), else opencode.db and opencode-*.db. When the data dir holds a
// database, its storage/ and project/ trees are pre-migration copies
// OpenCode no longer reads: they are not scanned, and a note says so. Likewise
// project/ trees are not scanned when a storage/ tree exists.
//
// An OpenCode 2 database (session_v2 table) is read by the sqlite2 shape;
// the other databases next to it are notes, as storage/ is next to a
// database. A store a shape recognises but cannot read is an error
// wrapping ErrUnsupported when no other store is found, else a note.
func Discover(env Env) (*Discovery, error) { return Default.Discover(env) }

// look adds places to d.Looked, each once: two shapes check the same
// database file.
func (d *Discovery) look(places ...string) {
	for _, p := range places {
		if !slices.Contains(d.Looked, p) {
			d.Looked = append(d.Looked, p)
		}
	}
}

// Discover is the package's Discover over the shapes of r.
func (r Registry) Discover(env Env) (*Discovery, error) {
	dir, err := env.DataDir()
	if err != nil {
		return nil, err
	}
	d := &Discovery{}
	unsupported, notStores := r.addDataDir(d, dir, env.OpencodeDB)
	if env.Home != "" {
		for _, sh := range r.homeShapes() {
			found, looked := sh.InHome(env.Home)
			d.look(looked...)
			for _, p := range found {
				st, err := sh.Open(p)
				if err != nil {
					d.Failed = append(d.Failed, Failure{Path: p, Err: err})
					continue
				}
				d.Stores = append(d.Stores, st)
			}
		}
	}
	if len(d.Stores) == 0 {
		switch {
		case len(d.Failed) > 0:
			return nil, &InputsError{Failed: d.Failed}
		case len(unsupported) > 0:
			return nil, unsupported[0]
		}
		return nil, notFound(d, notStores)
	}
	d.noteSkipped(unsupported, notStores)
	return d, nil
}

// addDataDir adds the stores of one OpenCode data dir to d: those of the
// first shape (in registry order) that has any there; the others' are
// notes. db overrides the database path (OPENCODE_DB). It returns the
// stores a shape recognises but cannot read (OpenCode 2.x) and the files
// that turn out not to be stores, for the caller to note or to name in its
// error; those that fail to open otherwise are d.Failed.
//
// A file two shapes find (an OpenCode 2 database is also a database) is
// the first one's: the later shape does not see it.
func (r Registry) addDataDir(d *Discovery, dir, db string) (unsupported, notStores []error) {
	present := false
	claimed := map[string]bool{}
	for _, sh := range r.dataDirShapes() {
		all, looked := sh.InDataDir(dir, db)
		d.look(looked...)
		var found []string
		for _, p := range all {
			if !claimed[p] {
				claimed[p] = true
				found = append(found, p)
			}
		}
		if len(found) == 0 {
			continue
		}
		if present {
			d.Notes = append(d.Notes, sh.Superseded(dir, found))
			continue
		}
		for _, p := range found {
			st, err := sh.Open(p)
			if err != nil && db != "" && (p == db || p == filepath.Join(dir, db)) {
				err = fmt.Errorf("$OPENCODE_DB: %w", err)
			}
			switch {
			case err == nil:
				d.Stores = append(d.Stores, st)
				present = true
			case errors.Is(err, store.ErrUnsupported):
				unsupported = append(unsupported, err)
				present = true
			case errors.Is(err, store.ErrNotFound):
				notStores = append(notStores, err)
			default:
				d.Failed = append(d.Failed, Failure{Path: p, Err: err})
				present = true
			}
		}
	}
	return unsupported, notStores
}

// noteSkipped notes what addDataDir found but skipped, when other stores
// were found.
func (d *Discovery) noteSkipped(unsupported, notStores []error) {
	for _, u := range unsupported {
		d.Notes = append(d.Notes, u.Error()+"; not scanned")
	}
	for _, n := range notStores {
		d.Notes = append(d.Notes, n.Error()+"; skipped")
	}
}

// notFound is the error when d found no store: where it looked, and why
// what it found there is not a store.
func notFound(d *Discovery, notStores []error) error {
	msg := "looked in " + strings.Join(d.Looked, ", ")
	for _, n := range notStores {
		msg += "; " + n.Error()
	}
	return fmt.Errorf("%w (%s)", store.ErrNotFound, msg)
}

// isDataDir reports whether d looks like an OpenCode data dir: a shape
// finds a store in it.
func (r Registry) isDataDir(d string) bool {
	for _, sh := range r.dataDirShapes() {
		if found, _ := sh.InDataDir(d, ""); len(found) > 0 {
			return true
		}
	}
	return false
}

// Open opens the stores at explicitly named paths: a data dir, a storage/
// dir, a sessions root (or the sessions/ dir itself), a project tree, a .db
// file, or an export file. Shapes are detected by content. A path named
// explicitly is always scanned, even a pre-migration storage/ copy; a data
// dir is treated as Discover treats it (its database wins over storage/).
// A directory that is none of these is searched as a fixture tree: every
// store below it (export files, sessions/ and storage/ trees, databases) is
// opened, so `sessfix scan fixtures/` lints a repository's fixtures. A path
// that does not exist or holds nothing recognisable is an error wrapping
// ErrNotFound that names it. A path that cannot be opened does not stop
// the others: it is in Failed, and Open fails only when no path could be.
func Open(paths []string) (*Discovery, error) { return Default.Open(paths) }

// Open is the package's Open over the shapes of r.
func (r Registry) Open(paths []string) (*Discovery, error) {
	d := &Discovery{}
	seen := map[string]bool{}
	for _, p := range paths {
		d.look(p)
		stores, notes, err := r.openPath(p)
		if err != nil {
			closeAll(stores)
			d.Failed = append(d.Failed, Failure{Path: p, Err: err})
			continue
		}
		d.Notes = append(d.Notes, notes...)
		for _, st := range stores {
			// One store named twice (db and db/opencode.db, x.json and
			// ./x.json) is read once.
			id := st.Info().Path
			if abs, err := filepath.Abs(id); err == nil {
				id = abs
			}
			if seen[id] {
				st.Close()
				continue
			}
			seen[id] = true
			d.Stores = append(d.Stores, st)
		}
	}
	if len(paths) == 0 {
		return nil, store.NotFoundf("no store path given")
	}
	if len(d.Stores) == 0 && len(d.Failed) > 0 {
		return nil, &InputsError{Failed: d.Failed}
	}
	return d, nil
}

// openPath detects what one explicit path holds and opens it: a file by
// the first shape that matches its content; a directory that a shape's
// store is (At), else an OpenCode data dir, else what a shape finds within
// it, else a fixture tree.
func (r Registry) openPath(p string) ([]store.Store, []string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, store.NotFoundf("%s does not exist (%s)", p, r.expected())
		}
		return nil, nil, fmt.Errorf("cannot open %s: %w", p, err)
	}
	if !fi.IsDir() {
		st, err := r.openFile(p, fi)
		if err != nil {
			return nil, nil, err
		}
		return []store.Store{st}, nil, nil
	}
	for _, sh := range r.dirShapes() {
		if roots := sh.At(p); len(roots) > 0 {
			return openAll(sh, roots)
		}
	}
	if r.isDataDir(p) {
		d := &Discovery{}
		unsupported, notStores := r.addDataDir(d, p, "")
		if err := d.FailedErr(); err != nil {
			d.Close()
			return nil, nil, err
		}
		if len(d.Stores) == 0 && len(unsupported) > 0 {
			return nil, nil, unsupported[0]
		}
		if len(d.Stores) == 0 {
			why := make([]string, len(notStores))
			for i, n := range notStores {
				why[i] = n.Error()
			}
			return nil, nil, store.NotFoundf("%s holds no readable opencode store: %s", p, strings.Join(why, "; "))
		}
		d.noteSkipped(unsupported, notStores)
		return d.Stores, d.Notes, nil
	}
	for _, sh := range r.dirShapes() {
		if roots := sh.Within(p); len(roots) > 0 {
			return openAll(sh, roots)
		}
	}
	if stores, notes, err := r.openFixtureTree(p); err != nil || len(stores) > 0 {
		return stores, notes, err
	}
	return nil, nil, store.NotFoundf("%s holds no opencode store (%s)", p, r.expected())
}

// openAll opens the stores of one shape at roots. On an error it returns
// the stores already open, for the caller to close.
func openAll(sh Shape, roots []string) ([]store.Store, []string, error) {
	var out []store.Store
	for _, root := range roots {
		st, err := sh.Open(root)
		if err != nil {
			return out, nil, err
		}
		out = append(out, st)
	}
	return out, nil, nil
}

// openFile opens a file by content: the first shape that matches it. A
// file no shape matches is an error saying what it is not.
func (r Registry) openFile(p string, fi os.FileInfo) (store.Store, error) {
	if !fi.Mode().IsRegular() {
		return nil, store.NotFoundf("%s is not a regular file (%s)", p, r.expected())
	}
	if fi.Size() == 0 {
		return nil, store.NotFoundf("%s is an empty file (0 bytes) (%s)", p, r.expected())
	}
	var not []string
	for _, sh := range r.fileShapes() {
		ok, why, err := sh.Match(p)
		if err != nil {
			return nil, err
		}
		if ok {
			return sh.Open(p)
		}
		if why != "" {
			not = append(not, why)
		}
	}
	return nil, store.NotFoundf("%s is %s", p, strings.Join(not, ", and "))
}

// recognised reports whether openPath recognises the directory d as a
// store (or a data dir) without searching below it.
func (r Registry) recognised(d string) bool {
	for _, sh := range r.dirShapes() {
		if len(sh.At(d)) > 0 || len(sh.Within(d)) > 0 {
			return true
		}
	}
	return r.isDataDir(d)
}

func closeAll(stores []store.Store) {
	for _, s := range stores {
		s.Close()
	}
}

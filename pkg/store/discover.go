package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
	Stores []Store
	// Looked lists every place checked, for "no store found" messages.
	Looked []string
	// Notes are facts to tell the user (stale pre-migration copies skipped, ...).
	Notes []string
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

// expectedShapes is the list of what an explicit path may be, for errors.
const expectedShapes = "expected an opencode data dir, a storage/ dir, a project tree, a sessions dir (or its parent), an opencode.db file or an `opencode export` file"

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
// An OpenCode 2.x database (session_v2 table) cannot be read yet: when no
// other store is found the error wraps ErrUnsupported; otherwise the other
// stores are returned and a note names the 2.x database.
func Discover(env Env) (*Discovery, error) {
	dir, err := env.DataDir()
	if err != nil {
		return nil, err
	}
	d := &Discovery{}
	var unsupported []error
	if err := d.addDataDir(dir, env.OpencodeDB, &unsupported); err != nil {
		d.Close()
		return nil, err
	}
	if env.Home != "" {
		sessions := filepath.Join(env.Home, ".opencode", "sessions")
		d.Looked = append(d.Looked, sessions)
		if isDir(sessions) {
			st, err := openSessions(sessions)
			if err != nil {
				d.Close()
				return nil, err
			}
			d.Stores = append(d.Stores, st)
		}
	}
	if len(d.Stores) == 0 {
		if len(unsupported) > 0 {
			return nil, unsupported[0]
		}
		return nil, fmt.Errorf("%w (looked in %s)", ErrNotFound, strings.Join(d.Looked, ", "))
	}
	for _, u := range unsupported {
		d.Notes = append(d.Notes, u.Error()+"; not scanned")
	}
	return d, nil
}

// addDataDir adds the stores of one OpenCode data dir. db overrides the
// database path (OPENCODE_DB). OpenCode 2.x databases are collected in
// unsupported rather than failing.
func (d *Discovery) addDataDir(dir, db string, unsupported *[]error) error {
	var dbs []string
	if db != "" {
		if !filepath.IsAbs(db) {
			db = filepath.Join(dir, db)
		}
		d.Looked = append(d.Looked, db)
		if isFile(db) {
			dbs = append(dbs, db)
		}
	} else {
		main := filepath.Join(dir, "opencode.db")
		d.Looked = append(d.Looked, main, filepath.Join(dir, "opencode-*.db"))
		if isFile(main) {
			dbs = append(dbs, main)
		}
		more, _ := filepath.Glob(filepath.Join(globEscape(dir), "opencode-*.db"))
		sort.Strings(more)
		for _, m := range more {
			if isFile(m) {
				dbs = append(dbs, m)
			}
		}
	}
	for _, p := range dbs {
		st, err := openSQLite(p)
		switch {
		case err == nil:
			d.Stores = append(d.Stores, st)
		case errors.Is(err, ErrUnsupported):
			*unsupported = append(*unsupported, err)
		case errors.Is(err, ErrNotFound):
			d.Notes = append(d.Notes, err.Error()+"; skipped")
		default:
			return err
		}
	}
	hasDB := len(dbs) > 0 && (len(d.Stores) > 0 || len(*unsupported) > 0)

	storage := filepath.Join(dir, "storage")
	d.Looked = append(d.Looked, storage)
	hasStorage := isJSONStorage(storage)
	switch {
	case hasStorage && hasDB:
		d.Notes = append(d.Notes, storage+" is a pre-migration copy of the database (OpenCode 1.2+ no longer reads it); not scanned: name it explicitly to scan it")
	case hasStorage:
		st, err := openStorage(storage)
		if err != nil {
			return err
		}
		d.Stores = append(d.Stores, st)
	}

	projectDir := filepath.Join(dir, "project")
	d.Looked = append(d.Looked, filepath.Join(projectDir, "*", "storage"))
	trees := projectTrees(projectDir)
	switch {
	case len(trees) > 0 && (hasDB || hasStorage):
		d.Notes = append(d.Notes, projectDir+" holds pre-migration project trees (OpenCode 1.0+ no longer reads them); not scanned: name one explicitly to scan it")
	default:
		for _, t := range trees {
			st, err := openProject(t)
			if err != nil {
				return err
			}
			d.Stores = append(d.Stores, st)
		}
	}
	return nil
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
// ErrNotFound that names it.
func Open(paths []string) (*Discovery, error) {
	d := &Discovery{}
	seen := map[string]bool{}
	for _, p := range paths {
		d.Looked = append(d.Looked, p)
		stores, notes, err := openPath(p)
		if err != nil {
			for _, st := range stores {
				st.Close()
			}
			d.Close()
			return nil, err
		}
		d.Notes = append(d.Notes, notes...)
		for _, st := range stores {
			if seen[st.Info().Path] {
				st.Close()
				continue
			}
			seen[st.Info().Path] = true
			d.Stores = append(d.Stores, st)
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no store path given: %w", ErrNotFound)
	}
	return d, nil
}

// openPath detects what one explicit path holds and opens it.
func openPath(p string) ([]Store, []string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s does not exist (%s): %w", p, expectedShapes, ErrNotFound)
		}
		return nil, nil, fmt.Errorf("cannot open %s: %w", p, err)
	}
	if !fi.IsDir() {
		st, err := openFile(p, fi)
		if err != nil {
			return nil, nil, err
		}
		return []Store{st}, nil, nil
	}
	one := func(st Store, err error) ([]Store, []string, error) {
		if err != nil {
			return nil, nil, err
		}
		return []Store{st}, nil, nil
	}
	switch {
	case isProjectStorage(p):
		return one(openProject(p))
	case isJSONStorage(p):
		return one(openStorage(p))
	case isProjectStorage(filepath.Join(p, "storage")):
		return one(openProject(filepath.Join(p, "storage")))
	case isDataDir(p):
		d := &Discovery{}
		var unsupported []error
		if err := d.addDataDir(p, "", &unsupported); err != nil {
			d.Close()
			return nil, nil, err
		}
		if len(d.Stores) == 0 && len(unsupported) > 0 {
			return nil, nil, unsupported[0]
		}
		for _, u := range unsupported {
			d.Notes = append(d.Notes, u.Error()+"; not scanned")
		}
		if len(d.Stores) == 0 {
			return nil, nil, fmt.Errorf("%s holds no readable opencode store (%s): %w", p, strings.Join(d.Notes, "; "), ErrNotFound)
		}
		return d.Stores, d.Notes, nil
	case holdsSessions(p):
		return one(openSessions(p))
	case holdsSessions(filepath.Join(p, "sessions")):
		// A root whose sessions/ holds sessions, even when the root is
		// itself named "sessions".
		return one(openSessions(filepath.Join(p, "sessions")))
	case filepath.Base(p) == "sessions":
		return one(openSessions(p))
	case isDir(filepath.Join(p, "sessions")):
		return one(openSessions(filepath.Join(p, "sessions")))
	}
	if trees := projectTrees(p); len(trees) > 0 {
		var out []Store
		for _, t := range trees {
			st, err := openProject(t)
			if err != nil {
				return out, nil, err
			}
			out = append(out, st)
		}
		return out, nil, nil
	}
	if stores, notes, err := openFixtureTree(p); err != nil || len(stores) > 0 {
		return stores, notes, err
	}
	return nil, nil, fmt.Errorf("%s holds no opencode store (%s): %w", p, expectedShapes, ErrNotFound)
}

// openFile opens a database or export file, by content.
func openFile(p string, fi os.FileInfo) (Store, error) {
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): %w", p, expectedShapes, ErrNotFound)
	}
	if isSQLiteFile(p) {
		return openSQLite(p)
	}
	st, err := openExport(p)
	if err != nil {
		return nil, err
	}
	raw, _, perr := st.fs.readFile(p)
	if perr != nil {
		return nil, fmt.Errorf("cannot read %s: %w", p, perr)
	}
	if !isExport(raw) {
		why := "not an sqlite database, and not an export file (a JSON object with \"info\" and \"messages\")"
		if err := CheckBody(raw); err != nil {
			why += ": " + err.Error()
		}
		return nil, fmt.Errorf("%s is %s: %w", p, why, ErrNotFound)
	}
	return st, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// isProjectStorage reports whether d is the storage/ dir of a ≤0.5 project
// tree: session/{info,message,part}.
func isProjectStorage(d string) bool {
	s := filepath.Join(d, "session")
	return isDir(filepath.Join(s, "info")) || isDir(filepath.Join(s, "message")) || isDir(filepath.Join(s, "part"))
}

// isJSONStorage reports whether d is a 1.0–1.1 storage/ dir.
func isJSONStorage(d string) bool {
	if isProjectStorage(d) {
		return false
	}
	return isDir(filepath.Join(d, "session")) || isDir(filepath.Join(d, "message")) || isDir(filepath.Join(d, "part"))
}

// isDataDir reports whether d looks like an OpenCode data dir.
func isDataDir(d string) bool {
	if isFile(filepath.Join(d, "opencode.db")) || isJSONStorage(filepath.Join(d, "storage")) {
		return true
	}
	if m, _ := filepath.Glob(filepath.Join(globEscape(d), "opencode-*.db")); len(m) > 0 {
		return true
	}
	return len(projectTrees(filepath.Join(d, "project"))) > 0
}

// isSessionsDir reports whether d is a sessions/ dir: named so, or holding a
// session directory with messages/, parts/ or session.json.
func isSessionsDir(d string) bool {
	return filepath.Base(d) == "sessions" || holdsSessions(d)
}

// holdsSessions reports whether d holds a session directory with
// messages/, parts/ or session.json.
func holdsSessions(d string) bool {
	entries, err := os.ReadDir(d)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c := filepath.Join(d, e.Name())
		if isDir(filepath.Join(c, "messages")) || isDir(filepath.Join(c, "parts")) || isFile(filepath.Join(c, "session.json")) {
			return true
		}
	}
	return false
}

// projectTrees returns the storage dirs of the project trees under dir
// (<data>/project), sorted.
func projectTrees(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		s := filepath.Join(dir, e.Name(), "storage")
		if isProjectStorage(s) {
			out = append(out, s)
		}
	}
	return out
}

// globEscape escapes glob metacharacters in a literal path.
func globEscape(p string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	if filepath.Separator == '\\' {
		r = strings.NewReplacer(`*`, `[*]`, `?`, `[?]`, `[`, `[[]`)
	}
	return r.Replace(p)
}

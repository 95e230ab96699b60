package store

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

// Discover finds the stores of the current user with no paths given:
// the OpenCode data dir ($XDG_DATA_HOME/opencode, default ~/.local/share/opencode)
// with its databases, JSON storage/ tree and project/*/storage trees, and
// ~/.opencode/sessions. It returns ErrNotFound (wrapped, naming the places
// looked) when nothing is there.
func Discover(env Env) (*Discovery, error) {
	return nil, ErrNotFound // TODO(store): implement
}

// Open opens the stores at explicitly named paths: a data dir, a storage/
// dir, a sessions root (or the sessions/ dir itself), a project tree, a .db
// file, or an export file. Shapes are detected by content. A path named
// explicitly is always scanned, even a pre-migration storage/ copy.
func Open(paths []string) (*Discovery, error) {
	return nil, ErrNotFound // TODO(store): implement
}

package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// Refusal is a record undo would not overwrite.
type Refusal struct {
	Target store.Target
	// Reason is a lowercase sentence: why the current bytes are not the
	// ones sessfix wrote.
	Reason string
}

// UndoResult says what Undo did.
type UndoResult struct {
	RunID string
	Store store.Info
	// Operation is the sessfix command the run belongs to (RunInfo's).
	Operation string
	// Restored are the files or rows put back.
	Restored []store.Target
	// Unchanged counts targets that already held their old bytes.
	Unchanged int
	// Refused lists records that changed since the run; with force they
	// were restored anyway (and are also in Restored).
	Refused []Refusal
	// AlreadyUndone is true when the run had been undone before; nothing
	// was done.
	AlreadyUndone bool
	// Message is a one-line summary for humans.
	Message string
}

// target key identifying one file or row.
func key(t store.Target) string { return t.Path + "\x00" + t.Table + "\x00" + t.ID }

// Undo restores the store a run changed, byte for byte, in a transaction
// of its own on that store (Undoable, BeginTx, Tx.Undo, Close): what
// `sessfix undo RUN` does, for a caller with no one to tell what taking
// the lock rolled back. Records whose current bytes are not what the run
// left are refused (the error wraps store.ErrChanged, the result lists
// them) and nothing is restored, unless force. Undoing a run that was
// already undone does nothing and says so.
func Undo(ctx context.Context, opts Options, runID string, force bool) (*UndoResult, error) {
	info, done, err := Undoable(opts, runID)
	if err != nil || done != nil {
		return done, err
	}
	tx, _, err := BeginTx(ctx, opts, info, false)
	if err != nil {
		return nil, UndoBeginFailed(runID, err)
	}
	defer tx.Close()
	return tx.Undo(ctx, runID, force)
}

// UndoBeginFailed is the error of an undo of run runID whose transaction
// could not begin (BeginTx): the lock another sessfix holds, a roll-back
// that failed.
func UndoBeginFailed(runID string, err error) error {
	return fmt.Errorf("cannot undo run %s: %w", runID, err)
}

// Undoable reads run runID before its store is locked and returns the
// store to begin the undo's transaction on (BeginTx), or, for a run
// undone already, the result that says so (nothing to lock, nothing to
// do). The error wraps ErrNoRun when there is no such run, and is a
// *StoreGoneError when the store the run changed is gone.
func Undoable(opts Options, runID string) (store.Info, *UndoResult, error) {
	_, m, res, err := undoable(opts, runID)
	if m == nil {
		return store.Info{}, res, err
	}
	return m.Store, res, err
}

// undoable reads run runID: its folder and manifest, and the result when
// it is undone already (m is nil then), or the error that refuses it.
func undoable(opts Options, runID string) (string, *Manifest, *UndoResult, error) {
	dir, m, err := openRun(opts, runID)
	if err != nil {
		return "", nil, nil, err
	}
	if m.Undone != nil {
		res := newUndoResult(m)
		res.AlreadyUndone = true
		res.Message = fmt.Sprintf("run %s was already undone on %s; nothing to do", m.RunID, m.Undone.Time.Local().Format(time.DateTime))
		return "", nil, res, nil
	}
	if _, err := os.Stat(m.Store.Path); errors.Is(err, fs.ErrNotExist) {
		// Restoring elsewhere would need every target's path rewritten:
		// name the backup instead, so the user can put the store back.
		return "", nil, nil, &StoreGoneError{RunID: m.RunID, Store: m.Store, Before: filepath.Join(dir, "before")}
	}
	return dir, m, nil, nil
}

func newUndoResult(m *Manifest) *UndoResult {
	res := &UndoResult{RunID: m.RunID, Store: m.Store, Operation: m.Operation}
	if res.Operation == "" {
		res.Operation = m.RunID
	}
	return res
}

// undoLocked is Undo's body, under the writer lock of the store info
// names: the manifest is read again (what a roll-back or another sessfix
// wrote before the lock was taken counts), and a run of another store is
// refused.
func undoLocked(ctx context.Context, opts Options, info store.Info, runID string, force bool) (*UndoResult, error) {
	dir, m, done, err := undoable(opts, runID)
	if err != nil || done != nil {
		return done, err
	}
	if abs, err := filepath.Abs(info.Path); err == nil {
		info.Path = abs
	}
	if m.Store.Path != info.Path || m.Store.Shape != info.Shape {
		return nil, fmt.Errorf("cannot undo run %s: it changed the %s store %s, not this transaction's %s", m.RunID, m.Store.Shape, m.Store.Path, info.Path)
	}
	res := newUndoResult(m)
	if m.Database != nil || len(m.Sessions) == 0 {
		return undoDatabase(ctx, opts, dir, m, res, force)
	}
	w, err := shapes.OpenWriter(m.Store, opts.Write)
	if err != nil {
		return nil, fmt.Errorf("cannot undo run %s: %w", m.RunID, err)
	}
	defer w.Close()

	order, plans := targetPlans(m.Sessions)
	current, err := w.Read(ctx, planTargets(order, plans))
	if err != nil {
		return nil, fmt.Errorf("cannot undo run %s: %w", m.RunID, err)
	}
	rs, err := planRestore(dir, order, plans, current, force)
	if err != nil {
		return nil, fmt.Errorf("cannot undo run %s: %w; nothing was restored", m.RunID, err)
	}
	restore, tidy := rs.restore, rs.tidy
	res.Unchanged, res.Refused = rs.unchanged, rs.refused
	if len(res.Refused) > 0 && !force {
		return res, &RefusedError{RunID: m.RunID, Refused: res.Refused}
	}
	if len(restore)+len(tidy) > 0 {
		if beforeRestore != nil {
			beforeRestore()
		}
		if err := w.Restore(ctx, append(restore[:len(restore):len(restore)], tidy...)); err != nil {
			return res, fmt.Errorf("undo run %s: %w", m.RunID, err)
		}
	}
	for _, im := range restore {
		res.Restored = append(res.Restored, im.Target)
	}
	m.Undone = &UndoneEntry{Time: opts.now().UTC(), Version: store.SessfixVersion(), Forced: force && len(res.Refused) > 0, Restored: len(restore)}
	if err := saveManifest(dir, m); err != nil {
		return res, fmt.Errorf("run %s was undone, but %w", m.RunID, err)
	}
	res.Message = fmt.Sprintf("undid run %s: restored %d %s in %s %s", m.RunID, len(restore), plural.Word(len(restore), "record", "records"), m.Store.Shape, m.Store.Path)
	if len(restore) == 0 {
		res.Message = fmt.Sprintf("run %s changed nothing that is still different; marked it undone", m.RunID)
	}
	return res, nil
}

// targetPlans gathers the images of sessions by target, in the order the
// targets first appear: the oldest image of a target is what it was
// before the run, the newest entry says what the run left.
func targetPlans(sessions []*SessionEntry) ([]string, map[string]*targetPlan) {
	plans := map[string]*targetPlan{}
	var order []string
	for _, s := range sessions {
		for i := range s.Images {
			im := &s.Images[i]
			k := key(im.Target)
			p := plans[k]
			if p == nil {
				p = &targetPlan{}
				plans[k] = p
				order = append(order, k)
			}
			p.entries = append(p.entries, runImage{im, s.State})
		}
	}
	return order, plans
}

// planTargets are the targets of plans, in order.
func planTargets(order []string, plans map[string]*targetPlan) []store.Target {
	var targets []store.Target
	for _, k := range order {
		targets = append(targets, plans[k].first().Target)
	}
	return targets
}

// restoration is what putting targets back to their state before a run
// takes: the images to restore, the directories a killed run may have
// made to remove if empty, what is refused and what is as before already.
type restoration struct {
	restore, tidy []store.Image
	refused       []Refusal
	unchanged     int
}

// planRestore decides, for each target (current holds them as they are
// now, in order), whether it is as before, may be put back (it holds what
// the run left) or is refused; with force a refused one is put back too.
// Each image restored or tidied carries the hash checked here as its
// Expect, so a write between this check and the restore refuses it all.
func planRestore(dir string, order []string, plans map[string]*targetPlan, current []store.Image, force bool) (*restoration, error) {
	rs := &restoration{}
	for i, k := range order {
		p, cur := plans[k], current[i]
		first := p.first()
		checked := cur.Hash()
		if asBefore(cur, first) {
			rs.unchanged++
			if !cur.Exists && !first.KeepDir && first.Table == "" {
				// A killed run may have made its directory: removed
				// again if it is empty.
				im := first.image()
				im.Expect = &checked
				rs.tidy = append(rs.tidy, im)
			}
			continue
		}
		if ok, why := p.left(cur); !ok {
			rs.refused = append(rs.refused, Refusal{first.Target, why})
			if !force {
				continue
			}
		}
		im := first.image()
		im.Expect = &checked
		if first.Existed {
			data, err := p.before(dir, cur)
			if err != nil {
				return nil, err
			}
			im.Data = data
		}
		rs.restore = append(rs.restore, im)
	}
	return rs, nil
}

// beforeRestore, when set (by tests), runs between Undo's check of the
// store and the restore.
var beforeRestore func()

// runImage is one image of a target in a run, with the state of the
// session entry that holds it.
type runImage struct {
	im    *ImageEntry
	state string
}

// targetPlan is every image a run recorded of one target, oldest first
// (several when more than one change set of the run touched it).
type targetPlan struct{ entries []runImage }

func (p *targetPlan) first() *ImageEntry { return p.entries[0].im }

// asBefore reports whether cur is the target as it was before the run: the
// same bytes, and for a file the same mode, for a row every other column.
func asBefore(cur store.Image, first *ImageEntry) bool {
	switch {
	case cur.Exists != first.Existed || cur.Hash() != first.SHA256Before:
		return false
	case !cur.Exists:
		return true
	case first.Table != "":
		return sameColumns(cur.Columns, first.Columns)
	}
	return cur.Mode == first.Mode
}

// sameColumns compares two rows' other columns by name and value (a BLOB
// that the manifest's JSON left empty counts as empty).
func sameColumns(a, b []store.Column) bool {
	render := func(cols []store.Column) map[string]string {
		out := map[string]string{}
		for _, c := range cols {
			var v string
			switch {
			case c.Int != nil:
				v = fmt.Sprintf("i%d", *c.Int)
			case c.Real != nil:
				v = fmt.Sprintf("r%v", *c.Real)
			case c.Text != nil:
				v = "t" + *c.Text
			case len(c.Blob) > 0:
				v = "b" + string(c.Blob)
			}
			out[c.Name] = v
		}
		return out
	}
	ra, rb := render(a), render(b)
	if len(ra) != len(rb) {
		return false
	}
	for k, v := range ra {
		if w, ok := rb[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// left reports whether cur is what the run left in the target, so undo
// may put it back, and else why not. A run that was killed part way
// through a change set (its entry still "recorded") left each target
// either as it found it or as it planned to write it (the manifest's
// Planned); a finished entry says what it left.
func (p *targetPlan) left(cur store.Image) (bool, string) {
	last := p.entries[len(p.entries)-1]
	if last.state != StateRecorded {
		if cur.Exists == last.im.ExistsAfter && cur.Hash() == last.im.SHA256After {
			return true, ""
		}
		return false, describeChange(cur, last.im)
	}
	pl := last.im.Planned
	switch {
	case pl == nil:
		return false, "the run stopped before it finished, so what it wrote is unknown"
	case cur.Exists == pl.Exists && cur.Hash() == pl.SHA256:
		return true, ""
	case len(p.entries) > 1 && cur.Exists == last.im.Existed && cur.Hash() == last.im.SHA256Before:
		return true, "" // as the run's earlier change set left it
	}
	return false, "the run stopped before it finished, and it holds neither what it held before the run nor what the run was writing"
}

// before returns the target's bytes before the run, from its backup: the
// saved file, or, for a file backed up in spans, cur (the file as the run
// left it) with the bytes each change set replaced put back, newest first.
func (p *targetPlan) before(dir string, cur store.Image) ([]byte, error) {
	read := func(ie *ImageEntry, sum string) ([]byte, error) {
		data, err := os.ReadFile(filepath.Join(dir, ie.File))
		if err != nil {
			return nil, fmt.Errorf("the backup of %s is missing: %w", ie.Target, err)
		}
		if store.HashBytes(data) != sum {
			return nil, fmt.Errorf("the backup of %s (%s) is damaged: its sha256 does not match the manifest", ie.Target, filepath.Join(dir, ie.File))
		}
		return data, nil
	}
	first := p.first()
	if first.Spans == nil {
		return read(first, first.SHA256Before)
	}
	data := cur.Data
	for k := len(p.entries) - 1; k >= 0; k-- {
		ie := p.entries[k].im
		if ie.Spans == nil {
			var err error
			if data, err = read(ie, ie.SHA256Before); err != nil {
				return nil, err
			}
			continue
		}
		saved, err := read(ie, ie.SHA256File)
		if err != nil {
			return nil, err
		}
		spans, err := ie.spans(saved)
		if err != nil {
			return nil, err
		}
		if data, err = store.Revert(data, spans); err != nil {
			return nil, fmt.Errorf("the backup of %s does not fit the file: %w", ie.Target, err)
		}
	}
	if store.HashBytes(data) != first.SHA256Before {
		return nil, fmt.Errorf("%s changed after sessfix wrote it, and sessfix backed up only the parts of it the run replaced, "+
			"which fit only the file as the run left it: it cannot be restored, even with --force", first.Target)
	}
	return data, nil
}

func describeChange(cur store.Image, after *ImageEntry) string {
	switch {
	case !cur.Exists && after.ExistsAfter:
		return "it was removed after sessfix wrote it"
	case cur.Exists && !after.ExistsAfter:
		return "it was created again after sessfix removed it"
	default:
		return "it was modified after sessfix wrote it"
	}
}

// openRun finds a run folder and reads its manifest.
func openRun(opts Options, runID string) (string, *Manifest, error) {
	base, err := opts.backupsDir()
	if err != nil {
		return "", nil, err
	}
	if !runIDPattern.MatchString(runID) {
		return "", nil, fmt.Errorf("%q is not a run id (they look like 20261121T153000Z-k3x9qa): %w", runID, ErrNoRun)
	}
	dir := filepath.Join(base, runID)
	m, err := readManifest(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, fmt.Errorf("run %s: %w in %s", runID, ErrNoRun, base)
	}
	if err != nil {
		return "", nil, err
	}
	return dir, m, nil
}

// otherFormatError is a manifest of a format this sessfix does not read
// (a newer sessfix wrote it): not damaged, only not readable here.
type otherFormatError struct {
	path   string
	format int
}

func (e *otherFormatError) Error() string {
	return fmt.Sprintf("backup manifest %s has format %d; this sessfix reads format %d", e.path, e.format, ManifestFormat)
}

func readManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseManifest(path, b)
}

// parseManifest parses b, the bytes of the manifest at path.
func parseManifest(path string, b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("backup manifest %s is damaged: %w", path, err)
	}
	if !readsFormat(m.Format) {
		return nil, &otherFormatError{path: path, format: m.Format}
	}
	return &m, nil
}

func saveManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "manifest.json"), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("cannot update the backup manifest: %w", err)
	}
	return nil
}

// RunInfo summarises a run for listing.
type RunInfo struct {
	ID    string     `json:"run"`
	Time  time.Time  `json:"time"`
	Store store.Info `json:"store"`
	// Sessions and Edits count what the run changed.
	Sessions int `json:"sessions"`
	Edits    int `json:"edits"`
	// State is "applied", "undone", "incomplete" (stopped mid-apply) or
	// "failed" (a change set failed and was put back); for a run whose
	// manifest cannot be read (Problem says why), "other-format" (written
	// by a sessfix of another manifest format) or "damaged".
	State  string     `json:"state"`
	Undone *time.Time `json:"undone,omitempty"`
	// Operation is the sessfix command the run belongs to: the runs one
	// fix wrote over several stores share it. A run recorded without one
	// is its own operation (its run id). Empty when the manifest cannot
	// be read.
	Operation string `json:"operation,omitempty"`
	Dir       string `json:"dir"`
	// Problem is set when the manifest cannot be read.
	Problem string `json:"problem,omitempty"`
	// Database is set for a run of a database-level change (a salvage,
	// reindex, checkpoint or vacuum), whose Sessions and Edits are 0.
	Database *RunDatabase `json:"database,omitempty"`
}

// RunDatabase is what a database-level run holds: the change, the rule it
// repairs, and the database's files backed up in the run (the database,
// its -wal and -shm, as many as existed) and their bytes.
type RunDatabase struct {
	Action string `json:"action"`
	Rule   string `json:"rule"`
	Files  int    `json:"files"`
	Bytes  int64  `json:"bytes"`
}

// List returns every run in the journal, newest first.
func List(opts Options) ([]RunInfo, error) {
	base, err := opts.backupsDir()
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list backups in %s: %w", base, err)
	}
	var out []RunInfo
	for _, e := range ents {
		if !e.IsDir() || !runIDPattern.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		ri := RunInfo{ID: e.Name(), Dir: dir}
		m, err := readManifest(dir)
		if err != nil {
			ri.Problem = err.Error()
			ri.State = "damaged"
			if of := (*otherFormatError)(nil); errors.As(err, &of) {
				ri.State = "other-format"
			}
			if t, perr := time.Parse("20060102T150405Z", e.Name()[:16]); perr == nil {
				ri.Time = t
			}
			out = append(out, ri)
			continue
		}
		ri.Time, ri.Store, ri.Sessions, ri.Operation = m.Time, m.Store, len(m.Sessions), m.Operation
		if ri.Operation == "" {
			ri.Operation = m.RunID
		}
		ri.State = StateApplied
		for _, s := range m.Sessions {
			ri.Edits += len(s.Edits)
			switch s.State {
			case StateRecorded:
				ri.State = "incomplete"
			case StateFailed:
				if ri.State == StateApplied {
					ri.State = StateFailed
				}
			}
		}
		if d := m.Database; d != nil {
			ri.Database = runDatabase(dir, d)
			ri.State = map[string]string{StateRecorded: "incomplete", StateFailed: StateFailed}[d.State]
			if ri.State == "" {
				ri.State = StateApplied
			}
		}
		if m.Undone != nil {
			ri.State = "undone"
			t := m.Undone.Time
			ri.Undone = &t
		}
		out = append(out, ri)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Time.Equal(out[j].Time) {
			return out[i].Time.After(out[j].Time)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// runDatabase counts the files a database-level run backed up and their
// bytes as they lie in the run folder.
func runDatabase(dir string, d *DatabaseEntry) *RunDatabase {
	rd := &RunDatabase{Action: d.Action, Rule: d.Rule}
	for _, f := range d.Files {
		if !f.Existed {
			continue
		}
		rd.Files++
		if fi, err := os.Stat(filepath.Join(dir, f.File)); err == nil {
			rd.Bytes += fi.Size()
		}
	}
	return rd
}

// ErrAllUndone means every run undo --last could pick is undone already.
var ErrAllUndone = errors.New("every backup run is already undone")

// LastOp is what undo --last reverts: an operation and its runs.
type LastOp struct {
	// ID is the operation's id ("" when no run is left to undo).
	ID string
	// Runs are the operation's runs that are not undone (and that the
	// match accepts), newest first.
	Runs []RunInfo
	// Unread are the runs newer than every run of Runs (all of them when
	// none is left to undo) whose manifest cannot be read, newest first:
	// sessfix cannot tell what they changed, nor undo them.
	Unread []RunInfo
}

// LastOperation finds what undo --last reverts: among the runs match
// accepts (nil: every run), the newest one not yet undone names an
// operation, and LastOperation returns that operation and its runs that
// match accepts and are not undone, newest first. Runs whose manifest
// cannot be read are left out, and those newer than the operation named
// in Unread. The error wraps ErrNoRuns when match accepts no run,
// ErrAllUndone when each one it accepts is undone (Unread is set then too).
func LastOperation(opts Options, match func(RunInfo) bool) (LastOp, error) {
	var last LastOp
	runs, err := List(opts)
	if err != nil {
		return last, err
	}
	candidates := 0
	for _, r := range runs { // newest first
		switch {
		case r.Problem != "":
			if last.ID == "" {
				last.Unread = append(last.Unread, r)
			}
			continue
		case match != nil && !match(r):
			continue
		}
		candidates++
		if r.Undone != nil {
			continue
		}
		if last.ID == "" {
			last.ID = r.Operation
		}
		if r.Operation == last.ID {
			last.Runs = append(last.Runs, r)
		}
	}
	switch {
	case candidates == 0:
		base, _ := opts.backupsDir()
		return last, fmt.Errorf("%w in %s; nothing to undo", ErrNoRuns, base)
	case last.ID == "":
		return last, ErrAllUndone
	}
	return last, nil
}

// Older returns the runs of the operations whose every run was begun more
// than olderThan ago, newest first: what backups prune removes. An
// operation is kept whole: one run younger than the age keeps every run
// of its command, which undo --last reverts together. A run whose manifest
// cannot be read is an operation of its own.
//
// Two kinds of old run are never returned, but listed in kept with why:
// a run whose manifest cannot be read (a newer sessfix's, or a damaged
// one: sessfix cannot tell what it holds or whose operation it is part
// of), and a run stopped mid-apply (it holds the bytes the next writer
// lock on its store puts back).
func Older(opts Options, olderThan time.Duration) (old []RunInfo, kept []KeptRun, err error) {
	runs, err := List(opts)
	if err != nil {
		return nil, nil, err
	}
	cutoff := opts.now().Add(-olderThan)
	young := map[string]bool{} // operations with a run not older than the cutoff
	for _, r := range runs {
		if !r.Time.Before(cutoff) {
			young[operationOf(r)] = true
		}
	}
	for _, r := range runs {
		if young[operationOf(r)] {
			continue
		}
		switch {
		case r.Problem != "":
			kept = append(kept, KeptRun{RunInfo: r, Why: "its manifest cannot be read (" + r.Problem + ")"})
		case r.State == "incomplete":
			kept = append(kept, KeptRun{RunInfo: r, Why: "it was stopped mid-write and holds what the next sessfix run on " + r.Store.Path + " puts back"})
		default:
			old = append(old, r)
		}
	}
	return old, kept, nil
}

// KeptRun is an old run Older does not hand to prune, and why.
type KeptRun struct {
	RunInfo
	Why string
}

// operationOf is the operation r belongs to; a run whose manifest cannot
// be read (no operation known) is its own.
func operationOf(r RunInfo) string {
	if r.Operation == "" {
		return r.ID
	}
	return r.Operation
}

// Remove deletes the folders of runs (as List or Older returned them) and
// returns those removed, stopping at the first that cannot be.
func Remove(runs []RunInfo) ([]RunInfo, error) {
	var removed []RunInfo
	for _, r := range runs {
		if err := os.RemoveAll(r.Dir); err != nil {
			return removed, fmt.Errorf("cannot remove backup run %s: %w", r.Dir, err)
		}
		removed = append(removed, r)
	}
	return removed, nil
}

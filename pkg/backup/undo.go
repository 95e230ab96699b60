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

// Undo restores the store a run changed, byte for byte. runID "" or "last"
// means the newest run. Records whose current bytes are not what the run
// left are refused (the error wraps store.ErrChanged, the result lists
// them) and nothing is restored, unless force. It takes the store's writer
// lock. Undoing a run that was already undone does nothing and says so.
func Undo(ctx context.Context, opts Options, runID string, force bool) (*UndoResult, error) {
	dir, m, err := openRun(opts, runID)
	if err != nil {
		return nil, err
	}
	res := &UndoResult{RunID: m.RunID, Store: m.Store}
	if m.Undone != nil {
		res.AlreadyUndone = true
		res.Message = fmt.Sprintf("run %s was already undone on %s; nothing to do", m.RunID, m.Undone.Time.Local().Format(time.DateTime))
		return res, nil
	}
	if _, err := os.Stat(m.Store.Path); errors.Is(err, fs.ErrNotExist) {
		// Restoring elsewhere would need every target's path rewritten:
		// name the backup instead, so the user can put the store back.
		return nil, &StoreGoneError{RunID: m.RunID, Store: m.Store, Before: filepath.Join(dir, "before")}
	}
	lock, err := store.AcquireLock(m.Store)
	if err != nil {
		return nil, fmt.Errorf("cannot undo run %s: %w", m.RunID, err)
	}
	defer lock.Release()
	w, err := shapes.OpenWriter(m.Store, opts.Write)
	if err != nil {
		return nil, fmt.Errorf("cannot undo run %s: %w", m.RunID, err)
	}
	defer w.Close()

	// The oldest image of a target is what it was before the run; the
	// newest entry says what the run left.
	type plan struct {
		first *ImageEntry
		last  *ImageEntry
		state string
	}
	plans := map[string]*plan{}
	var order []string
	for _, s := range m.Sessions {
		for i := range s.Images {
			im := &s.Images[i]
			k := key(im.Target)
			p := plans[k]
			if p == nil {
				p = &plan{first: im}
				plans[k] = p
				order = append(order, k)
			}
			p.last, p.state = im, s.State
		}
	}
	var targets []store.Target
	for _, k := range order {
		targets = append(targets, plans[k].first.Target)
	}
	current, err := w.Read(ctx, targets)
	if err != nil {
		return nil, fmt.Errorf("cannot undo run %s: %w", m.RunID, err)
	}
	var restore []store.Image
	for i, k := range order {
		p, cur := plans[k], current[i]
		if cur.Exists == p.first.Existed && cur.Hash() == p.first.SHA256Before {
			if cur.Mode == p.first.Mode || !cur.Exists || p.first.Table != "" {
				res.Unchanged++
				continue
			}
		}
		switch {
		case p.state == StateRecorded:
			res.Refused = append(res.Refused, Refusal{p.first.Target, "the run stopped before it finished, so what it wrote is unknown"})
		case cur.Exists != p.last.ExistsAfter || cur.Hash() != p.last.SHA256After:
			res.Refused = append(res.Refused, Refusal{p.first.Target, describeChange(cur, p.last)})
		}
		// Restore only over the state checked here: a write between this
		// check and the restore refuses the whole undo.
		checked := cur.Hash()
		im := p.first.image()
		im.Expect = &checked
		if p.first.Existed {
			data, err := os.ReadFile(filepath.Join(dir, p.first.File))
			if err != nil {
				return nil, fmt.Errorf("cannot undo run %s: the backup of %s is missing: %w", m.RunID, p.first.Target, err)
			}
			if store.HashBytes(data) != p.first.SHA256Before {
				return nil, fmt.Errorf("cannot undo run %s: the backup of %s (%s) is damaged: its sha256 does not match the manifest; nothing was restored",
					m.RunID, p.first.Target, filepath.Join(dir, p.first.File))
			}
			im.Data = data
		}
		restore = append(restore, im)
	}
	if len(res.Refused) > 0 && !force {
		return res, &RefusedError{RunID: m.RunID, Refused: res.Refused}
	}
	if len(restore) > 0 {
		if beforeRestore != nil {
			beforeRestore()
		}
		if err := w.Restore(ctx, restore); err != nil {
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

// beforeRestore, when set (by tests), runs between Undo's check of the
// store and the restore.
var beforeRestore func()

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
	if runID == "" || runID == "last" {
		runs, err := List(opts)
		if err != nil {
			return "", nil, err
		}
		if len(runs) == 0 {
			return "", nil, fmt.Errorf("%w in %s; nothing to undo", ErrNoRuns, base)
		}
		runID = runs[0].ID
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

func readManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("backup manifest %s is damaged: %w", path, err)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("backup manifest %s has format %d; this sessfix reads format %d", path, m.Format, ManifestFormat)
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
	// "failed" (a change set failed and was put back).
	State  string     `json:"state"`
	Undone *time.Time `json:"undone,omitempty"`
	Dir    string     `json:"dir"`
	// Problem is set when the manifest cannot be read.
	Problem string `json:"problem,omitempty"`
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
			if t, perr := time.Parse("20060102T150405Z", e.Name()[:16]); perr == nil {
				ri.Time = t
			}
			out = append(out, ri)
			continue
		}
		ri.Time, ri.Store, ri.Sessions = m.Time, m.Store, len(m.Sessions)
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

// Prune removes runs older than olderThan and returns them.
func Prune(opts Options, olderThan time.Duration) ([]RunInfo, error) {
	runs, err := List(opts)
	if err != nil {
		return nil, err
	}
	cutoff := opts.now().Add(-olderThan)
	var removed []RunInfo
	for _, r := range runs {
		if !r.Time.Before(cutoff) {
			continue
		}
		if err := os.RemoveAll(r.Dir); err != nil {
			return removed, fmt.Errorf("cannot remove backup run %s: %w", r.Dir, err)
		}
		removed = append(removed, r)
	}
	return removed, nil
}

package backup

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// Options locate the journal and tune the writers undo opens.
type Options struct {
	// Dir is sessfix's state directory; empty means StateDir().
	Dir string
	// Now is the clock (tests inject it); nil means time.Now.
	Now func() time.Time
	// Write tunes the store writers Apply and Undo open.
	Write store.WriteOptions
	// Operation is the id of the sessfix command whose runs these are
	// (NewOperationID): every run Begin makes with it records it, so
	// that undo --last reverts all the runs of one command together.
	// Empty: each run is an operation of its own.
	Operation string
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// backupsDir is where the run folders live.
func (o Options) backupsDir() (string, error) {
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = StateDir(); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "backups"), nil
}

// StateDir is sessfix's state directory: $SESSFIX_STATE_DIR, else
// $XDG_STATE_HOME/sessfix (when absolute), else ~/.local/state/sessfix.
func StateDir() (string, error) {
	if d := os.Getenv("SESSFIX_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "sessfix"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", &StateDirError{Err: err}
	}
	return filepath.Join(home, ".local", "state", "sessfix"), nil
}

// ManifestFormat is the version of manifest.json's layout. Format 2 added
// the planned state of every image and partial backups (only the spans of
// a file the run changed); a sessfix that reads only format 1 refuses it
// rather than restore a partial backup as a whole file.
const ManifestFormat = 2

// readsFormat reports whether this sessfix reads a manifest format.
func readsFormat(f int) bool { return f == 1 || f == ManifestFormat }

// Manifest is a run's manifest.json.
type Manifest struct {
	Format  int        `json:"format"`
	RunID   string     `json:"run"`
	Time    time.Time  `json:"time"`
	Version string     `json:"sessfix_version"`
	Store   store.Info `json:"store"`
	// Operation is the command the run belongs to (Options.Operation);
	// empty in a run that is an operation of its own, and in runs
	// written before operations were recorded.
	Operation string `json:"operation,omitempty"`
	// Sessions are the change sets of the run, in the order applied.
	Sessions []*SessionEntry `json:"sessions"`
	// Database is the run's database-level change (dbfile.go), when it
	// made one instead of change sets.
	Database *DatabaseEntry `json:"database,omitempty"`
	// Undone is set once the run has been undone.
	Undone *UndoneEntry `json:"undone,omitempty"`
}

// Session entry states.
const (
	// StateRecorded: backed up, the writer was about to apply it (a run
	// that stops here crashed mid-apply).
	StateRecorded = "recorded"
	// StateApplied: applied; the after hashes are known.
	StateApplied = "applied"
	// StateFailed: the writer failed; it normally put everything back, and
	// the after hashes say what it left.
	StateFailed = "failed"
)

// SessionEntry is one change set in a run.
type SessionEntry struct {
	SessionID string       `json:"session"`
	State     string       `json:"state"`
	Error     string       `json:"error,omitempty"`
	Edits     []EditEntry  `json:"edits"`
	Images    []ImageEntry `json:"images"`
}

// EditEntry records one planned edit.
type EditEntry struct {
	Op        store.Op       `json:"op"`
	Kind      store.Kind     `json:"kind"`
	ID        string         `json:"id"`
	NewID     string         `json:"new_id,omitempty"`
	SessionID string         `json:"session_id,omitempty"`
	MessageID string         `json:"message_id,omitempty"`
	Location  store.Location `json:"location"`
	// SHA256Before and SHA256After hash the record's body before and after
	// ("" when there is none: an added or removed record).
	SHA256Before string `json:"sha256_before"`
	SHA256After  string `json:"sha256_after"`
	Rule         string `json:"rule,omitempty"`
	Mutation     string `json:"mutation,omitempty"`
	Reason       string `json:"reason,omitempty"`
	// Payload is the file, relative to the run folder, that holds media the
	// edit moved out of the record (store.Edit.Payload), decoded.
	Payload string `json:"payload,omitempty"`
}

// ImageEntry is the saved state of one file or row the change set touched.
type ImageEntry struct {
	store.Target
	// Existed is whether the file or row existed before the run; File holds
	// its bytes (file content or the data column), relative to the run folder.
	Existed bool           `json:"existed"`
	File    string         `json:"file,omitempty"`
	Mode    fs.FileMode    `json:"mode,omitempty"`
	Columns []store.Column `json:"columns,omitempty"`
	// Blob marks a row's data column saved from a BLOB.
	Blob bool `json:"blob,omitempty"`
	// KeepDir marks a file that did not exist in a directory that did.
	KeepDir bool `json:"keep_dir,omitempty"`
	// MadeDir is the outermost directory of a file that did not exist
	// that did not exist either (store.Image.MadeDir).
	MadeDir string `json:"made_dir,omitempty"`
	// SHA256Before hashes the file or row before the run; SHA256After what
	// the run left ("" when absent). ExistsAfter is false when the run
	// removed it.
	SHA256Before string `json:"sha256_before"`
	SHA256After  string `json:"sha256_after,omitempty"`
	ExistsAfter  bool   `json:"exists_after,omitempty"`
	// Planned is what the run set out to leave (store.Writer.Planned),
	// recorded before it wrote anything: what undo accepts as written by a
	// run that was killed before it could record what it left.
	Planned *Planned `json:"planned,omitempty"`
	// Spans, when set, say that File holds only the bytes the run
	// replaced in a large file (an export), one span after the other: the
	// file before the run is the file the run left with each span put back
	// (store.Revert). Undo needs the file as the run left it.
	Spans []SpanEntry `json:"spans,omitempty"`
	// SHA256File hashes File when it holds spans (SHA256Before hashes the
	// whole file they restore).
	SHA256File string `json:"sha256_file,omitempty"`
}

// SpanEntry is a store.Span in a manifest: its bytes are in the image's
// File, after those of the spans before it.
type SpanEntry struct {
	At     int `json:"at"`
	Len    int `json:"len"`
	OldLen int `json:"old_len"`
}

// spans splits data, the bytes of a partial backup, into its spans.
func (ie *ImageEntry) spans(data []byte) ([]store.Span, error) {
	out := make([]store.Span, len(ie.Spans))
	for i, se := range ie.Spans {
		if se.OldLen < 0 || se.OldLen > len(data) {
			return nil, fmt.Errorf("the backup of %s holds %d bytes fewer than its manifest says", ie.Target, se.OldLen-len(data))
		}
		out[i] = store.Span{At: se.At, Len: se.Len, Old: data[:se.OldLen]}
		data = data[se.OldLen:]
	}
	if len(data) != 0 {
		return nil, fmt.Errorf("the backup of %s holds %d bytes more than its manifest says", ie.Target, len(data))
	}
	return out, nil
}

// Planned is the state a run set out to leave a file or row in.
type Planned struct {
	Exists bool   `json:"exists"`
	SHA256 string `json:"sha256,omitempty"`
}

// imageEntry records what the backup keeps of an image: everything but
// its bytes, which go to File.
func imageEntry(im store.Image) ImageEntry {
	return ImageEntry{Target: im.Target, Existed: im.Exists, Mode: im.Mode, Columns: im.Columns,
		Blob: im.Blob, KeepDir: im.KeepDir, MadeDir: im.MadeDir, SHA256Before: im.Hash()}
}

// image is the target as it was before the run, without its bytes (the
// caller reads File): what undo restores.
func (ie *ImageEntry) image() store.Image {
	return store.Image{Target: ie.Target, Exists: ie.Existed, Mode: ie.Mode, Columns: ie.Columns,
		Blob: ie.Blob, KeepDir: ie.KeepDir, MadeDir: ie.MadeDir}
}

// UndoneEntry says when a run was undone.
type UndoneEntry struct {
	Time     time.Time `json:"time"`
	Version  string    `json:"sessfix_version"`
	Forced   bool      `json:"forced,omitempty"`
	Restored int       `json:"restored"`
}

// Journal is an open backup run.
type Journal struct {
	opts    Options
	dir     string
	m       *Manifest
	pending *SessionEntry
	cs      *store.ChangeSet
	targets []store.Target
	w       store.Writer
	files   int
}

var runIDPattern = regexp.MustCompile(`^\d{8}T\d{6}Z-[0-9a-z]{6}$`)

// IsRunID reports whether s has the form of a run id
// (20261121T153000Z-k3x9qa).
func IsRunID(s string) bool { return runIDPattern.MatchString(s) }

// NewRunID returns a run id that sorts by time: 20261121T153000Z-k3x9qa.
func NewRunID(now time.Time) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return now.UTC().Format("20060102T150405Z") + "-" + string(b)
}

// NewOperationID returns the id of one sessfix command that writes (one
// fix over many stores): the same form as a run id, so that it sorts by
// time. Pass it as Options.Operation to every Apply of the command.
func NewOperationID(now time.Time) string { return NewRunID(now) }

// Begin starts a backup run for a store: it creates the run folder and an
// empty manifest.
func Begin(opts Options, info store.Info) (*Journal, error) {
	base, err := opts.backupsDir()
	if err != nil {
		return nil, err
	}
	if err := mkdirPrivate(base); err != nil {
		return nil, err
	}
	now := opts.now()
	removeAbandoned(base, now)
	if abs, err := filepath.Abs(info.Path); err == nil {
		info.Path = abs
	}
	for {
		id := NewRunID(now)
		dir := filepath.Join(base, id)
		if _, err := os.Lstat(dir); err == nil {
			continue
		}
		// The run folder appears whole, with its manifest, or not at all:
		// it is made under a hidden name and renamed into place, so a
		// sessfix killed meanwhile leaves no run without a manifest.
		tmp := filepath.Join(base, newRunPrefix+id)
		if err := os.Mkdir(tmp, 0o700); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return nil, backupError(fmt.Errorf("cannot create the backup folder %s: %w", tmp, err))
		}
		j := &Journal{opts: opts, dir: tmp, m: &Manifest{
			Format: ManifestFormat, RunID: id, Time: now.UTC(), Version: store.SessfixVersion(), Store: info,
			Operation: opts.Operation,
		}}
		err := mkdirPrivate(filepath.Join(tmp, "before"))
		if err == nil {
			err = j.save()
		}
		if err == nil {
			if err = atomicfile.SyncDir(tmp); err != nil {
				err = backupError(fmt.Errorf("cannot sync the backup folder %s: %w", tmp, err))
			}
		}
		if err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		if err := os.Rename(tmp, dir); err != nil {
			os.RemoveAll(tmp)
			if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY) {
				continue // another run took the id meanwhile
			}
			return nil, backupError(fmt.Errorf("cannot create the backup folder %s: %w", dir, err))
		}
		// The run folder's entry must survive a crash as surely as the
		// store edits it backs up.
		if err := atomicfile.SyncDir(base); err != nil {
			os.RemoveAll(dir)
			return nil, backupError(fmt.Errorf("cannot sync the backup folder %s: %w", base, err))
		}
		j.dir = dir
		return j, nil
	}
}

// newRunPrefix names a run folder being made (Begin).
const newRunPrefix = ".new-"

// removeAbandoned removes the folders of runs a sessfix was killed while
// making (Begin), an hour after they were begun: they hold no backup of
// anything written.
func removeAbandoned(base string, now time.Time) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), newRunPrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > time.Hour {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}

// ID is the run id.
func (j *Journal) ID() string { return j.m.RunID }

// mkdirPrivate creates dir (and parents) as 0700 and syncs its parent.
func mkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return backupError(fmt.Errorf("cannot create the backup folder %s: %w", dir, err))
	}
	if err := atomicfile.SyncDir(filepath.Dir(dir)); err != nil {
		return backupError(fmt.Errorf("cannot sync the backup folder %s: %w", filepath.Dir(dir), err))
	}
	return nil
}

func backupError(err error) error { return &JournalError{Err: err} }

func (j *Journal) save() error {
	b, err := json.MarshalIndent(j.m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := atomicfile.WriteFile(filepath.Join(j.dir, "manifest.json"), b, 0o600); err != nil {
		return backupError(fmt.Errorf("cannot write the backup manifest: %w", err))
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Record backs up everything cs will touch, through the writer that will
// apply it, and writes the manifest. Call it before w.Apply(cs), then
// Commit (or Fail). When Record fails nothing may be applied.
func (j *Journal) Record(ctx context.Context, w store.Writer, cs *store.ChangeSet) error {
	if j.pending != nil {
		return errors.New("backup: the previous change set was neither committed nor failed")
	}
	targets, err := w.Targets(ctx, cs)
	if err != nil {
		return err
	}
	images, err := w.Read(ctx, targets)
	if err != nil {
		return err
	}
	planned, err := w.Planned(ctx, cs, images)
	if err != nil {
		return err
	}
	e := &SessionEntry{SessionID: cs.SessionID, State: StateRecorded}
	for _, ed := range cs.Edits {
		ee := EditEntry{
			Op: ed.Op, Kind: ed.Kind, ID: ed.ID, NewID: ed.NewID, SessionID: ed.SessionID, MessageID: ed.MessageID,
			Location: ed.Loc, Rule: ed.Rule, Mutation: ed.Mutation, Reason: ed.Reason,
		}
		if ed.Op != store.OpAdd {
			ee.SHA256Before = store.HashBytes(ed.Before)
		}
		switch ed.Op {
		case store.OpUpdate, store.OpAdd:
			ee.SHA256After = store.HashBytes(ed.After)
		case store.OpRekey:
			after := ed.After
			if len(after) == 0 {
				after = ed.Before
			}
			ee.SHA256After = store.HashBytes(after)
		}
		if ed.Payload != nil {
			file, err := j.savePayload(ed.Payload)
			if err != nil {
				return err
			}
			ee.Payload = file
		}
		e.Edits = append(e.Edits, ee)
	}
	for i, im := range images {
		ie := imageEntry(im)
		ie.Planned = &Planned{Exists: planned[i].Exists, SHA256: planned[i].Hash()}
		data := im.Data
		if pl := planned[i]; pl.Spans != nil && pl.Exists && im.Exists {
			// A large file: back up what the run replaces, not all of it.
			ie.Spans, data = make([]SpanEntry, len(pl.Spans)), nil
			for k, sp := range pl.Spans {
				ie.Spans[k] = SpanEntry{At: sp.At, Len: sp.Len, OldLen: len(sp.Old)}
				data = append(data, sp.Old...)
			}
			ie.SHA256File = store.HashBytes(data)
		}
		if im.Exists {
			j.files++
			name := im.ID
			if name == "" {
				name = filepath.Base(im.Path)
			}
			kind := string(im.Kind)
			if kind == "" {
				kind = "file"
			}
			ie.File = filepath.Join("before", fmt.Sprintf("%04d-%s-%s", j.files, kind, unsafeName.ReplaceAllString(name, "_")))
			if err := atomicfile.WriteFile(filepath.Join(j.dir, ie.File), data, 0o600); err != nil {
				return backupError(fmt.Errorf("cannot back up %s: %w", im.Target, err))
			}
		}
		e.Images = append(e.Images, ie)
	}
	j.m.Sessions = append(j.m.Sessions, e)
	if err := j.save(); err != nil {
		j.m.Sessions = j.m.Sessions[:len(j.m.Sessions)-1]
		return err
	}
	j.pending, j.cs, j.targets, j.w = e, cs, targets, w
	return nil
}

// Commit records what the applied change set left (the after hashes undo
// checks against).
func (j *Journal) Commit(ctx context.Context) error {
	return j.finish(ctx, StateApplied, nil)
}

// Fail records that applying the change set failed, with what it left.
func (j *Journal) Fail(ctx context.Context, cause error) error {
	return j.finish(ctx, StateFailed, cause)
}

func (j *Journal) finish(ctx context.Context, state string, cause error) error {
	e := j.pending
	if e == nil {
		return errors.New("backup: no change set recorded")
	}
	j.pending = nil
	after, err := j.w.Read(ctx, j.targets)
	if err != nil {
		// Leave the entry "recorded": undo will ask for --force.
		return fmt.Errorf("cannot read back what was written for the backup manifest: %w", err)
	}
	for i := range e.Images {
		e.Images[i].SHA256After = after[i].Hash()
		e.Images[i].ExistsAfter = after[i].Exists
	}
	for i := range e.Edits {
		if i < len(j.cs.Edits) {
			e.Edits[i].Location = j.cs.Edits[i].Loc // writers fill it in for added records
		}
	}
	e.State = state
	if cause != nil {
		e.Error = cause.Error()
	}
	return j.save()
}

// Discard drops the recorded change set when the writer refused it
// without writing anything (a record changed since the scan, a database
// locked past the busy timeout): its backed-up images are removed and the
// manifest no longer names it, so a run that only held it is removed by
// Close and there is nothing to undo.
func (j *Journal) Discard() error {
	e := j.pending
	if e == nil {
		return errors.New("backup: no change set recorded")
	}
	j.pending = nil
	for _, ie := range e.Images {
		if ie.File != "" {
			if err := os.Remove(filepath.Join(j.dir, ie.File)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	j.m.Sessions = j.m.Sessions[:len(j.m.Sessions)-1]
	return j.save()
}

// Close ends the run. A run that recorded nothing is removed.
func (j *Journal) Close() error {
	if len(j.m.Sessions) == 0 {
		return os.RemoveAll(j.dir)
	}
	return nil
}

// Empty reports whether the run recorded nothing.
func (j *Journal) Empty() bool { return len(j.m.Sessions) == 0 }

// Apply backs up and applies change sets to one store, one run for all of
// them: each change set is recorded, applied and committed in turn. The
// caller holds the store's writer lock (Lock). It returns the
// run id ("" when nothing was written).
//
// When a change set fails, Apply stops with an *ApplyError naming it and
// the sessions written before it: those stay applied, and the run id is
// returned so they can be undone. A change set that left the store as it
// was (the writer refused it, ErrChanged or ErrLocked, or failed and put
// every record back) is dropped from the run; one that left something
// changed stays in it, as failed, so undo can put it back.
func Apply(ctx context.Context, opts Options, info store.Info, sets []*store.ChangeSet) (runID string, err error) {
	var todo []*store.ChangeSet
	for _, cs := range sets {
		if !cs.Empty() {
			todo = append(todo, cs)
		}
	}
	if len(todo) == 0 {
		return "", nil
	}
	w, err := shapes.OpenWriter(info, opts.Write)
	if err != nil {
		return "", err
	}
	defer w.Close()
	j, err := Begin(opts, info)
	if err != nil {
		return "", err
	}
	var written []string
	defer func() {
		if cerr := j.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if j.Empty() {
			runID = ""
		}
		if ae, ok := err.(*ApplyError); ok {
			ae.RunID = runID
		}
	}()
	failed := func(cs *store.ChangeSet, err error) (string, error) {
		return j.ID(), &ApplyError{Session: cs.SessionID, Written: written, Err: err}
	}
	for _, cs := range todo {
		if err := j.Record(ctx, w, cs); err != nil {
			return failed(cs, err)
		}
		if aerr := w.Apply(ctx, cs); aerr != nil {
			if unchanged(aerr) {
				// Nothing of it was written: nothing to undo for it.
				if derr := j.Discard(); derr != nil {
					aerr = fmt.Errorf("%w (and its unused backup could not be removed: %v)", aerr, derr)
				}
				return failed(cs, aerr)
			}
			if ferr := j.Fail(ctx, aerr); ferr != nil {
				aerr = fmt.Errorf("%w (and the backup manifest could not be updated: %v)", aerr, ferr)
			}
			return failed(cs, aerr)
		}
		if err := j.Commit(ctx); err != nil {
			written = append(written, cs.SessionID)
			return failed(cs, fmt.Errorf("it was repaired, but %w", err))
		}
		written = append(written, cs.SessionID)
	}
	return j.ID(), nil
}

// unchanged reports whether a writer's failure left the store as it was:
// a refusal (a record changed since the scan, a database locked past the
// busy timeout) or a failed write that put everything back.
func unchanged(err error) bool {
	if errors.Is(err, store.ErrChanged) || errors.Is(err, store.ErrLocked) {
		return true
	}
	var we *store.WriteError
	return errors.As(err, &we) && we.Unchanged
}

// savePayload writes media an edit moves out of its record into the run
// folder (payloads/NAME), decoded from base64 as it is written, so a
// payload of hundreds of MB is never held twice; synced before the record
// is changed.
func (j *Journal) savePayload(p *store.Payload) (string, error) {
	name := store.PayloadName(p.Name)
	rel := filepath.Join("payloads", name)
	path := filepath.Join(j.dir, rel)
	if err := mkdirPrivate(filepath.Dir(path)); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", backupError(fmt.Errorf("cannot keep the moved media %s: %w", name, err))
	}
	_, err = io.Copy(f, base64.NewDecoder(base64.StdEncoding, bytes.NewReader(p.Base64)))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = atomicfile.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(path)
		return "", backupError(fmt.Errorf("cannot keep the moved media %s: %w", name, err))
	}
	return rel, nil
}

package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"time"

	"github.com/sessfix/sessfix/internal/atomicfile"
)

// Writer is a shape's writer: it applies change sets to one store, and
// reads and restores exactly what they touch, for backups and undo. Every
// target of a change set can be read as an exact Image before it is
// applied and restored from that image afterwards.
//
// Apply checks, before writing anything, that every edit's Before bytes are
// still what the store holds; if any record changed since the scan it
// refuses the whole change set (a *ChangedError naming the record) and
// changes nothing. An OpQuarantine edit with a nil Before takes the record
// whatever it holds (a reader could not read it; the backup keeps its
// bytes). Apply fills in Loc of the records it creates.
//
// Apply does not take the writer lock and does not back up: callers hold
// the writer lock (backup.Lock) and record the change set in a backup journal (pkg/backup)
// first; backup.Apply records and applies a list of change sets.
type Writer interface {
	Apply(ctx context.Context, cs *ChangeSet) error
	// Targets lists everything cs would touch: files (JSON shapes and export
	// files) or rows (SQLite), including records an edit changes implicitly
	// (the parts of a deleted or re-keyed message). Call it before Apply.
	Targets(ctx context.Context, cs *ChangeSet) ([]Target, error)
	// Read returns the current image of each target.
	Read(ctx context.Context, targets []Target) ([]Image, error)
	// Planned returns the image each target will have once cs is applied,
	// exactly as Apply would write it (Exists, Data, and Spans where the
	// writer knows them), in the order of before: the current images
	// (Read) of the targets Targets listed for cs. It writes nothing. The
	// backup journal records it, so undo knows what a run that was
	// killed part way through had set out to write; dry runs diff it.
	Planned(ctx context.Context, cs *ChangeSet, before []Image) ([]Image, error)
	// Restore makes each target exactly its image: writes or re-inserts
	// what existed, removes what did not. SQLite restores in one
	// transaction; files are each replaced atomically.
	Restore(ctx context.Context, images []Image) error
	Close() error
}

// Listing remembers what a writer's Targets returned for a change set, and
// what Read then returned for those targets (the images the backup keeps),
// so Apply can refuse to touch anything the backup did not cover or that
// changed since: a part OpenCode added to, or rewrote in, a message sessfix
// deletes or re-keys, between the backup and the write. Its zero value
// remembers nothing.
type Listing struct {
	cs      *ChangeSet
	targets map[Target]bool
	read    map[Target]string // Image.Hash of what Read returned
}

// Remember records what Targets returned for cs.
func (l *Listing) Remember(cs *ChangeSet, targets []Target) {
	l.cs, l.targets, l.read = cs, map[Target]bool{}, map[Target]string{}
	for _, t := range targets {
		l.targets[t] = true
	}
}

// Listed reports whether Targets listed cs (the change set Remember saw
// last).
func (l *Listing) Listed(cs *ChangeSet) bool { return l.cs != nil && l.cs == cs }

// Saw records the images Read returned for targets of the remembered
// change set.
func (l *Listing) Saw(images []Image) {
	for _, im := range images {
		if l.targets[im.Target] {
			l.read[im.Target] = im.Hash()
		}
	}
}

// Uncovered returns the first of targets the backup of cs did not list,
// when cs was listed at all.
func (l *Listing) Uncovered(cs *ChangeSet, targets []Target) (Target, bool) {
	if !l.Listed(cs) {
		return Target{}, false
	}
	for _, t := range targets {
		if !l.targets[t] {
			return t, true
		}
	}
	return Target{}, false
}

// Changed returns a *ChangedError for the first image that differs from
// what Read returned for the backup of cs (nil when cs was not read).
func (l *Listing) Changed(cs *ChangeSet, images []Image) error {
	if !l.Listed(cs) {
		return nil
	}
	for _, im := range images {
		h, ok := l.read[im.Target]
		if !ok || h == im.Hash() {
			continue
		}
		how := "was modified"
		if !im.Exists {
			how = "was removed"
		}
		return Changed(im.Target.String(), im.Kind, im.ID, how)
	}
	return nil
}

// NotBackedUp is the refusal of a change set that would touch t, which its
// backup did not list (Uncovered).
func NotBackedUp(t Target) error {
	return Changed(t.String(), t.Kind, t.ID, "appeared after the backup was taken")
}

// Target names one thing a writer touches.
type Target struct {
	// Kind and ID name the record; a whole export file has Kind "" and ID "".
	Kind Kind   `json:"kind,omitempty"`
	ID   string `json:"id,omitempty"`
	// Path is the file, or the database for rows.
	Path string `json:"path"`
	// Table is "session", "message" or "part" for SQLite rows.
	Table string `json:"table,omitempty"`
}

// String renders the target for messages: "path" or "path:table/id".
func (t Target) String() string {
	if t.Table != "" {
		return t.Path + ":" + t.Table + "/" + t.ID
	}
	return t.Path
}

// Image is the exact state of a target.
type Image struct {
	Target
	// Exists is false for a file or row that is absent.
	Exists bool `json:"exists"`
	// Mode is a file's permission bits.
	Mode fs.FileMode `json:"mode,omitempty"`
	// Data is the file's bytes or the row's data column; for a session
	// row, which has none, the JSON object of its columns the reader
	// builds (Restore writes Columns).
	Data []byte `json:"-"`
	// Blob is true when a row's data column holds a BLOB, not TEXT (which
	// OpenCode writes): restored, it is a BLOB again.
	Blob bool `json:"blob,omitempty"`
	// KeepDir is true for a file that did not exist in a directory that
	// did: restoring its absence leaves the directory, even empty.
	KeepDir bool `json:"keep_dir,omitempty"`
	// MadeDir, for a file that did not exist in a directory that did not
	// either, is the outermost of its directories that did not exist:
	// restoring its absence removes the directories from the file's up to
	// this one, each when it is empty.
	MadeDir string `json:"made_dir,omitempty"`
	// Columns are a row's other columns (all but id and data; rowid
	// included), so a deleted row can be re-inserted exactly.
	Columns []Column `json:"columns,omitempty"`
	// Spans, on an image Planned returns, locate every byte range in which
	// it differs from the image it was planned from (in order, not
	// overlapping): what a large file's backup keeps instead of all of it.
	// Nil when the writer does not track them.
	Spans []Span `json:"-"`
	// Expect, when set, is the Hash the target must still have for Restore
	// to replace it: the state the caller read and checked. Restore refuses
	// with ErrChanged and restores nothing otherwise (checked inside the
	// transaction for SQLite, just before the first file is replaced for
	// files).
	Expect *string `json:"-"`
}

// Span is one byte range where an image differs from an earlier one: the
// Len bytes at At (in the later image) replaced Old.
type Span struct {
	At, Len int
	Old     []byte
}

// Revert returns the earlier image's bytes: later with every span's bytes
// replaced by the Old bytes they replaced. The spans must be in order and
// within later.
func Revert(later []byte, spans []Span) ([]byte, error) {
	n := len(later)
	for _, sp := range spans {
		n += len(sp.Old) - sp.Len
	}
	out := make([]byte, 0, max(n, 0))
	pos := 0
	for _, sp := range spans {
		if sp.At < pos || sp.Len < 0 || sp.At+sp.Len > len(later) {
			return nil, fmt.Errorf("span %d+%d is out of order or outside the %d bytes", sp.At, sp.Len, len(later))
		}
		out = append(out, later[pos:sp.At]...)
		out = append(out, sp.Old...)
		pos = sp.At + sp.Len
	}
	return append(out, later[pos:]...), nil
}

// Unexpected returns a *ChangedError for the first image whose current
// state (cur, in the same order) is not the state it expects (Expect).
func Unexpected(images, cur []Image) error {
	for i, im := range images {
		if im.Expect == nil || cur[i].Hash() == *im.Expect {
			continue
		}
		how := "was modified"
		switch {
		case !cur[i].Exists:
			how = "was removed"
		case *im.Expect == "":
			how = "was created"
		}
		return &ChangedError{Where: im.Target.String(), How: how, Restoring: true}
	}
	return nil
}

// Expects reports whether any image carries an Expect.
func Expects(images []Image) bool {
	for _, im := range images {
		if im.Expect != nil {
			return true
		}
	}
	return false
}

// CheckExpected reads the targets of images that carry an Expect, through
// read, and refuses (Unexpected) when one is no longer what it expects.
func CheckExpected(ctx context.Context, read func(context.Context, []Target) ([]Image, error), images []Image) error {
	if !Expects(images) {
		return nil
	}
	targets := make([]Target, len(images))
	for i, im := range images {
		targets[i] = im.Target
	}
	cur, err := read(ctx, targets)
	if err != nil {
		return err
	}
	return Unexpected(images, cur)
}

// Hash is the hex sha256 of the image's data, or "" when it does not exist.
func (im Image) Hash() string {
	if !im.Exists {
		return ""
	}
	return HashBytes(im.Data)
}

// HashBytes is the hex sha256 of b.
func HashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Column is one SQLite column value. Exactly one of Int, Real, Text, Blob is
// set; none means NULL.
type Column struct {
	Name string   `json:"name"`
	Int  *int64   `json:"int,omitempty"`
	Real *float64 `json:"real,omitempty"`
	Text *string  `json:"text,omitempty"`
	Blob []byte   `json:"blob,omitempty"`
}

// WriteOptions tune a writer.
type WriteOptions struct {
	// BusyTimeout is how long a SQLite write waits for OpenCode to release
	// the database before giving up with ErrLocked. Zero means 5s, as
	// OpenCode itself uses.
	BusyTimeout time.Duration
	// Now is the clock for time_updated/time_created values. Nil: time.Now.
	Now func() time.Time
	// Files, when set, makes every file system call of the file writers
	// (the JSON shapes, export files): tests inject disk faults through it
	// (atomicfiletest.FaultOps). Nil: the real file system.
	Files atomicfile.Ops
}

// FileOps is Files, or the real file system.
func (o WriteOptions) FileOps() atomicfile.Ops {
	if o.Files != nil {
		return o.Files
	}
	return atomicfile.OS{}
}

// Clock returns the time to stamp records with: Now, else time.Now.
func (o WriteOptions) Clock() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

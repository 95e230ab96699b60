package fix

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// Diff writes a unified diff of what writing the change set would do to
// the store. For files (JSON records, export files) it is exactly the
// bytes the store's writer would write, file by file, labelled a/ and b/
// with the file's path relative to the store (an export file by its name),
// so `patch -p1` in a copy of the store gives the fixed files: new files
// diff against /dev/null, removed ones the other way, a re-keyed record is
// removed under its old name and created under its new one. It reads the
// files, as the writer would, to plan them. A database's compact data
// columns are shown indented so a change is readable (the header line says
// so), one record at a time. A "# " line before each diff says which edit
// it is. A data: URL's base64 over 4 KiB (a pasted image) is shown as its
// length and hash, and a first "# " line says the diff cannot be applied.
func Diff(w io.Writer, cs *store.ChangeSet) error {
	if cs.Empty() {
		return nil
	}
	if hasLongBase64(cs) {
		if _, err := io.WriteString(w, summaryNote); err != nil {
			return err
		}
		w = base64Summary{w}
	}
	if cs.Store.Shape == store.ShapeSQLite {
		return diffRows(w, cs)
	}
	return diffFiles(w, cs)
}

// diffFiles diffs every file the change set touches, before and as its
// writer plans to leave it.
func diffFiles(w io.Writer, cs *store.ChangeSet) error {
	ctx := context.Background()
	wr, err := shapes.OpenWriter(cs.Store, store.WriteOptions{})
	if err != nil {
		return err
	}
	defer wr.Close()
	targets, err := wr.Targets(ctx, cs)
	if err != nil {
		return err
	}
	before, err := wr.Read(ctx, targets)
	if err != nil {
		return err
	}
	after, err := wr.Planned(ctx, cs, before)
	if err != nil {
		return err
	}
	for i, t := range targets {
		b, a := before[i], after[i]
		if b.Exists == a.Exists && bytes.Equal(b.Data, a.Data) {
			continue
		}
		if err := writeNotes(w, cs, t, b.Exists, a.Exists); err != nil {
			return err
		}
		// A UTF-16 export file (as Windows PowerShell saves one) is not
		// text to diff or patch: say so, as git diff does.
		bin := cs.Store.Shape == store.ShapeExport && (binary(b.Data) || binary(a.Data))
		if err := fileDiff(w, relPath(cs.Store, t.Path), b, a, bin); err != nil {
			return err
		}
	}
	return nil
}

// fileDiff writes the diff of one file in git's form, which GNU patch and
// `git apply` both read: a "diff --git" line, the mode of a file created or
// removed, the blob ids (so an empty file's removal is applied too), then
// the unified diff; for a binary file, git's "Binary files ... differ"
// line instead.
func fileDiff(w io.Writer, name string, b, a store.Image, bin bool) error {
	oldLabel, newLabel := "a/"+name, "b/"+name
	fmt.Fprintf(w, "diff --git a/%s b/%s\n", name, name)
	switch {
	case !b.Exists:
		oldLabel = "/dev/null"
		fmt.Fprintf(w, "new file mode %s\nindex %s..%s\n", gitMode(a.Mode), blobID(nil, false), blobID(a.Data, true))
	case !a.Exists:
		newLabel = "/dev/null"
		fmt.Fprintf(w, "deleted file mode %s\nindex %s..%s\n", gitMode(b.Mode), blobID(b.Data, true), blobID(nil, false))
	default:
		fmt.Fprintf(w, "index %s..%s %s\n", blobID(b.Data, true), blobID(a.Data, true), gitMode(b.Mode))
	}
	if bin {
		_, err := fmt.Fprintf(w, "Binary files %s and %s differ\n", oldLabel, newLabel)
		return err
	}
	var d string
	if a.Spans != nil && b.Exists && a.Exists {
		var err error
		if d, err = spanDiff(oldLabel, newLabel, b.Data, a.Data, a.Spans); err != nil {
			return err
		}
	} else {
		d = udiff.Unified(oldLabel, newLabel, string(b.Data), string(a.Data))
	}
	_, err := io.WriteString(w, d)
	return err
}

// binary reports whether an export file's bytes are not text: they hold
// a NUL byte, which no JSON text does (git's own test), as UTF-16 does.
func binary(data []byte) bool { return bytes.IndexByte(data, 0) >= 0 }

// gitMode is a regular file's mode as git writes it.
func gitMode(m fs.FileMode) string {
	if m == 0 {
		m = 0o644
	}
	return fmt.Sprintf("100%o", m.Perm())
}

// blobID is the abbreviated git blob id of a file's bytes (all zeros for
// no file).
func blobID(data []byte, exists bool) string {
	if !exists {
		return "0000000"
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))[:7]
}

// writeNotes writes the "# " lines naming the edits behind a file's diff:
// the edits of its record, or, for a file no edit names (the part of a
// message deleted or re-keyed), what happens to it.
func writeNotes(w io.Writer, cs *store.ChangeSet, t store.Target, existed, exists bool) error {
	named := false
	for _, e := range cs.Edits {
		if t.ID != "" && (e.Kind != t.Kind || e.ID != t.ID && e.NewID != t.ID) {
			continue
		}
		named = true
		if _, err := fmt.Fprintf(w, "# %s %s %s: %s (%s)\n", e.Op, e.Kind, e.ID, e.Reason, e.Rule); err != nil {
			return err
		}
	}
	if named {
		return nil
	}
	what := "removed with its message"
	if exists && !existed {
		what = "moved with its re-keyed message"
	}
	_, err := fmt.Fprintf(w, "# %s %s: %s\n", t.Kind, t.ID, what)
	return err
}

// relPath is a file's path relative to the store, with slashes; an export
// file (the store itself) by its name. The writers name files by absolute
// path, and the store may be named relative to the working directory: both
// are made absolute first.
func relPath(info store.Info, path string) string {
	root, err := filepath.Abs(info.Path)
	if err != nil {
		return filepath.Base(path)
	}
	if path, err = filepath.Abs(path); err != nil {
		return filepath.Base(path)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return filepath.Base(path)
	}
	return filepath.ToSlash(rel)
}

// spanDiff is the unified diff of a large file from the spans where the new
// bytes differ: each span is diffed line by line, and the hunks are cut
// from a few lines around them, so the cost follows the edits, not the
// file. The hunks and their line numbers are those of a diff of the whole
// files.
func spanDiff(oldLabel, newLabel string, before, after []byte, spans []store.Span) (string, error) {
	const context = udiff.DefaultContextLines
	var edits []udiff.Edit
	shift := 0
	for _, sp := range spans {
		start := sp.At - shift
		if start < 0 || start+len(sp.Old) > len(before) || sp.At+sp.Len > len(after) {
			return "", fmt.Errorf("diff %s: a span lies outside the file", oldLabel)
		}
		for _, e := range udiff.Lines(string(sp.Old), string(after[sp.At:sp.At+sp.Len])) {
			e.Start += start
			e.End += start
			edits = append(edits, e)
		}
		shift += sp.Len - len(sp.Old)
	}
	if len(edits) == 0 {
		return "", nil
	}
	// starts[i] is where line i of before begins; the line numbers of the
	// edits come from one pass over the file.
	starts := []int{0}
	for i, c := range before {
		if c == '\n' && i+1 < len(before) {
			starts = append(starts, i+1)
		}
	}
	lineOf := func(off int) int { // the 0-based line holding off
		lo, hi := 0, len(starts)-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if starts[mid] <= off {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return lo
	}
	lineEnd := func(l int) int { // the offset after line l
		if l+1 < len(starts) {
			return starts[l+1]
		}
		return len(before)
	}
	u := udiff.UnifiedDiff{From: oldLabel, To: newLabel}
	added := 0 // lines the windows before added, less those they removed
	for i := 0; i < len(edits); {
		// A window holds the edits whose context lines overlap, and the
		// context around them: udiff cuts it into hunks as it would the
		// whole file.
		first := max(lineOf(edits[i].Start)-context, 0)
		last := lineOf(max(edits[i].End-1, edits[i].Start)) + context
		j := i + 1
		for j < len(edits) && lineOf(edits[j].Start)-context <= last+1 {
			last = max(last, lineOf(max(edits[j].End-1, edits[j].Start))+context)
			j++
		}
		last = min(last, len(starts)-1)
		from, to := starts[first], lineEnd(last)
		local := make([]udiff.Edit, j-i)
		for k, e := range edits[i:j] {
			local[k] = udiff.Edit{Start: e.Start - from, End: min(e.End, to) - from, New: e.New}
			if e.End > to {
				return "", fmt.Errorf("diff %s: an edit runs past its window", oldLabel)
			}
		}
		w, err := udiff.ToUnifiedDiff(oldLabel, newLabel, string(before[from:to]), local, context)
		if err != nil {
			return "", err
		}
		for _, h := range w.Hunks {
			h.FromLine += first
			h.ToLine += first + added
			u.Hunks = append(u.Hunks, h)
		}
		for _, e := range local {
			added += strings.Count(e.New, "\n") - strings.Count(string(before[from+e.Start:from+e.End]), "\n")
		}
		i = j
	}
	return u.String(), nil
}

// diffRows diffs a database's records one edit at a time: "a/" is the
// stored data column, "b/" the column after the edit, both indented;
// added records diff against /dev/null, deleted and quarantined ones the
// other way, and a re-keyed record is removed under its old id and added
// under its new one.
func diffRows(w io.Writer, cs *store.ChangeSet) error {
	for _, e := range cs.Edits {
		fmt.Fprintf(w, "# %s %s %s: %s (%s); data column shown indented\n", e.Op, e.Kind, e.ID, e.Reason, e.Rule)
		oldName, newName := label(cs.Store, e, e.ID), label(cs.Store, e, e.ID)
		before, after := e.Before, e.After
		var d string
		switch e.Op {
		case store.OpAdd:
			d = udiff.Unified("/dev/null", "b/"+newName, "", string(indent(after)))
		case store.OpDelete, store.OpQuarantine:
			d = udiff.Unified("a/"+oldName, "/dev/null", string(indent(before)), "")
		case store.OpRekey:
			if len(after) == 0 {
				after = before
			}
			d = udiff.Unified("a/"+oldName, "/dev/null", string(indent(before)), "") +
				udiff.Unified("/dev/null", "b/"+label(cs.Store, e, e.NewID), "", string(indent(after)))
		default:
			d = udiff.Unified("a/"+oldName, "b/"+newName, string(indent(before)), string(indent(after)))
		}
		if _, err := io.WriteString(w, d); err != nil {
			return err
		}
	}
	return nil
}

// label names a database record for a diff header: the database's name,
// its table and id.
func label(info store.Info, e store.Edit, id string) string {
	table := string(e.Kind)
	if e.Loc.Table != "" {
		table = e.Loc.Table
	}
	return filepath.Base(info.Path) + ":" + table + "/" + id
}

func indent(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return b
	}
	out.WriteByte('\n')
	return out.Bytes()
}

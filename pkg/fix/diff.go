package fix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/sessfix/sessfix/pkg/store"
)

// Diff writes a unified diff of every record the change set changes: "a/"
// is the stored body, "b/" the body after the edit; added records diff
// against /dev/null, deleted and quarantined ones the other way. Compact
// SQLite data columns are shown indented so a change is readable (the header
// line says so); JSON files are shown byte for byte.
func Diff(w io.Writer, cs *store.ChangeSet) error {
	if cs.Empty() {
		return nil
	}
	for _, e := range cs.Edits {
		oldLabel, newLabel := "a/"+label(cs.Store, e, e.ID), "b/"+label(cs.Store, e, e.ID)
		before, after := e.Before, e.After
		switch e.Op {
		case store.OpAdd:
			oldLabel, before = "/dev/null", nil
		case store.OpDelete, store.OpQuarantine:
			newLabel, after = "/dev/null", nil
		case store.OpRekey:
			newLabel = "b/" + label(cs.Store, e, e.NewID)
		}
		compact := cs.Store.Shape == store.ShapeSQLite
		if compact {
			before, after = indent(before), indent(after)
		}
		note := ""
		if compact {
			note = "; data column shown indented"
		}
		fmt.Fprintf(w, "# %s %s %s: %s (%s)%s\n", e.Op, e.Kind, e.ID, e.Reason, e.Rule, note)
		d := udiff.Unified(oldLabel, newLabel, string(before), string(after))
		if d == "" {
			// A re-key whose body does not change: say so.
			d = fmt.Sprintf("--- %s\n+++ %s\n", oldLabel, newLabel)
		}
		if _, err := io.WriteString(w, d); err != nil {
			return err
		}
	}
	return nil
}

// label names a record for a diff header: its location relative to the
// store, or, for a new record, where its kind and id put it.
func label(info store.Info, e store.Edit, id string) string {
	if e.Op != store.OpAdd && e.Loc.Path != "" {
		loc := e.Loc
		if rel, err := filepath.Rel(info.Path, loc.Path); err == nil && !strings.HasPrefix(rel, "..") && rel != "." {
			loc.Path = filepath.ToSlash(rel)
		} else {
			loc.Path = filepath.Base(loc.Path)
		}
		if loc.Table != "" {
			return loc.Path + ":" + loc.Table + "/" + id
		}
		if id != e.ID {
			return filepath.ToSlash(filepath.Join(filepath.Dir(loc.Path), strings.Replace(filepath.Base(loc.Path), e.ID, id, 1)))
		}
		return loc.Path
	}
	if info.Shape == store.ShapeSQLite {
		return filepath.Base(info.Path) + ":" + string(e.Kind) + "/" + id
	}
	return string(e.Kind) + "/" + e.MessageID + "/" + id
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

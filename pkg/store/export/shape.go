package export

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessfix/sessfix/internal/recordfile"
	"github.com/sessfix/sessfix/pkg/store"
)

// maxProbe is how much of a damaged .json file is looked at to decide
// whether it was meant to be an export file.
const maxProbe = 4096

// Shape is an `opencode export` file as an entry of the shapes registry
// (pkg/store/shapes).
type Shape struct{}

func (Shape) Name() store.Shape { return store.ShapeExport }
func (Shape) Expect() string    { return "an `opencode export` file" }

func (Shape) Open(path string) (store.Store, error) { return openExport(path), nil }

func (Shape) OpenWriter(info store.Info, opts store.WriteOptions) (store.Writer, error) {
	return newExportWriter(info, opts.FileOps()), nil
}

// Match reads the file and reports whether it is an export file: a JSON
// object with an "info" object and a "messages" array. When it is not, the
// reason names the damage CheckBody finds.
func (Shape) Match(path string) (bool, string, error) {
	raw, _, perr := recordfile.Read(path, nil)
	if perr != nil {
		return false, "", fmt.Errorf("cannot read %s: %w", path, perr)
	}
	raw, enc, err := decode(raw)
	if err != nil {
		return false, "not an export file: " + err.Error(), nil
	}
	if isExport(raw) {
		return true, "", nil
	}
	why := "not an export file (a JSON object with \"info\" and \"messages\")"
	if !enc.plain() {
		why += " (read as " + enc.name + ")"
	}
	// The JSON error helps with a damaged export, not with a file that is
	// not JSON at all.
	if head := bytes.TrimSpace(raw[:min(len(raw), maxProbe)]); len(head) > 0 && head[0] == '{' {
		if err := store.CheckBody(raw); err != nil {
			why += ": " + err.Error()
		}
	}
	return false, why, nil
}

// Candidate reports whether a .json file met in a fixture tree may be an
// export file: one, or a damaged file that starts like one (`{` then
// "info" or "messages" near the top), so that opening it names the damage.
// Other JSON a fixture repository holds is not a candidate; an unreadable
// file is, so that opening it names the error.
func (Shape) Candidate(path string) bool {
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return false
	}
	file, err := os.ReadFile(path)
	if err != nil {
		return true
	}
	raw, enc, err := decode(file)
	if err != nil {
		return enc.bom != nil // a truncated UTF-16 file with a BOM: opening it names the damage
	}
	if store.CheckBody(raw) == nil {
		return isExport(raw)
	}
	head := bytes.TrimSpace(raw[:min(len(raw), maxProbe)])
	return len(head) > 0 && head[0] == '{' && (bytes.Contains(head, []byte(`"info"`)) || bytes.Contains(head, []byte(`"messages"`)))
}

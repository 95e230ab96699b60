package report

import (
	"encoding/json"
	"io"
	"time"
)

// SchemaVersion is the version of every sessfix JSON document (the
// `schema_version` field): scan's, and those of fix, undo, sessions and
// show, which their commands build. It changes only when a field is
// removed, renamed or retyped, which happens only in a new major version of
// sessfix; new fields do not change it.
const SchemaVersion = 1

// WriteJSON writes v as indented JSON without HTML escaping, ending in a
// newline: the layout of every sessfix JSON output.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// JSONTime is how every JSON document writes a time: RFC 3339 in UTC with
// milliseconds; "" for the zero time.
func JSONTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

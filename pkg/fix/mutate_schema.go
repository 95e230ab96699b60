package fix

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// The mutations of OpenCode's own schema (SF206, SF208). Both edit only the
// keys they must: every other byte of the record stays.

// backfillSchemaFields writes, into a message or part (p nil: the message),
// the value OpenCode itself writes for each key its schema requires that the
// record lacks or holds null, as scan.BackfillRecord computes it from the
// record's place in the session.
func backfillSchemaFields(s *store.Session, m *store.Message, p *store.Part) ([]store.Edit, error) {
	r := opencode.SchemaOfRecord(s, m, p)
	if r == nil || len(r.Filled) == 0 {
		return nil, errNotApplicable
	}
	filled := r.Filled
	rec := recordOf(m, p)
	after := rec.Raw
	for _, pr := range filled {
		v, ok := r.FillValue(pr)
		if !ok {
			return nil, fmt.Errorf("%s %s: no value computed for %s", rec.Kind, rec.ID, pr.Path)
		}
		keys := opencode.PathKeys(pr.Path)
		if err := objectPath(after, keys); err != nil {
			return nil, fmt.Errorf("%s %s: %w", rec.Kind, rec.ID, err)
		}
		var err error
		if after, err = setJSON(after, v, keys...); err != nil {
			return nil, fmt.Errorf("%s %s: %w", rec.Kind, rec.ID, err)
		}
	}
	paths := make([]string, len(filled))
	for i, pr := range filled {
		paths[i] = pr.Path
	}
	ed := recordEdit(m, p, "backfillSchemaFields", "keys opencode's schema requires filled as opencode writes them: "+strings.Join(paths, ", "))
	ed.After = after
	return []store.Edit{ed}, nil
}

// objectPath refuses a path that runs through an array: setJSON edits
// objects only, and no default lives inside an array.
func objectPath(raw []byte, keys []string) error {
	for i := 1; i < len(keys); i++ {
		if v := gjson.GetBytes(raw, joinPath(keys[:i])); v.IsArray() {
			return fmt.Errorf("%s is inside an array, which sessfix does not fill", joinPath(keys))
		}
	}
	return nil
}

// dropUnservableKey removes from a record the keys OpenCode cannot serve
// whatever their value (ocschema.Quirks: a user message's format).
func dropUnservableKey(s *store.Session, m *store.Message, p *store.Part) ([]store.Edit, error) {
	var unservable []string
	if r := opencode.SchemaOfRecord(s, m, p); r != nil {
		for _, pr := range r.Unservable {
			unservable = append(unservable, pr.Path)
		}
	}
	if len(unservable) == 0 {
		return nil, errNotApplicable
	}
	rec := recordOf(m, p)
	after := rec.Raw
	for _, path := range unservable {
		var err error
		if after, err = sjson.DeleteBytes(after, path); err != nil {
			return nil, fmt.Errorf("%s %s: %w", rec.Kind, rec.ID, err)
		}
	}
	ed := recordEdit(m, p, "dropUnservableKey", "removed what opencode cannot serve: "+strings.Join(unservable, ", "))
	ed.After = after
	return []store.Edit{ed}, nil
}

// recordOf is the part p, or the message m when p is nil.
func recordOf(m *store.Message, p *store.Part) *store.Record {
	if p != nil {
		return &p.Record
	}
	return &m.Record
}

// recordEdit is an update of the part p, or of the message m when p is nil.
func recordEdit(m *store.Message, p *store.Part, mutation, reason string) store.Edit {
	if p != nil {
		return partEdit(store.OpUpdate, m, p, mutation, reason)
	}
	return messageEdit(store.OpUpdate, m, mutation, reason)
}

// repointParent points an assistant message whose parentID names no message
// at the closest user message before it, the message OpenCode names when it
// answers a prompt.
func repointParent(s *store.Session, m *store.Message) ([]store.Edit, error) {
	i := msgIndex(s, m.ID)
	if m.Role != "assistant" || i < 0 {
		return nil, errNotApplicable
	}
	u := opencode.PreviousUser(s, i)
	if u == nil {
		return nil, fmt.Errorf("message %s: no user message comes before it", m.ID)
	}
	after, err := setJSON(m.Raw, u.ID, "parentID")
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", m.ID, err)
	}
	ed := messageEdit(store.OpUpdate, m, "repointParent", "parentID set to the user message before it, "+u.ID)
	ed.After = after
	return []store.Edit{ed}, nil
}

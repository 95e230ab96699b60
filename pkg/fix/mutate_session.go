package fix

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/store"
)

// The mutations of a session's own record (SF212, SF213): a SQLite session
// row, whose columns the writer maps the record's fields onto. Each changes
// one field; every other column stays.

// sessionEdit is an update of the session's record.
func sessionEdit(s *store.Session, mutation, reason string) (store.Edit, error) {
	if s.Info == nil {
		return store.Edit{}, errNotApplicable
	}
	return store.Edit{
		Op: store.OpUpdate, Kind: store.KindSession, ID: s.ID, SessionID: s.ID,
		Loc: s.Info.Loc, Before: s.Info.Raw, Mutation: mutation, Reason: reason,
	}, nil
}

// setSessionProject points the session row at project, the project
// OpenCode resolves its directory to (opencode.ProjectRepair).
func setSessionProject(s *store.Session, project string) ([]store.Edit, error) {
	ed, err := sessionEdit(s, "setSessionProject", "project_id set to "+project+", the project opencode resolves the session's directory to")
	if err != nil {
		return nil, err
	}
	if ed.After, err = setJSON(s.Info.Raw, project, "project_id"); err != nil {
		return nil, fmt.Errorf("session %s: %w", s.ID, err)
	}
	return []store.Edit{ed}, nil
}

// setSessionModel gives the session row the model providerID/modelID
// (opencode.ModelRepair): the model column, JSON text, gets the new id and
// providerID, and its variant, which belongs to the old model, goes back
// to "default"; every other key of it stays.
func setSessionModel(s *store.Session, providerID, modelID string) ([]store.Edit, error) {
	ed, err := sessionEdit(s, "setSessionModel", "model set to "+providerID+"/"+modelID+", the model your config makes opencode's default")
	if err != nil {
		return nil, err
	}
	col := s.Info.Get("model")
	if col.Type != gjson.String || !gjson.Parse(col.Str).IsObject() {
		return nil, errNotApplicable
	}
	model := []byte(col.Str)
	for _, kv := range [][2]string{{"id", modelID}, {"providerID", providerID}} {
		if model, err = setJSON(model, kv[1], kv[0]); err != nil {
			return nil, fmt.Errorf("session %s: %w", s.ID, err)
		}
	}
	if gjson.GetBytes(model, "variant").Exists() {
		if model, err = setJSON(model, "default", "variant"); err != nil {
			return nil, fmt.Errorf("session %s: %w", s.ID, err)
		}
	}
	if ed.After, err = setJSON(s.Info.Raw, string(model), "model"); err != nil {
		return nil, fmt.Errorf("session %s: %w", s.ID, err)
	}
	return []store.Edit{ed}, nil
}

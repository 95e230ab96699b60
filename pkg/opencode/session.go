package opencode

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// SessionProject is what a session's project is judged by: the project its row
// names, the project rows of the database, and the project OpenCode
// resolves its directory to. ok is false when there is nothing to judge.
func SessionProject(s *store.Session, oc *ocenv.Resolver) (project string, rows map[string]bool, res ocenv.Resolution, ok bool) {
	if s.Info == nil || s.Projects == nil {
		return "", nil, res, false
	}
	project = s.Info.Get("project_id").Str
	if project == "" {
		return "", nil, res, false
	}
	rows = map[string]bool{}
	for _, p := range s.Projects {
		rows[p.ID] = true
	}
	if oc != nil {
		res = oc.Project(s.Info.Get("directory").Str)
	}
	return project, rows, res, true
}

// ProjectRepair is the project a repair of the session's project gives it: the one
// OpenCode resolves its directory to, when the session names another and
// that project has a row. ok is false when no correct repair exists (the
// directory cannot be resolved here, or its project has no row yet:
// sessfix never invents one).
func ProjectRepair(s *store.Session, oc *ocenv.Resolver) (project string, ok bool) {
	cur, rows, res, judged := SessionProject(s, oc)
	if !judged || res.ID == "" || res.ID == cur || !rows[res.ID] {
		return "", false
	}
	return res.ID, true
}

// ModelRepair is the model a repair of the session's model gives it: the config's
// default model (ocenv.Models.Default) when OpenCode has it and the
// session's row, a SQLite session row whose model column holds JSON text,
// names a model OpenCode does not have. ok is false otherwise.
func ModelRepair(s *store.Session, oc *ocenv.Resolver) (providerID, modelID string, ok bool) {
	if oc == nil || s.Info == nil || s.Store.Shape != store.ShapeSQLite {
		return "", "", false
	}
	if col := s.Info.Get("model"); col.Type != gjson.String || !gjson.Valid(col.Str) || !gjson.Parse(col.Str).IsObject() {
		return "", "", false
	}
	cur, curModel := sent.SessionModel(s)
	ms, err := oc.Models(s.Info.Get("directory").Str)
	if err != nil {
		return "", "", false
	}
	if v, _ := ms.Lookup(cur, curModel); v != ocenv.Missing {
		return "", "", false
	}
	return ms.Default()
}

// OpenCodePartTypes are the part types real OpenCode writes.
var OpenCodePartTypes = []string{
	"text", "reasoning", "tool", "step-start", "step-finish", "file",
	"patch", "snapshot", "agent", "subtask", "retry", "compaction",
}

// IsOpenCodePartType reports whether t is one of OpenCodePartTypes.
func IsOpenCodePartType(t string) bool {
	for _, k := range OpenCodePartTypes {
		if k == t {
			return true
		}
	}
	return false
}

// noPrefillModels are model ids (substrings) that reject a request ending
// with an assistant message.
var noPrefillModels = []string{"claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-5", "claude-sonnet-5", "claude-haiku-5"}

// ModelRejectsPrefill reports whether the model rejects a conversation that
// ends with an assistant message.
func ModelRejectsPrefill(modelID string) bool {
	id := strings.ToLower(modelID)
	for _, s := range noPrefillModels {
		if strings.Contains(id, s) {
			return true
		}
	}
	return false
}

package scan

import (
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// OpenCode 2 databases (rules SF401–SF404, store.OpenCode2).
//
// OpenCode 2 imports the 1.x sessions of its database once and from then
// on reads only its own tables (packages/core/src/database/
// v1-migration.bun.ts of anomalyco/opencode: run() returns at once when
// kv['migration.v1-v2'] is completed; its session tables map to
// session_v2 and session_message). So a finding of the 1.x rules in the
// 1.x copy of an imported session describes rows OpenCode 2 never sends
// to a provider and never shows: it is lowered to info while the copy is
// frozen, that is unchanged since the import. A copy OpenCode 1.x wrote
// to after the import is still what a 1.x client sends, and a session only
// the 1.x tables hold is all there is of it: their findings keep their
// severity. sessfix writes neither (store.ReadOnlyError).

// frozen reports whether the 1.x copy of an imported session is frozen:
// the database records an import, and no row of the copy was written
// after it (the time of the import record, its completion once done).
func frozen(oc *store.OpenCode2) bool {
	if oc == nil || oc.V1 == nil || oc.Import.Updated.IsZero() {
		return false
	}
	for r := range oc.V1.Records() {
		if r.Modified.After(oc.Import.Updated) {
			return false
		}
	}
	return true
}

// copyFindings are the 1.x rules' findings in the 1.x copy of session s,
// said to be in the copy; lowered to info, without a fix, while the copy
// is frozen.
func copyFindings(s *store.Session, fs []Finding) []Finding {
	oc := s.OpenCode2
	where := "; in the 1.x copy"
	cold := frozen(oc)
	switch {
	case cold:
		where = "; in the frozen 1.x copy, which opencode 2 no longer reads (its imported copy may hold the same, which sessfix does not check)"
	case !oc.Import.Updated.IsZero():
		where = "; in the 1.x copy, which opencode 1.x changed after opencode 2 imported it"
	}
	for i := range fs {
		f := &fs[i]
		if cold {
			f.Severity, f.Fix = Info, ""
		}
		f.Message += where
	}
	return fs
}

// when renders a time in findings: the UTC day and minute.
func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

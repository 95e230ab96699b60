package fix

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var stGiveUp = Strategy{Name: "give-up", Mutations: "finishFailedCompaction", Doc: "give the failed compaction's summary message the finish \"error\" opencode writes on a compaction it gives up, so opencode stops running it again; its error and every message stay"}

// finishFailedCompaction closes the failed compaction whose summary message
// is m (opencode.FailedCompaction) the way OpenCode 1.18 closes one it
// gives up: `finish: "error"` (and `time.completed` when missing). The
// stored error stays, so the summary is never taken for a finished
// compaction and the history OpenCode sends keeps every message.
func finishFailedCompaction(s *store.Session, m *store.Message, e env) ([]store.Edit, error) {
	if f := opencode.FailedCompaction(s); f == nil || f.ID != m.ID {
		return nil, errNotApplicable
	}
	after, err := setJSON(m.Raw, opencode.CompactionFinishError, "finish")
	if err == nil && !m.Get("time.completed").Exists() {
		after, err = setJSON(after, e.ms(), "time", "completed")
	}
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", m.ID, err)
	}
	ed := messageEdit(store.OpUpdate, m, "finishFailedCompaction", "failed compaction given up, as opencode gives up one over the context window")
	ed.After = after
	return []store.Edit{ed}, nil
}

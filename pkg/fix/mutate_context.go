package fix

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var stPruneContext = Strategy{Name: "prune", Mutations: "markToolCompacted",
	Doc: "mark completed tool results compacted, as opencode's own prune does (it then sends `[Old tool result content cleared]`), oldest turn first and the largest of a turn first, until sessfix's estimate of the next request is under 90% of the context opencode lets a request use; never the turn in progress, never a `skill` result, never a user's message or attachment; when that is not enough, nothing changes"}

// pruneToolOutputs is OpenCode's own prune, for a request over the model's
// context window w: it sets state.time.compacted on the tool parts
// opencode.PruneForWindow chooses, after which OpenCode sends each as
// `[Old tool result content cleared]`. When compacting every candidate is
// not enough, the strategy does not apply: nothing is changed.
func pruneToolOutputs(s *store.Session, w opencode.ContextWindow, e env) ([]store.Edit, error) {
	parts, fits := opencode.PruneForWindow(s, sent.Build(s, sent.Options{NextPrompt: true}), w)
	if !fits {
		return nil, errNotApplicable
	}
	var out []store.Edit
	for _, p := range parts {
		after, err := setJSON(p.Raw, e.ms(), "state", "time", "compacted")
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", p.ID, err)
		}
		ed := partEdit(store.OpUpdate, s.Message(p.MessageID), p, "markToolCompacted",
			fmt.Sprintf("tool result marked compacted, as opencode's prune does: its %d-byte output is no longer sent", len(p.Get("state.output").String())))
		ed.After = after
		out = append(out, ed)
	}
	return out, nil
}

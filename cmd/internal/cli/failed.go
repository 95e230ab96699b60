package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/internal/pool"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// StoredError is a session whose stored failed attempt carries a pasted
// provider error, and the store that holds it.
type StoredError struct {
	Session *store.Session
	Store   store.Info
}

// SessionsStoring returns the sessions of stores whose stored failed
// attempt carries the error text, in the stores' order: the sessions the
// error can have come from. A session that cannot be loaded is passed over
// (scan reports it); a store that cannot be listed is an error. Sessions
// are loaded and searched on every core, as a scan does, keeping only the
// ones that store the text; progress, when set, is told how many of all
// the stores' sessions are done.
func SessionsStoring(ctx context.Context, stores []store.Store, text string, progress func(done, total int)) ([]StoredError, error) {
	type item struct {
		st  store.Store
		ref store.SessionRef
	}
	var items []item
	for _, st := range stores {
		refs, err := st.List(ctx)
		if err != nil {
			return nil, fmt.Errorf("cannot list the sessions of %s store %s: %w", st.Info().Shape, st.Info().Path, err)
		}
		for _, ref := range refs {
			items = append(items, item{st, ref})
		}
	}
	var hits []StoredError
	_, err := pool.Ordered(ctx, len(items), pool.Options[*StoredError]{Progress: progress}, func(ctx context.Context, i int) *StoredError {
		s, err := items[i].st.Load(ctx, items[i].ref)
		if err != nil || opencode.FailedAttempt(s, text) == nil {
			return nil
		}
		return &StoredError{s, items[i].st.Info()}
	}, func(_ int, h *StoredError) bool {
		if h != nil {
			hits = append(hits, *h)
		}
		return true
	})
	return hits, err
}

// ErrorCommands are the hints that repeat verb ("diagnose", "fix") for
// each session that stores the error, runnable as printed: the session,
// the error text and the session's store as shell words.
func ErrorCommands(verb, text string, hits []StoredError) []string {
	var out []string
	for _, h := range hits {
		out = append(out, "run: "+CommandLine(verb, "--session", h.Session.ID, "--error", text, h.Store.Path))
	}
	return out
}

// StoredErrorsText names the sessions, each with its store: "ID in PATH,
// ID in PATH" (copies of a store hold the same ids).
func StoredErrorsText(hits []StoredError) string {
	var names []string
	for _, h := range hits {
		names = append(names, h.Session.ID+" in "+h.Store.Path)
	}
	return strings.Join(names, ", ")
}

// ErrorTemplate is the hint after ListSessions when no session stores the
// error: verb's command line with the error text quoted for a shell and
// the stores named, ID standing for the session the user picks from that
// list.
func ErrorTemplate(verb, text string, paths []string) string {
	return "then: " + CommandLine(append([]string{verb, "--session", "ID", "--error", text}, paths...)...) + ", ID one of those sessions"
}

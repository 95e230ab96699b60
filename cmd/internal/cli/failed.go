package cli

import (
	"context"
	"fmt"
	"strings"

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
// (scan reports it); a store that cannot be listed is an error.
func SessionsStoring(ctx context.Context, stores []store.Store, text string) ([]StoredError, error) {
	var hits []StoredError
	for _, st := range stores {
		refs, err := st.List(ctx)
		if err != nil {
			return nil, fmt.Errorf("cannot list the sessions of %s store %s: %w", st.Info().Shape, st.Info().Path, err)
		}
		for _, ref := range refs {
			s, err := st.Load(ctx, ref)
			if err != nil {
				continue
			}
			if opencode.FailedAttempt(s, text) != nil {
				hits = append(hits, StoredError{s, st.Info()})
			}
		}
	}
	return hits, nil
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

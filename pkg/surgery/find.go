package surgery

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// Found is a session located in the stores, not yet loaded.
type Found struct {
	Store store.Store
	Ref   store.SessionRef
}

// NotFoundError says that no store holds a session with the id (or a
// session whose id starts with it).
type NotFoundError struct{ ID string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("session %s not found in the stores", e.ID)
}

// AmbiguousError says that an id prefix names several sessions, or
// several messages or parts of one session.
type AmbiguousError struct {
	Prefix string
	IDs    []string
	// What names the records ("messages of session ses_…"); empty means
	// sessions.
	What string
}

func (e *AmbiguousError) Error() string {
	ids := e.IDs
	more := ""
	if len(ids) > 5 {
		ids, more = ids[:5], fmt.Sprintf(" and %d more", len(e.IDs)-5)
	}
	what := e.What
	if what == "" {
		what = "sessions"
	}
	return fmt.Sprintf("%q names %d %s (%s%s); give more of the id", e.Prefix, len(e.IDs), what, strings.Join(ids, ", "), more)
}

// Find locates a session by its id, or by a prefix of it that names one
// session only, in the stores (in their order: the first store holding an
// exact match wins).
func Find(ctx context.Context, stores []store.Store, id string) (Found, error) {
	var prefixed []Found
	for _, st := range stores {
		refs, err := st.List(ctx)
		if err != nil {
			info := st.Info()
			return Found{}, fmt.Errorf("cannot list the sessions of %s store %s: %w", info.Shape, info.Path, err)
		}
		for _, ref := range refs {
			switch {
			case ref.ID == id:
				return Found{Store: st, Ref: ref}, nil
			case id != "" && strings.HasPrefix(ref.ID, id):
				prefixed = append(prefixed, Found{Store: st, Ref: ref})
			}
		}
	}
	switch len(prefixed) {
	case 0:
		return Found{}, &NotFoundError{ID: id}
	case 1:
		return prefixed[0], nil
	}
	var ids []string
	for _, f := range prefixed {
		ids = append(ids, f.Ref.ID)
	}
	sort.Strings(ids)
	return Found{}, &AmbiguousError{Prefix: id, IDs: ids}
}

// Load locates and loads a session (Find, then Store.Load).
func Load(ctx context.Context, stores []store.Store, id string) (*store.Session, Found, error) {
	f, err := Find(ctx, stores, id)
	if err != nil {
		return nil, f, err
	}
	s, err := f.Store.Load(ctx, f.Ref)
	if err != nil {
		return nil, f, fmt.Errorf("session %s in %s cannot be loaded: %w", f.Ref.ID, f.Store.Info().Path, err)
	}
	return s, f, nil
}

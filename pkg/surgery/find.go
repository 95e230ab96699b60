package surgery

import (
	"context"
	"fmt"
	"slices"
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

// NoRecordError says that a session holds no message (or part) with the id
// or id prefix a cut named.
type NoRecordError struct {
	SessionID string
	ID        string
	// What is "message" or "part".
	What string
}

func (e *NoRecordError) Error() string {
	return fmt.Sprintf("session %s has no %s %s", e.SessionID, e.What, e.ID)
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

// InStoresError says that the session an id (or prefix) names is in
// several of the stores read: copies of one store, say. Nothing picks one.
type InStoresError struct {
	ID     string
	Stores []string // the stores' paths, in the order they were read
}

func (e *InStoresError) Error() string {
	return fmt.Sprintf("session %s is in %d stores (%s); name the one to use", e.ID, len(e.Stores), strings.Join(e.Stores, ", "))
}

// Find locates a session by its id, or by a prefix of it that names one
// session only, in the stores. A session found in more than one store is
// an *InStoresError naming them; a prefix naming several sessions an
// *AmbiguousError.
func Find(ctx context.Context, stores []store.Store, id string) (Found, error) {
	var exact, prefixed []Found
	for _, st := range stores {
		refs, err := st.List(ctx)
		if err != nil {
			info := st.Info()
			return Found{}, fmt.Errorf("cannot list the sessions of %s store %s: %w", info.Shape, info.Path, err)
		}
		for _, ref := range refs {
			switch {
			case ref.ID == id:
				exact = append(exact, Found{Store: st, Ref: ref})
			case id != "" && strings.HasPrefix(ref.ID, id):
				prefixed = append(prefixed, Found{Store: st, Ref: ref})
			}
		}
	}
	if len(exact) == 0 {
		exact = prefixed
	}
	var ids []string
	for _, f := range exact {
		if !slices.Contains(ids, f.Ref.ID) {
			ids = append(ids, f.Ref.ID)
		}
	}
	switch {
	case len(ids) == 0:
		return Found{}, &NotFoundError{ID: id}
	case len(ids) > 1:
		sort.Strings(ids)
		return Found{}, &AmbiguousError{Prefix: id, IDs: ids}
	case len(exact) > 1:
		e := &InStoresError{ID: ids[0]}
		for _, f := range exact {
			e.Stores = append(e.Stores, f.Store.Info().Path)
		}
		return Found{}, e
	}
	return exact[0], nil
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

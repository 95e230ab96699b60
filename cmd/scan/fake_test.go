package scan

import (
	"context"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// fakeStore is an empty store: enough for tests that replace the scan.
type fakeStore struct{ path string }

func (s fakeStore) Info() store.Info { return store.Info{Shape: store.ShapeSessions, Path: s.path} }
func (fakeStore) List(context.Context) ([]store.SessionRef, error) {
	return nil, nil
}
func (fakeStore) Load(context.Context, store.SessionRef) (*store.Session, error) { return nil, nil }
func (fakeStore) Close() error                                                   { return nil }
func (fakeStore) Activity() store.Activity                                       { return store.Activity{State: store.ActivityNone} }

func openFixture(paths []string) (*shapes.Discovery, error) {
	d := &shapes.Discovery{Looked: paths}
	for _, p := range paths {
		d.Stores = append(d.Stores, fakeStore{p})
	}
	return d, nil
}

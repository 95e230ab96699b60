package storetest

import (
	"context"
	"runtime"
	"sync"
	"weak"

	"github.com/sessfix/sessfix/pkg/store"
)

// Retention wraps a store and records, each time a session is about to be
// loaded, how many sessions loaded before are still reachable after a full
// garbage collection. Code that keeps the sessions it is done with shows
// them all as alive: tests prove memory follows the sessions in flight,
// not the store, by counting sessions instead of timing or measuring bytes.
type Retention struct {
	store.Store
	mu       sync.Mutex
	loaded   []weak.Pointer[store.Session]
	maxAlive int
}

// Alive collects garbage and counts the loaded sessions still reachable.
func (r *Retention) Alive() int {
	// Two cycles: with another goroutine collecting at the same time, an
	// object that died during one cycle may only be cleared by the next.
	runtime.GC()
	runtime.GC()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, w := range r.loaded {
		if w.Value() != nil {
			n++
		}
	}
	return n
}

// MaxAlive is the most sessions found reachable before a Load.
func (r *Retention) MaxAlive() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maxAlive
}

// Loaded counts the sessions loaded.
func (r *Retention) Loaded() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.loaded)
}

// Load counts the reachable sessions, then loads the next one.
func (r *Retention) Load(ctx context.Context, ref store.SessionRef) (*store.Session, error) {
	n := r.Alive()
	r.mu.Lock()
	r.maxAlive = max(r.maxAlive, n)
	r.mu.Unlock()
	s, err := r.Store.Load(ctx, ref)
	if s != nil {
		r.mu.Lock()
		r.loaded = append(r.loaded, weak.Make(s))
		r.mu.Unlock()
	}
	return s, err
}

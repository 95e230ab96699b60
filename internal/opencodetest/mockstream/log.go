// Package mockstream holds what every streaming provider mock in this
// repository shares: the server skeleton (Server: start on 127.0.0.1,
// configuration read per request, close, reject, accept, stream), the log
// of requests with their verdicts and the stages their answers reached,
// pauses that hold a stream at a stage (so a test can kill the client at a
// deterministic point) and a paced writer for streamed answers.
//
// The mocks (internal/opencodetest/mockanthropic, internal/opencodetest/mockgemini,
// internal/opencodetest/mockbedrock, internal/opencodetest/mockopenai) keep their own request types,
// rules and wire formats; they instantiate Server with them.
package mockstream

import (
	"context"
	"fmt"
	"net/http"
	"sync"
)

// Stage is a point in the life of one request's answer. Each mock defines
// its own stages; Received, Rejected and Done are common to all.
type Stage string

// Stages every mock reaches.
const (
	Received Stage = "received" // request decoded, validated and accepted
	Rejected Stage = "rejected" // error answer sent
	Done     Stage = "done"     // whole answer sent
)

// Verdict says whether a request was accepted.
type Verdict string

// Verdicts.
const (
	VerdictAccepted Verdict = "accepted"
	VerdictRejected Verdict = "rejected"
)

// Call is one recorded request. P is the mock's parsed request and A what it
// answered.
type Call[P, A any] struct {
	Index  int // 0-based, in arrival order
	Method string
	Path   string
	Query  string // raw query string
	Header http.Header
	Body   []byte
	Parsed P
	// Chat is true for agent requests (they carry tools); OpenCode's title
	// and summary requests have none.
	Chat    bool
	Verdict Verdict
	// Error is the error message of a rejected request.
	Error string
	// Turn is what was answered to an accepted request.
	Turn A
	// Stages lists the stages reached so far.
	Stages []Stage
}

// Reached reports whether the call has reached stage s.
func (c *Call[P, A]) Reached(s Stage) bool {
	for _, st := range c.Stages {
		if st == s {
			return true
		}
	}
	return false
}

func (c *Call[P, A]) clone() Call[P, A] {
	cp := *c
	cp.Stages = append([]Stage(nil), c.Stages...)
	return cp
}

// Match selects calls for Pause and WaitStage.
type Match[P, A any] func(c *Call[P, A]) bool

// Pause holds the first matching stream at a stage.
type Pause[P, A any] struct {
	stage   Stage
	match   Match[P, A]
	fired   bool
	reached chan *Call[P, A]
	held    chan struct{}
	release chan struct{}
	once    sync.Once
}

// Reached delivers the call once its stream is held at the stage.
func (p *Pause[P, A]) Reached() <-chan *Call[P, A] { return p.reached }

// Held is closed once the stream is held at the stage; unlike Reached it
// can be waited on by code that does not know the mock's types.
func (p *Pause[P, A]) Held() <-chan struct{} { return p.held }

// Release lets the held stream go on (or returns at once if the client has
// gone away).
func (p *Pause[P, A]) Release() { p.once.Do(func() { close(p.release) }) }

// Log records the calls of one mock server. The zero value is not usable:
// create it with NewLog.
type Log[P, A any] struct {
	mu      sync.Mutex
	cond    *sync.Cond
	calls   []*Call[P, A]
	pauses  []*Pause[P, A]
	done    chan struct{}
	closed  bool
	gen     int // bumped on every stage reached
	onStage func(c *Call[P, A], s Stage)
}

// NewLog returns an empty log. onStage, when not nil, is called
// synchronously each time a call reaches a stage.
func NewLog[P, A any](onStage func(c *Call[P, A], s Stage)) *Log[P, A] {
	l := &Log[P, A]{done: make(chan struct{}), onStage: onStage}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// Record starts recording an incoming request and returns its call.
func (l *Log[P, A]) Record(r *http.Request, body []byte) *Call[P, A] {
	c := &Call[P, A]{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	l.mu.Lock()
	defer l.mu.Unlock()
	c.Index = len(l.calls)
	l.calls = append(l.calls, c)
	return c
}

// Update changes a recorded call under the log's lock.
func (l *Log[P, A]) Update(c *Call[P, A], f func(c *Call[P, A])) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(c)
}

// Calls returns copies of the recorded calls, in arrival order.
func (l *Log[P, A]) Calls() []Call[P, A] {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Call[P, A], len(l.calls))
	for i, c := range l.calls {
		out[i] = c.clone()
	}
	return out
}

// Chat returns the recorded agent calls (those with tools).
func (l *Log[P, A]) Chat() []Call[P, A] {
	var out []Call[P, A]
	for _, c := range l.Calls() {
		if c.Chat {
			out = append(out, c)
		}
	}
	return out
}

// Rejected returns the recorded calls that were answered with an error.
func (l *Log[P, A]) Rejected() []Call[P, A] {
	var out []Call[P, A]
	for _, c := range l.Calls() {
		if c.Verdict == VerdictRejected {
			out = append(out, c)
		}
	}
	return out
}

// Reset forgets the recorded calls.
func (l *Log[P, A]) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = nil
}

// Close releases every pause and makes held streams return.
func (l *Log[P, A]) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}

// NthChat matches the n-th (0-based) agent call.
func (l *Log[P, A]) NthChat(n int) Match[P, A] {
	return func(c *Call[P, A]) bool {
		if !c.Chat {
			return false
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		k := 0
		for _, q := range l.calls {
			if q.Index == c.Index {
				return k == n
			}
			if q.Chat {
				k++
			}
		}
		return false
	}
}

// Pause arranges for the first call matching m (nil: any) to stop right
// after reaching stage, until Release, until the client disconnects or
// until the log is closed.
func (l *Log[P, A]) Pause(stage Stage, m Match[P, A]) *Pause[P, A] {
	if m == nil {
		m = func(*Call[P, A]) bool { return true }
	}
	p := &Pause[P, A]{stage: stage, match: m, reached: make(chan *Call[P, A], 1),
		held: make(chan struct{}), release: make(chan struct{})}
	l.mu.Lock()
	l.pauses = append(l.pauses, p)
	l.mu.Unlock()
	return p
}

// WaitStage blocks until a call matching m (nil: any) has reached stage,
// and returns a copy of it.
func (l *Log[P, A]) WaitStage(ctx context.Context, stage Stage, m Match[P, A]) (Call[P, A], error) {
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.gen++
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer stop()
	for {
		l.mu.Lock()
		gen := l.gen
		var cands []Call[P, A]
		for _, c := range l.calls {
			if c.Reached(stage) {
				cands = append(cands, c.clone())
			}
		}
		l.mu.Unlock()
		for i := range cands {
			if m == nil || m(&cands[i]) {
				return cands[i], nil
			}
		}
		if err := ctx.Err(); err != nil {
			return Call[P, A]{}, fmt.Errorf("waiting for stage %s: %w", stage, err)
		}
		l.mu.Lock()
		for l.gen == gen {
			l.cond.Wait()
		}
		l.mu.Unlock()
	}
}

// Reach records that c reached stage st and, when a pause waits for that
// stage and matches c, holds the caller (the handler writing c's answer)
// until the pause is released, ctx ends or the log is closed.
func (l *Log[P, A]) Reach(ctx context.Context, c *Call[P, A], st Stage) {
	l.mu.Lock()
	c.Stages = append(c.Stages, st)
	cp := c.clone()
	var cands []*Pause[P, A]
	for _, p := range l.pauses {
		if !p.fired && p.stage == st {
			cands = append(cands, p)
		}
	}
	l.gen++
	l.cond.Broadcast()
	l.mu.Unlock()
	if l.onStage != nil {
		l.onStage(&cp, st)
	}
	var hold *Pause[P, A]
	for _, p := range cands {
		if !p.match(&cp) {
			continue
		}
		l.mu.Lock()
		if !p.fired {
			p.fired = true
			hold = p
		}
		l.mu.Unlock()
		if hold != nil {
			break
		}
	}
	if hold == nil {
		return
	}
	hold.reached <- &cp
	close(hold.held)
	select {
	case <-hold.release:
	case <-ctx.Done():
	case <-l.done:
	}
}

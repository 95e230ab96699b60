package mockstream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Server is the skeleton every provider mock shares: an HTTP server on
// 127.0.0.1, the mock's configuration C (each request reads it as it was on
// arrival; changes apply to the requests that come after), the log of calls
// with its pauses, and the steps every answer takes: a rejection, an
// acceptance, a stream that marks the stages its client has read.
//
// A mock embeds it and keeps only its provider's routes, rules and wire
// format, in the Handler it gives to Start.
type Server[P, A, C any] struct {
	mu  sync.Mutex // guards cfg
	cfg C
	srv *httptest.Server
	log *Log[P, A]
}

// Handler answers a recorded call c; cfg is the configuration as it was
// when the request arrived.
type Handler[P, A, C any] func(w http.ResponseWriter, hr *http.Request, c *Call[P, A], cfg C)

// Start starts a server on 127.0.0.1 configured with cfg. Every request is
// read whole and recorded before h answers it. onStage, when not nil, is
// called (synchronously, from the handler) each time a call reaches a stage.
func Start[P, A, C any](cfg C, onStage func(c *Call[P, A], s Stage), h Handler[P, A, C]) *Server[P, A, C] {
	s := &Server[P, A, C]{cfg: cfg, log: NewLog(onStage)}
	s.srv = Listen(http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		body, _ := io.ReadAll(hr.Body)
		c := s.log.Record(hr, body)
		h(w, hr, c, s.Config())
	}))
	return s
}

// URL is the server's root, e.g. http://127.0.0.1:12345.
func (s *Server[P, A, C]) URL() string { return s.srv.URL }

// Config returns a copy of the configuration as it is now.
func (s *Server[P, A, C]) Config() C {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Configure changes the configuration for the requests that arrive from
// now on.
func (s *Server[P, A, C]) Configure(f func(cfg *C)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.cfg)
}

// Close releases every pause and stops the server.
func (s *Server[P, A, C]) Close() {
	s.log.Close()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Requests returns copies of the recorded requests, in arrival order.
func (s *Server[P, A, C]) Requests() []Call[P, A] { return s.log.Calls() }

// ChatRequests returns the recorded agent requests (those with tools).
func (s *Server[P, A, C]) ChatRequests() []Call[P, A] { return s.log.Chat() }

// Rejected returns the recorded requests that were answered with an error.
func (s *Server[P, A, C]) Rejected() []Call[P, A] { return s.log.Rejected() }

// Reset forgets the recorded requests.
func (s *Server[P, A, C]) Reset() { s.log.Reset() }

// NthChat matches the n-th (0-based) agent request.
func (s *Server[P, A, C]) NthChat(n int) Match[P, A] { return s.log.NthChat(n) }

// Pause arranges for the first request matching m (nil: any) to stop right
// after reaching stage, until Release or until the client disconnects. Use
// it to kill a client at a deterministic point of the stream.
func (s *Server[P, A, C]) Pause(stage Stage, m Match[P, A]) *Pause[P, A] {
	return s.log.Pause(stage, m)
}

// WaitStage blocks until a request matching m (nil: any) has reached stage,
// and returns a copy of it.
func (s *Server[P, A, C]) WaitStage(ctx context.Context, stage Stage, m Match[P, A]) (Call[P, A], error) {
	return s.log.WaitStage(ctx, stage, m)
}

// Update changes a recorded call under the log's lock (a handler sets
// Parsed and Chat once it has read the body).
func (s *Server[P, A, C]) Update(c *Call[P, A], f func(c *Call[P, A])) { s.log.Update(c, f) }

// Reject records c as rejected with the error message msg, lets write send
// the provider's error answer (header fields, status, body) and marks c
// Rejected. Every answer sent here carries the harness's retry-after-ms
// header (RetryAfterMS).
func (s *Server[P, A, C]) Reject(ctx context.Context, w http.ResponseWriter, c *Call[P, A], msg string, write func(w http.ResponseWriter)) {
	s.log.Update(c, func(c *Call[P, A]) {
		c.Verdict = VerdictRejected
		c.Error = msg
	})
	w.Header().Set("retry-after-ms", RetryAfterMS)
	write(w)
	s.log.Reach(ctx, c, Rejected)
}

// Accept records c as accepted with the answer a and marks it Received.
func (s *Server[P, A, C]) Accept(ctx context.Context, c *Call[P, A], a A) {
	s.log.Update(c, func(c *Call[P, A]) {
		c.Verdict = VerdictAccepted
		c.Turn = a
	})
	s.log.Reach(ctx, c, Received)
}

// Answered marks c Done once its whole answer went out in one JSON body.
func (s *Server[P, A, C]) Answered(c *Call[P, A]) { s.log.Reach(context.Background(), c, Done) }

// Stream starts streaming the answer to c through a paced Writer; the
// handler has already sent the header. delay is slept after every frame.
func (s *Server[P, A, C]) Stream(ctx context.Context, w http.ResponseWriter, c *Call[P, A], delay time.Duration) *Stream[P, A] {
	return &Stream[P, A]{Writer: NewWriter(ctx, w, delay), ctx: ctx, log: s.log, call: c}
}

// Stream is the streamed answer to one call.
type Stream[P, A any] struct {
	*Writer
	ctx  context.Context
	log  *Log[P, A]
	call *Call[P, A]
}

// Reach marks the call as having reached stage st, unless the client has
// gone away; a pause on st holds the stream here.
func (s *Stream[P, A]) Reach(st Stage) {
	if s.Alive() {
		s.log.Reach(s.ctx, s.call, st)
	}
}

// Delay is the pause between the frames of one answer: the turn's own
// delay when it sets one, else the server's.
func Delay(server, turn time.Duration) time.Duration {
	if turn > 0 {
		return turn
	}
	return server
}

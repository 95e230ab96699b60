package mockstream

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"time"
)

// Writer writes a streamed answer frame by frame: each frame is flushed to
// the client and followed by a delay. Once the client has gone away (a
// write fails or ctx ends) every later write is dropped and Alive reports
// false, so handlers can go through their script without checking errors.
type Writer struct {
	ctx   context.Context
	w     http.ResponseWriter
	fl    http.Flusher
	delay time.Duration
	alive bool
}

// NewWriter wraps w; delay is slept after every frame.
func NewWriter(ctx context.Context, w http.ResponseWriter, delay time.Duration) *Writer {
	fl, _ := w.(http.Flusher)
	return &Writer{ctx: ctx, w: w, fl: fl, delay: delay, alive: true}
}

// Alive reports whether the client is still reading.
func (s *Writer) Alive() bool { return s.alive }

// Frame writes one frame, flushes it and sleeps the delay.
func (s *Writer) Frame(b []byte) {
	if !s.alive {
		return
	}
	if s.ctx.Err() != nil {
		s.alive = false
		return
	}
	if _, err := s.w.Write(b); err != nil {
		s.alive = false
		return
	}
	if s.fl != nil {
		s.fl.Flush()
	}
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-s.ctx.Done():
			s.alive = false
		}
	}
}

// Listen starts h on a fresh port of 127.0.0.1 (never on other interfaces).
func Listen(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("mockstream: listen: %v", err))
	}
	srv.Listener = l
	srv.Start()
	return srv
}

// NewID returns prefix followed by 26 random base-62 characters, the shape
// of provider ids like "toolu_01…" or "msg_01…".
func NewID(prefix string) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + "01" + string(b)
}

// Chunks splits s into pieces of about n bytes, on rune boundaries, the way
// a provider streams text in deltas.
func Chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i < len(s) && (s[i]&0xC0) == 0x80 {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// Excerpt shortens a tool output for a scripted reply that quotes it.
func Excerpt(s string) string {
	if s == "" {
		return "(empty)"
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

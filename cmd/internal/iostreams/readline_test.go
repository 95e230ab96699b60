package iostreams

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
)

// feed is a stdin whose reads are answered in the order they began: send
// gives a line to the oldest read still waiting, end gives io.EOF to every
// read waiting or to come.
type feed struct {
	mu      sync.Mutex
	waiting []chan string
	ended   bool
	began   chan struct{}
}

func (f *feed) Read(p []byte) (int, error) {
	c := make(chan string, 1)
	f.mu.Lock()
	if f.ended {
		f.mu.Unlock()
		f.began <- struct{}{}
		return 0, io.EOF
	}
	f.waiting = append(f.waiting, c)
	f.mu.Unlock()
	f.began <- struct{}{}
	s, ok := <-c
	if !ok {
		return 0, io.EOF
	}
	return copy(p, s), nil
}

func (f *feed) send(s string) {
	f.mu.Lock()
	c := f.waiting[0]
	f.waiting = f.waiting[1:]
	f.mu.Unlock()
	c <- s
}

func (f *feed) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.waiting {
		close(c)
	}
	f.waiting, f.ended = nil, true
}

// TestReadLineKeepsTheLineOfAQuestionCutShort: a question interrupted
// (Ctrl-C) returns at once, while its read of stdin goes on; the line then
// typed answers the next question instead of being swallowed by the
// abandoned read, and no second read of stdin is started meanwhile.
func TestReadLineKeepsTheLineOfAQuestionCutShort(t *testing.T) {
	in := &feed{began: make(chan struct{}, 8)}
	ios, _, _, _ := Test()
	ios.In = in

	ctx, cancel := context.WithCancelCause(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := ios.ReadLine(ctx)
		first <- err
	}()
	<-in.began // the first question is reading stdin
	stop := errors.New("interrupted")
	cancel(stop)
	if err := <-first; err != stop {
		t.Fatalf("the interrupted question returned %v, want its context's cause", err)
	}

	second := make(chan string, 1)
	go func() {
		line, _ := ios.ReadLine(context.Background())
		second <- line
	}()
	in.send("y\n") // to the oldest read waiting
	in.end()
	if got := <-second; got != "y\n" {
		t.Errorf("the next question read %q, want the line typed after the interruption", got)
	}
	if n := len(in.began); n != 0 {
		t.Errorf("%d more reads of stdin began", n)
	}
}

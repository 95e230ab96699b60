package iostreams

import (
	"bufio"
	"context"
	"sync"
)

// lineReader reads In a line at a time for ReadLine: one buffered reader,
// and at most one read under way, whose line a question that ended first
// leaves for the next.
type lineReader struct {
	mu      sync.Mutex
	r       *bufio.Reader
	pending chan readLine // the line being read, or read and not yet taken
}

type readLine struct {
	line string
	err  error
}

// ReadLine reads the next line of In, newline included, until ctx ends;
// then it returns ctx's cause at once (Ctrl-C at a question). The read
// under way goes on in the background and its line is not lost: the next
// ReadLine returns it instead of reading another. Questions are asked one
// at a time.
func (s *IOStreams) ReadLine(ctx context.Context) (string, error) {
	lr := &s.lines
	lr.mu.Lock()
	if lr.pending == nil {
		if lr.r == nil {
			lr.r = bufio.NewReader(s.In)
		}
		c, r := make(chan readLine, 1), lr.r
		go func() {
			line, err := r.ReadString('\n')
			c <- readLine{line, err}
		}()
		lr.pending = c
	}
	c := lr.pending
	lr.mu.Unlock()
	select {
	case l := <-c:
		lr.mu.Lock()
		lr.pending = nil
		lr.mu.Unlock()
		return l.line, l.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

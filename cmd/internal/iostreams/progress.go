package iostreams

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// ProgressDelay is how long work must run before the progress indicator
// appears: quick scans print nothing at all.
const ProgressDelay = 300 * time.Millisecond

const progressTick = 100 * time.Millisecond

var spinnerFrames = []string{"-", "\\", "|", "/"}

// Progress is a one-line counter on stderr ("- scanning 120/3400 sessions").
// A nil *Progress is valid and does nothing, so callers never check.
type Progress struct {
	w     io.Writer
	label string
	unit  string

	mu     sync.Mutex
	done   int
	total  int
	frame  int
	shown  bool
	closed bool

	stop chan struct{}
	wg   sync.WaitGroup
}

// StartProgress starts a counter labelled like "scanning" counting unit
// ("sessions"). It returns nil (a no-op) when stderr is not a terminal or
// output is quiet.
func (s *IOStreams) StartProgress(label, unit string) *Progress {
	if !s.stderrTTY || s.quiet {
		return nil
	}
	p := newProgress(s.ErrOut, label, unit)
	p.wg.Add(1)
	go p.loop(ProgressDelay)
	return p
}

func newProgress(w io.Writer, label, unit string) *Progress {
	return &Progress{w: w, label: label, unit: unit, stop: make(chan struct{})}
}

func (p *Progress) loop(delay time.Duration) {
	defer p.wg.Done()
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-p.stop:
		return
	case <-t.C:
	}
	tick := time.NewTicker(progressTick)
	defer tick.Stop()
	for {
		p.draw()
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
	}
}

// Update records how much is done out of the total known so far.
func (p *Progress) Update(done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.done, p.total = done, total
	p.mu.Unlock()
}

// draw writes one frame, overwriting the previous one.
func (p *Progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", p.line())
	p.frame++
	p.shown = true
}

func (p *Progress) line() string {
	frame := spinnerFrames[p.frame%len(spinnerFrames)]
	if p.total == 0 {
		return fmt.Sprintf("%s %s", frame, p.label)
	}
	return fmt.Sprintf("%s %s %d/%d %s", frame, p.label, p.done, p.total, p.unit)
}

// Stop ends the indicator and erases its line if it was drawn. It is safe to
// call more than once.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.stop)
	p.mu.Unlock()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

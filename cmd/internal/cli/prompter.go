package cli

import (
	"context"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/iostreams"
)

// Prompter asks the user yes/no questions: the one way a command asks
// before it writes or deletes (ConfirmWrite, backups prune). The factory
// gives it to commands (Factory.Prompt); tests set a StubPrompter.
type Prompter interface {
	// CanPrompt reports whether the user can be asked at all.
	CanPrompt() bool
	// Confirm asks question and returns the answer. When ctx ends first
	// (Ctrl-C at the question) the answer is no and the error ctx's cause.
	Confirm(ctx context.Context, question string) (bool, error)
}

// terminalPrompter asks on the terminal: the question on stderr, a line
// read from stdin (AskLine).
type terminalPrompter struct{ ios *iostreams.IOStreams }

func (p terminalPrompter) CanPrompt() bool { return p.ios.CanPrompt() }

func (p terminalPrompter) Confirm(ctx context.Context, question string) (bool, error) {
	return AskLine(ctx, p.ios, question)
}

// Prompt returns the factory's Prompter: the one set, else questions on the
// terminal of IOStreams, which can prompt when stdin and stdout are
// terminals.
func (f *Factory) Prompt() Prompter {
	if f.Prompter != nil {
		return f.Prompter
	}
	return terminalPrompter{f.IOStreams}
}

// StubPrompter is a Prompter for tests: Terminal is what CanPrompt says,
// Answer answers every question (nil answers no).
type StubPrompter struct {
	Terminal bool
	Answer   func(question string) (bool, error)
}

// CanPrompt reports Terminal.
func (p *StubPrompter) CanPrompt() bool { return p.Terminal }

// Confirm returns Answer's answer.
func (p *StubPrompter) Confirm(_ context.Context, question string) (bool, error) {
	if p.Answer == nil {
		return false, nil
	}
	return p.Answer(question)
}

// Clock returns the factory's clock, Now, or the system's when none is
// set: the one time source a command passes down to what it runs.
func (f *Factory) Clock() func() time.Time {
	if f.Now != nil {
		return f.Now
	}
	return time.Now
}

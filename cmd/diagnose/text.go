package diagnose

import (
	"fmt"
	"io"
	"strings"

	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/report"
)

// preview is what `sessfix fix --error` would do, as diagnose shows it.
func preview(sessionID, text string, p *fix.SessionPlan) FixPreview {
	fp := FixPreview{
		Command: fmt.Sprintf("sessfix fix --session %s --error %s", sessionID, shellQuote(text)),
		Edits:   []string{}, Notes: append([]string{}, p.Notes...), Unfixed: []string{},
	}
	for _, e := range p.Changes.Edits {
		line := fmt.Sprintf("%s %s %s", e.Op, e.Kind, e.ID)
		if e.Mutation != "" {
			line += ": " + e.Mutation
		}
		if e.Reason != "" {
			line += " (" + e.Reason + ")"
		}
		fp.Edits = append(fp.Edits, line)
	}
	for _, u := range p.Unfixed {
		fp.Unfixed = append(fp.Unfixed, u.Reason)
	}
	return fp
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// printText writes the diagnosis for people.
func printText(w io.Writer, r *Result) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("session %s in %s\n", r.SessionID, r.Store)
	t := string(r.ErrorType)
	if t == "" {
		t = "not an error sessfix recognises"
	}
	p("error type: %s\n", t)
	if r.FailedMessage != "" {
		p("failed attempt: stored assistant message %s\n", r.FailedMessage)
	}
	p("%s\n", r.Describe())
	if len(r.Findings) > 0 {
		p("what is wrong there:\n")
		for _, f := range r.Findings {
			p("  %s %s %s\n", f.Severity, f.Code, report.Clean(f.Message))
		}
	} else if r.Mapped() {
		p("sessfix finds nothing wrong on that message now\n")
	}
	if len(r.Fix.Edits) > 0 {
		p("sessfix fix --error would:\n")
		for _, e := range r.Fix.Edits {
			p("  %s\n", e)
		}
		p("run: %s\n", r.Fix.Command)
	} else {
		p("sessfix fix --error would change nothing\n")
		for _, u := range r.Fix.Unfixed {
			p("  %s\n", u)
		}
	}
	for _, n := range r.Fix.Notes {
		p("note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

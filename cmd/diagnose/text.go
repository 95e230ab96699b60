package diagnose

import (
	"fmt"
	"io"
	"strings"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/scan"
)

// preview is what `sessfix fix --error` would do, as diagnose shows it;
// paths are the stores its command names (none: discovered).
func preview(sessionID, text string, paths []string, p *fix.SessionPlan) FixPreview {
	cmd := cli.CommandLine(append([]string{"fix", "--session", sessionID, "--error", text}, paths...)...)
	fp := FixPreview{
		Command: cmd,
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

// printText writes the diagnosis for people.
func printText(w io.Writer, r *Result) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("session %s in %s\n", r.SessionID, r.Store)
	p("error type: %s\n", typeLine(r.ErrorType, r.Rules))
	if r.FailedMessage != "" {
		p("failed attempt: stored assistant message %s\n", r.FailedMessage)
	}
	describe := r.Describe()
	if len(r.Causes) > 0 {
		// The places, one per line, instead of in one long line.
		p("%s\n", scan.CausesHeader(r.Causes))
	} else {
		p("%s\n", report.Clean(describe))
	}
	if r.Resolved != "" {
		p("the error no longer applies: %s\n", report.Clean(r.Resolved))
	}
	for _, f := range r.Causes {
		where := f.MessageID
		if where == "" {
			where = "session"
		}
		if f.PartID != "" {
			where += " part " + f.PartID
		}
		p("  %s %s %s: %s\n", f.Severity, f.Code, report.Clean(where), report.Clean(f.Message))
	}
	if len(r.Findings) > 0 {
		p("what is wrong there:\n")
		for _, f := range r.Findings {
			p("  %s %s %s\n", f.Severity, f.Code, report.Clean(f.Message))
		}
	} else if r.Mapped() && r.Resolved == "" {
		p("sessfix's own checks find nothing wrong on that message\n")
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
			p("  %s\n", report.Clean(u))
		}
	}
	for _, n := range r.Fix.Notes {
		// Leave out what the lines above already said.
		if n != describe && (r.Resolved == "" || !strings.Contains(n, r.Resolved)) {
			p("note: %s\n", report.Clean(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// typeLine says what sessfix reads an error text as: its error type, or
// the rules it is (OpenCode's own errors, scan.MarkedRules).
func typeLine(t opencode.ErrorType, rules []string) string {
	switch {
	case t == opencode.ErrorNone && len(rules) > 0:
		return "none; it is the error " + strings.Join(rules, " or ") + " reports (sessfix explain " + rules[0] + ")"
	case t == opencode.ErrorNone:
		return "not an error sessfix recognises"
	}
	return string(t)
}

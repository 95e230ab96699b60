package plandoc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/report"
)

// WritePlans writes, per session, what fix will change and why, and what
// it leaves alone, under a header per store: the plan `sessfix fix` shows
// before it writes. Sessions keep the order of plans. A session the settle
// policy says may be in use (fix.SkippedBusy, shown by a dry run) is
// marked as one that would be skipped.
func WritePlans(w io.Writer, plans []fix.Outcome, color bool) error {
	st := report.NewStyles(color)
	bw := bufio.NewWriter(w)
	var last string
	for _, o := range plans {
		info := o.Store.Info()
		if key := string(info.Shape) + "\x00" + info.Path; key != last {
			fmt.Fprintln(bw, st.Header.Render(report.Clean(report.StoreName(info))))
			last = key
		}
		title := ""
		if o.Title != "" {
			title = fmt.Sprintf(" %q", o.Title)
		}
		fmt.Fprintf(bw, "  session %s%s\n", st.Title.Render(report.Clean(o.ID)), title)
		if o.Status == fix.SkippedBusy {
			fmt.Fprintf(bw, "    %s %s\n", st.Warning.Render("would be skipped:"), report.Clean(skippedBecause(o)))
		}
		p := o.Plan
		for _, r := range p.Fixed {
			how := "fixed by the repairs above"
			if r.Strategy != "" {
				how = fmt.Sprintf("%s (%s), %s", r.Strategy, r.Mutations, plural.Count(r.Edits, "edit", "edits"))
			}
			fmt.Fprintf(bw, "    %s %s %s: %s\n", st.OK.Render("fix"), st.Code.Render(r.Finding.Code), report.Clean(r.Finding.Message), how)
		}
		for _, u := range p.Unfixed {
			fmt.Fprintf(bw, "    %s %s %s: %s\n", st.Warning.Render("left"), st.Code.Render(u.Finding.Code), report.Clean(u.Finding.Message), report.Clean(u.Reason))
		}
		for _, sk := range p.Skipped {
			fmt.Fprintf(bw, "    %s %s %s %s: %s\n", st.Dim.Render("skipped edit"), sk.Edit.Op, sk.Edit.Kind, report.Clean(sk.Edit.ID), report.Clean(sk.Reason))
		}
		for _, n := range p.Notes {
			fmt.Fprintf(bw, "    %s %s\n", st.Hint.Render("note:"), report.Clean(n))
		}
	}
	return bw.Flush()
}

// WriteDiffs writes the unified diff (fix.Diff) of every plan that changes
// something, coloured on request. The diff of a session that would be
// skipped as possibly in use (fix.SkippedBusy) starts with a comment line
// that says so.
func WriteDiffs(w io.Writer, plans []fix.Outcome, color bool) error {
	st := report.NewStyles(color)
	for _, o := range plans {
		if !o.Changes() {
			continue
		}
		var b bytes.Buffer
		if o.Status == fix.SkippedBusy {
			fmt.Fprintf(&b, "# session %s would be skipped: %s\n", o.ID, skippedBecause(o))
		}
		if err := fix.Diff(&b, o.Plan.Changes); err != nil {
			return err
		}
		for _, line := range strings.SplitAfter(b.String(), "\n") {
			if line == "" {
				continue
			}
			body := report.Clean(strings.TrimSuffix(line, "\n"))
			switch {
			case !color:
			case strings.HasPrefix(body, "---"), strings.HasPrefix(body, "+++"), strings.HasPrefix(body, "#"):
				body = st.Header.Render(body)
			case strings.HasPrefix(body, "@@"):
				body = st.Info.Render(body)
			case strings.HasPrefix(body, "-"):
				body = st.Error.Render(body)
			case strings.HasPrefix(body, "+"):
				body = st.OK.Render(body)
			}
			if _, err := io.WriteString(w, body+line[len(strings.TrimSuffix(line, "\n")):]); err != nil {
				return err
			}
		}
	}
	return nil
}

// skippedBecause says why a session would be skipped.
func skippedBecause(o fix.Outcome) string {
	return o.Use.Why + ", so OpenCode may still be writing it (add --force to include it)"
}

// FixSummary is the status line after a write: how many sessions were
// fixed, with how many edits per rule ("fixed 2 sessions: 3 edits (SF103 1,
// SF104 2)").
func FixSummary(applied []fix.Outcome) string {
	byRule := map[string]int{}
	sessions := 0
	for _, o := range applied {
		if !o.Changes() {
			continue
		}
		sessions++
		for r, n := range o.Plan.EditsByRule() {
			byRule[r] += n
		}
	}
	rules := make([]string, 0, len(byRule))
	for r := range byRule {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	parts := make([]string, 0, len(rules))
	total := 0
	for _, r := range rules {
		parts = append(parts, fmt.Sprintf("%s %d", r, byRule[r]))
		total += byRule[r]
	}
	return fmt.Sprintf("fixed %s: %s (%s)", plural.Count(sessions, "session", "sessions"), plural.Count(total, "edit", "edits"), strings.Join(parts, ", "))
}

package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

func init() {
	register("text", func(o Options) Printer {
		if o.TTY {
			return &ttyPrinter{st: NewStyles(o.Color)}
		}
		return linePrinter{st: NewStyles(o.Color)}
	})
}

// FindingLine renders a finding as the one stable line piped text output
// prints: "LOCATION: SEVERITY CODE message". See docs/json-output.md for the
// exact LOCATION format.
func FindingLine(f scan.Finding) string { return findingLine(f, f.Severity.String()) }

// findingLine is FindingLine with the severity as rendered (coloured).
func findingLine(f scan.Finding, severity string) string {
	return Where(f) + ": " + severity + " " + f.Code + " " + Clean(f.Message)
}

// Where renders a finding's location: Location.String() (the store path when
// the finding has no location), followed by " (session/message/part)" when
// the location does not name the record by itself: SQLite rows and records
// inside an export file. Names from the store are Clean.
func Where(f scan.Finding) string {
	return Clean(where(f))
}

func where(f scan.Finding) string {
	loc := f.Location.String()
	if f.Location.Path == "" {
		loc = f.StorePath
	}
	if f.Location.Table != "" || f.Shape == store.ShapeExport {
		if ids := idPath(f.SessionID, f.MessageID, f.PartID); ids != "" {
			loc += " (" + ids + ")"
		}
	}
	return loc
}

func idPath(ids ...string) string {
	var out []string
	for _, id := range ids {
		if id != "" {
			out = append(out, id)
		}
	}
	return strings.Join(out, "/")
}

// linePrinter is the piped text format: one line per finding, nothing
// else; with colour forced (--color always), the severity is coloured as
// on a terminal.
type linePrinter struct{ st *Styles }

func (p linePrinter) Print(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	for _, f := range r.findings() {
		bw.WriteString(findingLine(f, p.st.Severity(f.Severity).Render(f.Severity.String())))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// ttyPrinter is the terminal text format: findings grouped by store and
// session, then a summary table and hints.
type ttyPrinter struct{ st *Styles }

type storeKey struct {
	shape store.Shape
	path  string
}

func (p *ttyPrinter) Print(w io.Writer, r *Report) error {
	st := p.st
	bw := bufio.NewWriter(w)
	byStore := map[storeKey][]scan.Finding{}
	var extra []storeKey
	known := map[storeKey]bool{}
	for _, sr := range r.stores() {
		known[storeKey{sr.Info.Shape, sr.Info.Path}] = true
	}
	for _, f := range r.findings() {
		k := storeKey{f.Shape, f.StorePath}
		if !known[k] && byStore[k] == nil {
			extra = append(extra, k)
		}
		byStore[k] = append(byStore[k], f)
	}
	first := true
	for _, sr := range r.stores() {
		if !first {
			bw.WriteString("\n")
		}
		first = false
		k := storeKey{sr.Info.Shape, sr.Info.Path}
		p.printStore(bw, sr, byStore[k])
	}
	for _, k := range extra {
		if !first {
			bw.WriteString("\n")
		}
		first = false
		p.printStore(bw, scan.StoreResult{Info: store.Info{Shape: k.shape, Path: k.path}}, byStore[k])
	}

	s := r.Summarize()
	bw.WriteString("\n")
	if s.Total == 0 {
		if s.Sessions == 0 {
			fmt.Fprintf(bw, "%s: no sessions\n", st.OK.Render("no findings"))
		} else {
			fmt.Fprintf(bw, "%s in %s\n", st.OK.Render("no findings"), plural.Count(s.Sessions, "session", "sessions"))
		}
		return bw.Flush()
	}
	p.printSummary(bw, s)
	for _, h := range Hints(r) {
		fmt.Fprintf(bw, "%s %s\n", st.Hint.Render("hint:"), h)
	}
	return bw.Flush()
}

func (p *ttyPrinter) printStore(w io.Writer, sr scan.StoreResult, fs []scan.Finding) {
	st := p.st
	fmt.Fprintf(w, "%s\n", st.Header.Render(Clean(StoreName(sr.Info))))
	for _, n := range sr.Info.Notes {
		fmt.Fprintf(w, "  %s %s\n", st.Dim.Render("note:"), Clean(n))
	}
	if sr.Err != nil {
		fmt.Fprintf(w, "  %s %s\n", st.Error.Render("error:"), Clean(sr.Err.Error()))
	}
	summaries := map[string]scan.SessionSummary{}
	for _, s := range sr.Sessions {
		summaries[s.ID] = s
	}
	// Findings about the store itself (the store-health rules: no
	// session) come first, under the store, and are no session.
	var own, sessions []scan.Finding
	for _, f := range fs {
		if f.SessionID == "" {
			own = append(own, f)
		} else {
			sessions = append(sessions, f)
		}
	}
	fs = sessions
	if len(own) > 0 {
		p.printOwn(w, sr.Info, own)
	}
	withFindings := 0
	for i := 0; i < len(fs); {
		j := i
		for j < len(fs) && fs[j].SessionID == fs[i].SessionID {
			j++
		}
		withFindings++
		p.printSession(w, fs[i].SessionID, summaries[fs[i].SessionID], fs[i:j])
		i = j
	}
	n := len(sr.Sessions)
	if sr.Err != nil && n == 0 {
		return
	}
	if withFindings > n {
		n = withFindings
	}
	clean := n - withFindings
	line := fmt.Sprintf("%s, %d clean", plural.Count(n, "session", "sessions"), clean)
	switch {
	case n == 0 && hasSeverity(own, scan.Error):
		// A database SQL cannot open lists nothing: that is not clean.
		line = "no session could be listed: see the findings above"
	case n == 0:
		line = "no sessions"
	case clean == n:
		line = fmt.Sprintf("%s, all clean", plural.Count(n, "session", "sessions"))
	}
	if len(fs) > 0 || len(own) > 0 {
		w.Write([]byte("\n"))
	}
	fmt.Fprintf(w, "  %s\n", st.Dim.Render(line))
}

// printOwn prints the findings about the store itself: "database" (or
// "store") and its findings, like a session's but no session.
func (p *ttyPrinter) printOwn(w io.Writer, info store.Info, fs []scan.Finding) {
	fmt.Fprintf(w, "\n  %s\n", p.st.Title.Render(ownName(info.Shape)))
	p.printFindings(w, fs)
}

func (p *ttyPrinter) printSession(w io.Writer, id string, sum scan.SessionSummary, fs []scan.Finding) {
	st := p.st
	title := sum.Title
	if title == "" {
		title = "(untitled)"
	} else {
		title = strconv.Quote(title)
	}
	fmt.Fprintf(w, "\n  %s %s %s\n", st.Title.Render(title), Clean(id),
		st.Dim.Render("("+plural.Count(sum.Messages, "message", "messages")+")"))
	p.printFindings(w, fs)
}

// printFindings prints findings two lines each (and the provider's error).
func (p *ttyPrinter) printFindings(w io.Writer, fs []scan.Finding) {
	st := p.st
	for _, f := range fs {
		sev := f.Severity.String()
		fmt.Fprintf(w, "    %s %s %s\n", st.Severity(f.Severity).Render(padRight(sev, 7)), st.Code.Render(f.Code), Clean(f.Message))
		fmt.Fprintf(w, "    %s %s\n", padRight("", 7), st.Dim.Render(Where(f)))
		if f.ProviderError != "" {
			fmt.Fprintf(w, "    %s %s\n", padRight("", 7), st.Dim.Render("provider error: "+truncate(Clean(f.ProviderError), providerErrorWidth)))
		}
	}
}

func (p *ttyPrinter) printSummary(w io.Writer, s Summary) {
	st := p.st
	rows := [][]string{{"code", "rule", "severity", "count", "fixable"}}
	for _, c := range s.ByCode {
		rows = append(rows, []string{c.Code, c.Rule, c.Severity.String(), strconv.Itoa(c.Count), strconv.Itoa(c.Fixable)})
	}
	sevs := make([]scan.Severity, len(s.ByCode))
	for i, c := range s.ByCode {
		sevs[i] = c.Severity
	}
	fmt.Fprintf(w, "%s\n", st.Header.Render("summary"))
	writeTable(w, "  ", rows, sevs, 3, st) // count and fixable align right
	var sev []string
	for _, c := range []struct {
		n          int
		one, other string
	}{{s.Error, "error", "errors"}, {s.Warning, "warning", "warnings"}, {s.Info, "info", "info"}} {
		if c.n > 0 {
			sev = append(sev, plural.Count(c.n, c.one, c.other))
		}
	}
	fmt.Fprintf(w, "\n%s (%s), %d fixable\n", plural.Count(s.Total, "finding", "findings"), strings.Join(sev, ", "), s.Fixable)
}

// providerErrorWidth is how much of a provider's error text the terminal
// layout shows; JSON has all of it.
const providerErrorWidth = 100

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// writeTable writes rows (a header, then one row per severity in sev) as
// columns two spaces apart, each line after indent: columns from rightFrom on
// align right (numbers), the others left; the header is dimmed, column 0
// styled as a rule code and column 2 in its row's severity colour.
func writeTable(w io.Writer, indent string, rows [][]string, sev []scan.Severity, rightFrom int, st *Styles) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], len(cell))
		}
	}
	for ri, row := range rows {
		cells := make([]string, len(row))
		for i, cell := range row {
			if i >= rightFrom {
				cell = padLeft(cell, width[i])
			} else {
				cell = padRight(cell, width[i])
			}
			switch {
			case ri == 0:
				cell = st.Dim.Render(cell)
			case i == 0:
				cell = st.Code.Render(cell)
			case i == 2:
				cell = st.Severity(sev[ri-1]).Render(cell)
			}
			cells[i] = cell
		}
		fmt.Fprintf(w, "%s%s\n", indent, strings.TrimRight(strings.Join(cells, "  "), " "))
	}
}

func padRight(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat(" ", n-len(s))
}

func padLeft(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat(" ", n-len(s)) + s
}

// hasSeverity reports whether any of fs is of severity sev.
func hasSeverity(fs []scan.Finding, sev scan.Severity) bool {
	for _, f := range fs {
		if f.Severity == sev {
			return true
		}
	}
	return false
}

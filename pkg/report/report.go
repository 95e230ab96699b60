package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// Report is what printers render: a scan result plus what the reader needs
// to judge it.
type Report struct {
	Result *scan.Result
	// Version is the sessfix version that produced the report.
	Version string
	// FixCommand is the command line that repairs the report's findings,
	// naming the stores and sessions the scan read ("sessfix fix" when
	// empty).
	FixCommand string
	// ReadOnly, when set, reports a store sessfix reads but never writes
	// (an OpenCode 2 database): its findings are not counted in the hint
	// to run FixCommand, which would refuse them.
	ReadOnly func(store.Info) bool
	// FailPolicy decides which findings fail the run; with none, no
	// finding does.
	FailPolicy
}

// FailPolicy says which findings fail the run. The command owns it
// (--fail-on: cli.FailPolicy); printers only mark and count the findings it
// fails, and name it.
type FailPolicy interface {
	// Fails reports whether f fails the run.
	Fails(f scan.Finding) bool
	// FailOnString is the policy as --fail-on takes it ("warning",
	// "error,SF105"): the JSON summary's fail_on.
	FailOnString() string
}

// Printer renders a report in one format.
type Printer interface {
	Print(w io.Writer, r *Report) error
}

// Options configure a printer.
type Options struct {
	// TTY selects the terminal layout of text output (grouped, with a
	// summary table and hints) instead of one line per finding.
	TTY bool
	// Color enables ANSI styling; it only affects the terminal layout.
	Color bool
	// BaseDir is the directory CI formats (sarif, github, junit) make
	// absolute paths relative to, normally the working directory, so that
	// annotations point at files of the checked-out repository. Paths
	// outside it, and every path when it is empty, are kept as they are.
	BaseDir string
}

// NewPrinter builds a printer for the given options.
type NewPrinter func(Options) Printer

var formats = map[string]NewPrinter{}

// register is called from each format file's init.
func register(name string, f NewPrinter) { formats[name] = f }

// Formats returns the names of every output format, sorted.
func Formats() []string {
	out := make([]string, 0, len(formats))
	for name := range formats {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// New returns the printer for the named format.
func New(name string, opts Options) (Printer, error) {
	f, ok := formats[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("unknown format %q (want %s)", name, strings.Join(Formats(), ", "))
	}
	return f(opts), nil
}

// StoreName names a store for people: "sqlite store /path", or the path
// alone for an input that could not be opened as any store (a scan.
// StoreResult whose Info has no Shape).
func StoreName(info store.Info) string {
	if info.Shape == "" {
		return info.Path
	}
	return fmt.Sprintf("%s store %s", info.Shape, info.Path)
}

// StoreErrorf is the error of a store that could not be read: an input
// that could not be opened says so itself; a store whose sessions could
// not be listed says which store.
func StoreErrorf(sr scan.StoreResult) error {
	if sr.Info.Shape == "" {
		return sr.Err
	}
	return fmt.Errorf("cannot list the sessions of %s: %w", StoreName(sr.Info), sr.Err)
}

// fails reports whether f fails the run: whether the report's FailPolicy
// says so.
func (r *Report) fails(f scan.Finding) bool {
	return r.FailPolicy != nil && r.FailPolicy.Fails(f)
}

// failOnString names the report's FailPolicy, "" when it has none.
func (r *Report) failOnString() string {
	if r.FailPolicy == nil {
		return ""
	}
	return r.FailPolicy.FailOnString()
}

// findings returns the findings that are not suppressed: what text output
// shows and what counts.
func (r *Report) findings() []scan.Finding {
	if r.Result == nil {
		return nil
	}
	var out []scan.Finding
	for _, f := range r.Result.Findings {
		if !f.Suppressed() {
			out = append(out, f)
		}
	}
	return out
}

// all returns every finding, suppressed ones included: what JSON and SARIF
// show.
func (r *Report) all() []scan.Finding {
	if r.Result == nil {
		return nil
	}
	return r.Result.Findings
}

func (r *Report) stores() []scan.StoreResult {
	if r.Result == nil {
		return nil
	}
	return r.Result.Stores
}

// Summary counts a report's findings. Suppressed findings are counted only
// in Suppressed.
type Summary struct {
	Total int
	// Suppressed counts findings a config file suppressed.
	Suppressed int
	// BySeverity counts findings per severity.
	Error, Warning, Info int
	// ByCode lists each code that has findings, in code order.
	ByCode []CodeCount
	// Fixable counts findings `sessfix fix` can repair.
	Fixable int
	// Store counts the findings about a store itself (no session: the
	// store-health rules), which are in Total too.
	Store int
	// Sessions and Stores count what was scanned; Affected counts the
	// sessions with at least one of the Total findings.
	Sessions, Stores, Affected int
	// Failing counts findings that fail the run (see Report.FailPolicy).
	Failing int
}

// CodeCount is the findings of one rule code.
type CodeCount struct {
	Code string
	Rule string
	// Severity is the highest severity among the code's findings.
	Severity scan.Severity
	Count    int
	Fixable  int
}

// Summarize counts the report's findings.
func (r *Report) Summarize() Summary {
	var s Summary
	for _, st := range r.stores() {
		if st.Info.Shape != "" { // not an input that did not open
			s.Stores++
		}
		s.Sessions += len(st.Sessions)
	}
	for _, f := range r.all() {
		if f.Suppressed() {
			s.Suppressed++
		}
	}
	byCode := map[string]*CodeCount{}
	type sessionKey struct {
		shape    store.Shape
		path, id string
	}
	affected := map[sessionKey]bool{}
	for _, f := range r.findings() {
		s.Total++
		if f.SessionID != "" {
			affected[sessionKey{f.Store.Shape, f.Store.Path, f.SessionID}] = true
		} else {
			s.Store++
		}
		switch f.Severity {
		case scan.Error:
			s.Error++
		case scan.Warning:
			s.Warning++
		case scan.Info:
			s.Info++
		}
		if r.fails(f) {
			s.Failing++
		}
		c := byCode[f.Code]
		if c == nil {
			c = &CodeCount{Code: f.Code, Rule: f.Rule}
			byCode[f.Code] = c
		}
		c.Count++
		if f.Severity > c.Severity {
			c.Severity = f.Severity
		}
		if fixable(f) {
			s.Fixable++
			c.Fixable++
		}
	}
	s.Affected = len(affected)
	for _, c := range byCode {
		s.ByCode = append(s.ByCode, *c)
	}
	sort.Slice(s.ByCode, func(i, j int) bool { return s.ByCode[i].Code < s.ByCode[j].Code })
	return s
}

// FindingsLine is the one-line summary of findings a piped scan ends with:
// "3 findings in 2 sessions" when every scanned session has some, "3 findings
// in 1 of 2 sessions" otherwise. Findings about a store itself are said
// apart, not counted in a session: "1 finding about the store, none in 3
// sessions", "4 findings: 1 about the store, 3 in 2 of 5 sessions".
func FindingsLine(s Summary) string {
	if s.Total == 0 && s.Sessions == 0 {
		return "no findings: no sessions"
	}
	if s.Total == 0 {
		return "no findings in " + plural.Count(s.Sessions, "session", "sessions")
	}
	if s.Store == 0 {
		return plural.Count(s.Total, "finding", "findings") + " in " + sessionsLine(s)
	}
	about := "about the store"
	if s.Stores > 1 {
		about = "about stores"
	}
	if s.Store == s.Total && s.Sessions == 0 {
		return fmt.Sprintf("%s %s, no sessions", plural.Count(s.Total, "finding", "findings"), about)
	}
	if s.Store == s.Total {
		return fmt.Sprintf("%s %s, none in %s", plural.Count(s.Total, "finding", "findings"), about, plural.Count(s.Sessions, "session", "sessions"))
	}
	return fmt.Sprintf("%s: %d %s, %d in %s", plural.Count(s.Total, "finding", "findings"), s.Store, about, s.Total-s.Store, sessionsLine(s))
}

// sessionsLine is "2 sessions" when every scanned session has findings,
// "1 of 2 sessions" otherwise.
func sessionsLine(s Summary) string {
	if s.Affected >= s.Sessions {
		return plural.Count(s.Affected, "session", "sessions")
	}
	return fmt.Sprintf("%d of %s", s.Affected, plural.Count(s.Sessions, "session", "sessions"))
}

// Failing counts the findings that fail the run (see FailPolicy): a scan
// whose report has any exits 1.
func (r *Report) Failing() int {
	n := 0
	for _, f := range r.findings() {
		if r.fails(f) {
			n++
		}
	}
	return n
}

// fixable reports whether `sessfix fix` has a default repair for f.
func fixable(f scan.Finding) bool { return f.Fix != "" }

// repairable counts the fixable findings `sessfix fix` will repair: those
// of stores it writes (ReadOnly).
func (r *Report) repairable() int {
	n := 0
	for _, f := range r.findings() {
		if r.repairs(f) {
			n++
		}
	}
	return n
}

// Hints returns the next steps for a report, one sentence each without a
// "hint:" prefix: how many findings `sessfix fix` repairs, and which code to
// read about first. None when there are no findings.
func Hints(r *Report) []string {
	s := r.Summarize()
	if s.Total == 0 {
		return nil
	}
	var out []string
	if n := r.repairable(); n > 0 {
		cmd := r.FixCommand
		if cmd == "" {
			cmd = "sessfix fix"
		}
		out = append(out, fmt.Sprintf("run `%s` to repair %d of them", cmd, n))
	}
	if h := explainHint(r); h != "" {
		out = append(out, h)
	}
	return out
}

// explainHint points at the code to read about first: of the findings
// that fail the run (an info finding, history or facts, is not where a
// reader should start), the most severe, and of those the most frequent
// code (the lowest code of a tie), named with its count so the claim can
// be checked against the list above it.
func explainHint(r *Report) string {
	type tally struct {
		n   int
		sev scan.Severity
	}
	codes := map[string]*tally{}
	for _, f := range r.Result.Findings {
		if f.Suppressed() || !r.fails(f) {
			continue
		}
		c := codes[f.Code]
		if c == nil {
			c = &tally{}
			codes[f.Code] = c
		}
		c.n++
		c.sev = max(c.sev, f.Severity)
	}
	best, ties := "", 0
	for code, c := range codes {
		b := codes[best]
		switch {
		case b == nil || c.sev > b.sev || c.sev == b.sev && c.n > b.n:
			best, ties = code, 1
		case c.sev == b.sev && c.n == b.n:
			ties++
			best = min(best, code)
		}
	}
	if best == "" {
		return ""
	}
	b := codes[best]
	if ties > 1 {
		return fmt.Sprintf("run `sessfix explain %s` to read about one of the most frequent %ss (%s each)",
			best, b.sev, plural.Count(b.n, "finding", "findings"))
	}
	return fmt.Sprintf("run `sessfix explain %s` to read about the most frequent %s (%s)", best, b.sev, plural.Count(b.n, "finding", "findings"))
}

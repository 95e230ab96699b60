package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/pkg/scan"
)

// DefaultFailOn is the severity at or above which findings fail a scan when
// the caller does not say.
const DefaultFailOn = scan.Warning

// Report is what printers render: a scan result plus what the reader needs
// to judge it.
type Report struct {
	Result *scan.Result
	// Version is the sessfix version that produced the report.
	Version string
	// FailOn is the --fail-on threshold; zero means DefaultFailOn.
	FailOn scan.Severity
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

// failOn returns the effective threshold.
func (r *Report) failOn() scan.Severity {
	if r.FailOn == 0 {
		return DefaultFailOn
	}
	return r.FailOn
}

func (r *Report) findings() []scan.Finding {
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

// Summary counts a report's findings.
type Summary struct {
	Total int
	// BySeverity counts findings per severity.
	Error, Warning, Info int
	// ByCode lists each code that has findings, in code order.
	ByCode []CodeCount
	// Fixable counts findings `sessfix fix` can repair.
	Fixable int
	// Sessions and Stores count what was scanned.
	Sessions, Stores int
	// FailOn is the threshold; Failing counts findings at or above it.
	FailOn  scan.Severity
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
	s := Summary{FailOn: r.failOn(), Stores: len(r.stores())}
	for _, st := range r.stores() {
		s.Sessions += len(st.Sessions)
	}
	byCode := map[string]*CodeCount{}
	for _, f := range r.findings() {
		s.Total++
		switch f.Severity {
		case scan.Error:
			s.Error++
		case scan.Warning:
			s.Warning++
		case scan.Info:
			s.Info++
		}
		if f.Severity >= s.FailOn {
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
	for _, c := range byCode {
		s.ByCode = append(s.ByCode, *c)
	}
	sort.Slice(s.ByCode, func(i, j int) bool { return s.ByCode[i].Code < s.ByCode[j].Code })
	return s
}

// Failing counts findings at or above the report's threshold: a scan whose
// report has any fails (exit code 1).
func (r *Report) Failing() int {
	n := 0
	for _, f := range r.findings() {
		if f.Severity >= r.failOn() {
			n++
		}
	}
	return n
}

// fixable reports whether `sessfix fix` has a default repair for f.
func fixable(f scan.Finding) bool { return f.Fix != "" }

// MostFrequent returns the code with the most findings (ties: the lowest
// code), or "" when there are none.
func (s Summary) MostFrequent() string {
	best := CodeCount{}
	for _, c := range s.ByCode {
		if c.Count > best.Count {
			best = c
		}
	}
	return best.Code
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
	if s.Fixable > 0 {
		out = append(out, fmt.Sprintf("run `sessfix fix` to repair %d of them", s.Fixable))
	}
	if code := s.MostFrequent(); code != "" {
		out = append(out, fmt.Sprintf("run `sessfix explain %s` to read about the most frequent finding", code))
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

package cli

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/scan"
)

// DefaultFailOn is the severity at or above which findings fail a scan when
// the caller does not say.
const DefaultFailOn = scan.Warning

// FailPolicy is --fail-on: which findings fail a run (scan's exit code 1,
// and which findings fix leaves that still count). The printers ask it
// through report.FailPolicy.
type FailPolicy struct {
	// FailOn is the severity threshold; zero means DefaultFailOn unless
	// FailCodes is set.
	FailOn scan.Severity
	// FailCodes are rule codes or prefixes whose findings fail a run
	// whatever their severity (--fail-on SF103,SF2). With FailCodes and a
	// zero FailOn, only findings of these codes fail.
	FailCodes []string
}

var _ report.FailPolicy = FailPolicy{}

// failOn returns the effective severity threshold; zero when only
// FailCodes fail.
func (p FailPolicy) failOn() scan.Severity {
	if p.FailOn == 0 && len(p.FailCodes) == 0 {
		return DefaultFailOn
	}
	return p.FailOn
}

// Fails reports whether f fails the run: it is not suppressed, and its
// severity is at or above the threshold or its code is one of FailCodes.
func (p FailPolicy) Fails(f scan.Finding) bool {
	if f.Suppressed() {
		return false
	}
	if sev := p.failOn(); sev != 0 && f.Severity >= sev {
		return true
	}
	for _, c := range p.FailCodes {
		if len(f.Code) >= len(c) && strings.EqualFold(f.Code[:len(c)], c) {
			return true
		}
	}
	return false
}

// FailOnString renders the threshold as --fail-on takes it: "warning",
// "SF103,SF104" or "error,SF105".
func (p FailPolicy) FailOnString() string {
	var parts []string
	if sev := p.failOn(); sev != 0 {
		parts = append(parts, sev.String())
	}
	parts = append(parts, p.FailCodes...)
	return strings.Join(parts, ",")
}

// ParseFailOn parses a --fail-on value: a comma-separated list of severity
// names (error, warning, info; the lowest wins) and rule codes or prefixes.
// An empty value is DefaultFailOn.
func ParseFailOn(value string) (sev scan.Severity, codes []string, err error) {
	if strings.TrimSpace(value) == "" {
		return DefaultFailOn, nil, nil
	}
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if s, perr := scan.ParseSeverity(item); perr == nil {
			if sev == 0 || s < sev {
				sev = s
			}
			continue
		}
		code := strings.ToUpper(item)
		if err := (&scan.Options{Select: []string{code}}).ValidateFilters(); err != nil {
			return 0, nil, fmt.Errorf("%q is neither a severity (error, warning, info) nor a rule code or prefix (see `sessfix rules`)", item)
		}
		codes = append(codes, code)
	}
	if sev == 0 && len(codes) == 0 {
		return DefaultFailOn, nil, nil
	}
	return sev, codes, nil
}

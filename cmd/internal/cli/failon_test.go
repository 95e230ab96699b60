package cli

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/scan"
)

func TestParseFailOn(t *testing.T) {
	tests := []struct {
		value string
		sev   scan.Severity
		codes []string
		err   bool
	}{
		{"", DefaultFailOn, nil, false},
		{"error", scan.Error, nil, false},
		{"info,error", scan.Info, nil, false},
		{"sf103, SF2", 0, []string{"SF103", "SF2"}, false},
		{"error,SF105", scan.Error, []string{"SF105"}, false},
		{"fatal", 0, nil, true},
		{"SF999", 0, nil, true},
	}
	for _, tt := range tests {
		sev, codes, err := ParseFailOn(tt.value)
		if (err != nil) != tt.err || sev != tt.sev || strings.Join(codes, ",") != strings.Join(tt.codes, ",") {
			t.Errorf("ParseFailOn(%q) = %v %v %v", tt.value, sev, codes, err)
		}
	}
}

// TestFailPolicy: a severity fails what is at or above it, codes fail
// whatever their severity, the zero policy is DefaultFailOn, and a
// suppressed finding never fails.
func TestFailPolicy(t *testing.T) {
	f := func(code string, sev scan.Severity) scan.Finding { return scan.Finding{Code: code, Severity: sev} }
	fs := []scan.Finding{f("SF103", scan.Error), f("SF302", scan.Error), f("SF104", scan.Warning),
		f("SF103", scan.Error), f("SF204", scan.Info), f("SF101", scan.Warning)}
	failing := func(p FailPolicy) int {
		n := 0
		for _, f := range fs {
			if p.Fails(f) {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		policy FailPolicy
		want   int
		name   string
	}{
		{FailPolicy{}, 5, "warning"},
		{FailPolicy{FailOn: scan.Error}, 3, "error"},
		{FailPolicy{FailOn: scan.Info}, 6, "info"},
		{FailPolicy{FailCodes: []string{"SF105"}}, 0, "SF105"},
		// SF2 matches the info finding SF204 only.
		{FailPolicy{FailCodes: []string{"SF2"}}, 1, "SF2"},
		{FailPolicy{FailOn: scan.Error, FailCodes: []string{"SF2"}}, 4, "error,SF2"},
	} {
		if got := failing(c.policy); got != c.want || c.policy.FailOnString() != c.name {
			t.Errorf("%+v: failing %d (%s), want %d (%s)", c.policy, got, c.policy.FailOnString(), c.want, c.name)
		}
	}
	suppressed := f("SF103", scan.Error)
	suppressed.Suppression = &scan.Suppression{Reason: "kept on purpose"}
	if (FailPolicy{FailOn: scan.Info, FailCodes: []string{"SF103"}}).Fails(suppressed) {
		t.Error("a suppressed finding fails the run")
	}
}

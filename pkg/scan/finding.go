package scan

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// Severity of a finding.
type Severity int

// Severities, in increasing order.
const (
	Info Severity = iota + 1
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "unknown"
}

// MarshalText makes severities render as their names in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity parses "info", "warning" or "error".
func ParseSeverity(name string) (Severity, error) {
	switch strings.ToLower(name) {
	case "info":
		return Info, nil
	case "warning", "warn":
		return Warning, nil
	case "error":
		return Error, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want error, warning or info)", name)
}

// Finding is one problem in one session. Findings are plain values.
type Finding struct {
	Code     string   `json:"code"`
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Message is lowercase, with no path and no code in it.
	Message string `json:"message"`

	Store     store.Info     `json:"-"`
	StorePath string         `json:"store"`
	Shape     store.Shape    `json:"shape"`
	SessionID string         `json:"session"`
	MessageID string         `json:"message_id"`
	PartID    string         `json:"part_id"`
	Location  store.Location `json:"location"`

	// Fix names the mutation(s) `sessfix fix` will apply by default; empty
	// when the rule is report-only.
	Fix string `json:"fix"`

	// ProviderError is the error text a provider returns for this defect
	// (preflight findings and SF302); empty when none applies.
	ProviderError string `json:"provider_error"`
	// Index is the provider's index of the offending block, as the provider
	// prints it ("messages.3.content.0"); empty when none applies.
	Index string `json:"index"`
	// ErrorType is the error-driven recovery class (SF302, preflight).
	ErrorType string `json:"error_type"`
	// FixedBy names the record rule(s) whose finding about the same defect
	// this preflight finding replaces ("SF103"; several joined by ","), so
	// the defect is reported once; empty otherwise.
	FixedBy string `json:"fixed_by"`

	// Suppression is set when a config file accepts the finding as it is:
	// it is still reported (JSON, SARIF) but never fails a run and is never
	// fixed. Nil for every finding a rule reports; pkg/config sets it.
	Suppression *Suppression `json:"suppression,omitempty"`
}

// Suppression is why a finding is accepted as it is.
type Suppression struct {
	// Reason is the justification the config gives; never blank.
	Reason string `json:"reason"`
	// Source is the config file that holds the suppression.
	Source string `json:"source"`
}

// Suppressed reports whether a config suppressed the finding.
func (f Finding) Suppressed() bool { return f.Suppression != nil }

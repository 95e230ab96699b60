package report

import (
	"encoding/json"
	"io"

	"github.com/sessfix/sessfix/pkg/scan"
)

func init() {
	register("json", func(Options) Printer { return jsonPrinter{} })
}

// The JSON document. These structs are the contract documented in
// docs/json-output.md: field names are snake_case, every field is always
// present (no omitempty), slices are never null. Changing a field here means
// changing the doc and the contract test.

// JSONDocument is the whole `--format json` output of a scan.
type JSONDocument struct {
	Version       string        `json:"version"`
	SchemaVersion int           `json:"schema_version"`
	Stores        []JSONStore   `json:"stores"`
	Findings      []JSONFinding `json:"findings"`
	Summary       JSONSummary   `json:"summary"`
}

// JSONStore is one scanned store.
type JSONStore struct {
	Shape    string        `json:"shape"`
	Path     string        `json:"path"`
	Notes    []string      `json:"notes"`
	Error    string        `json:"error"`
	Sessions []JSONSession `json:"sessions"`
}

// JSONSession is one scanned session.
type JSONSession struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Messages int    `json:"messages"`
	Parts    int    `json:"parts"`
	Findings int    `json:"findings"`
	// InUse says why the session's unfinished turn was left unchecked
	// (OpenCode may still be writing it); absent when it was not.
	InUse string `json:"in_use,omitempty"`
}

// JSONFinding is one finding.
type JSONFinding struct {
	Code          string       `json:"code"`
	Rule          string       `json:"rule"`
	Severity      string       `json:"severity"`
	Message       string       `json:"message"`
	Store         string       `json:"store"`
	Shape         string       `json:"shape"`
	Session       string       `json:"session"`
	MessageID     string       `json:"message_id"`
	PartID        string       `json:"part_id"`
	Location      JSONLocation `json:"location"`
	Fix           string       `json:"fix"`
	Fixable       bool         `json:"fixable"`
	ProviderError string       `json:"provider_error"`
	Index         string       `json:"index"`
	ErrorType     string       `json:"error_type"`
	// Suppressed findings are shown but never fail a run; the reason
	// comes from the config file's suppression.
	Suppressed        bool   `json:"suppressed"`
	SuppressionReason string `json:"suppression_reason"`
}

// JSONLocation is where a finding's record lives.
type JSONLocation struct {
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Table string `json:"table"`
	RowID int64  `json:"rowid"`
}

// JSONSummary counts the findings.
type JSONSummary struct {
	Total      int            `json:"total"`
	Suppressed int            `json:"suppressed"`
	BySeverity JSONSeverities `json:"by_severity"`
	ByCode     map[string]int `json:"by_code"`
	Fixable    int            `json:"fixable"`
	Sessions   int            `json:"sessions"`
	Stores     int            `json:"stores"`
	FailOn     string         `json:"fail_on"`
	Failing    int            `json:"failing"`
}

// JSONSeverities counts findings per severity.
type JSONSeverities struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// NewJSONFinding converts a finding to its JSON form.
func NewJSONFinding(f scan.Finding) JSONFinding {
	jf := JSONFinding{
		Code:      f.Code,
		Rule:      f.Rule,
		Severity:  f.Severity.String(),
		Message:   f.Message,
		Store:     f.StorePath,
		Shape:     string(f.Shape),
		Session:   f.SessionID,
		MessageID: f.MessageID,
		PartID:    f.PartID,
		Location: JSONLocation{
			Path:  f.Location.Path,
			Line:  f.Location.Line,
			Table: f.Location.Table,
			RowID: f.Location.RowID,
		},
		Fix:           f.Fix,
		Fixable:       fixable(f),
		ProviderError: f.ProviderError,
		Index:         f.Index,
		ErrorType:     f.ErrorType,
	}
	if f.Suppression != nil {
		jf.Suppressed, jf.SuppressionReason = true, f.Suppression.Reason
	}
	return jf
}

// NewJSONDocument converts a report to the JSON document.
func NewJSONDocument(r *Report) *JSONDocument {
	doc := &JSONDocument{
		Version:       r.Version,
		SchemaVersion: SchemaVersion,
		Stores:        []JSONStore{},
		Findings:      []JSONFinding{},
	}
	for _, sr := range r.stores() {
		js := JSONStore{
			Shape:    string(sr.Info.Shape),
			Path:     sr.Info.Path,
			Notes:    append([]string{}, sr.Info.Notes...),
			Sessions: []JSONSession{},
		}
		if sr.Err != nil {
			js.Error = sr.Err.Error()
		}
		for _, s := range sr.Sessions {
			js.Sessions = append(js.Sessions, JSONSession{
				ID: s.ID, Title: s.Title, Messages: s.Messages, Parts: s.Parts, Findings: s.Findings, InUse: s.InUse,
			})
		}
		doc.Stores = append(doc.Stores, js)
	}
	for _, f := range r.all() {
		doc.Findings = append(doc.Findings, NewJSONFinding(f))
	}
	s := r.Summarize()
	doc.Summary = JSONSummary{
		Total:      s.Total,
		Suppressed: s.Suppressed,
		BySeverity: JSONSeverities{Error: s.Error, Warning: s.Warning, Info: s.Info},
		ByCode:     map[string]int{},
		Fixable:    s.Fixable,
		Sessions:   s.Sessions,
		Stores:     s.Stores,
		FailOn:     r.failOnString(),
		Failing:    s.Failing,
	}
	for _, c := range s.ByCode {
		doc.Summary.ByCode[c.Code] = c.Count
	}
	return doc
}

type jsonPrinter struct{}

// Print writes the document indented by two spaces, ending in a newline.
func (jsonPrinter) Print(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(NewJSONDocument(r))
}

package scan

import (
	"strings"

	"github.com/sessfix/sessfix/pkg/ocschema"
)

var ruleSF207 = &Rule{
	Code:     SF207,
	Name:     "undecodable-record",
	Severity: Error,
	Summary:  "a message or part does not fit opencode's schema and has no safe repair",
	What: "A stored message or part that OpenCode 1.18's schema rejects in a way no default repairs: a missing " +
		"key that carries the conversation or identity (a text part's `text`, a tool's `callID`, `tool` or " +
		"`state`, a completed tool's `output`, a file's `url`, a message's role), a value of the wrong JSON " +
		"type, a fractional number where OpenCode wants an integer, a negative count, a string outside its " +
		"allowed values, or a tool state `status` or error `name` OpenCode does not know. The finding names " +
		"every such key of the record with what the schema wants. Keys other rules own are left to them: a " +
		"part type OpenCode does not have (SF205), a `parentID` naming no message (SF209).",
	Why: "One record that does not fit makes OpenCode 1.18 answer `GET /session/:id/message` with HTTP 400: " +
		"the TUI, the desktop app and the web UI cannot open the session, and `opencode run --session` fails. " +
		"Shown on real OpenCode 1.18.33 for every key of every record type (docs/opencode-invariants.md).",
	ProviderError: "OpenCode 1.18.33, GET /session/:id/message: 400 Missing key at [1][\"parts\"][2][\"text\"] " +
		"(or \"Expected string, got 5\", \"Expected an integer, got 1.5\", \"Expected ToolState, got {…}\")",
	Marks: []string{"missing key at", "expected string, got", "expected an integer, got", "expected toolstate, got", `]["info"]`, `]["parts"]`},
	FixDoc: "Report only. What is missing or mistyped here is conversation content or a value sessfix cannot " +
		"know; writing one would invent history. Restore the record from a backup or the tool that wrote it, " +
		"or remove it by hand (`sessfix backups` keeps what sessfix changed). Missing bookkeeping keys of the " +
		"same record are still filled by SF206's repair.",
	Fixable: false,
	Check:   checkUndecodableRecords,
}

func checkUndecodableRecords(c *Context) {
	for _, r := range c.SchemaOf() {
		if len(r.Left) == 0 {
			continue
		}
		f := At(r.Message, r.Part)
		var what []string
		for _, p := range r.Left {
			what = append(what, describeProblem(p))
		}
		f.Message = r.Kind() + " does not fit opencode 1.18's schema (" + strings.Join(what, "; ") +
			"), so opencode cannot open the session; no safe value exists to write"
		f.ProviderError = r.OpenCodeError(r.Left[0])
		c.Report(f)
	}
}

// describeProblem is a problem with its path, in a finding's words.
func describeProblem(p ocschema.Problem) string {
	path := p.Path
	if path == "" {
		path = "the record"
	}
	switch p.Kind {
	case ocschema.Missing:
		return path + " is missing"
	case ocschema.UnknownVariant:
		if p.Got == "" {
			return path + " is missing"
		}
		return path + " is " + p.Got + ", not " + p.Want
	}
	return path + ": " + p.Message()
}

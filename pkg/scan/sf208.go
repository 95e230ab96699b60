package scan

import (
	"github.com/sessfix/sessfix/pkg/ocschema"
	"github.com/sessfix/sessfix/pkg/opencode"
)

var ruleSF208 = &Rule{
	Code:     SF208,
	Name:     "unservable-key",
	Severity: Error,
	Summary:  "a record holds a key opencode 1.18 cannot serve, whatever its value",
	What: "A key OpenCode's published schema allows but its server cannot encode back from storage (" +
		quirkList() + "). A user message's `format` asks for structured output for that one prompt; third-party " +
		"clients and the SDK write it.",
	Why: "OpenCode 1.18.33 answers `GET /session/:id/message` with HTTP 400 for any record with the key, " +
		"whatever its value (`Expected OutputFormatText, got {\"type\":\"text\"}`), so the TUI, the desktop app " +
		"and the web UI cannot open the session. Observed on real OpenCode 1.18.33 (docs/opencode-invariants.md).",
	ProviderError: "OpenCode 1.18.33, GET /session/:id/message: 400 Expected OutputFormatText, got {\"type\":\"text\"} " +
		"at [0][\"info\"][\"format\"]",
	Marks: []string{"expected outputformat", `]["info"]`, `]["parts"]`},
	FixDoc: "`dropUnservableKey` removes the key (the record is backed up first, restorable with `undo`); " +
		"every other byte stays. A past prompt's output format changes nothing later in the session, and " +
		"without the key the session loads again (shown on real OpenCode 1.18.33).",
	Fixable: true,
	Fix:     "dropUnservableKey",
	Check:   checkUnservableKeys,
}

func quirkList() string {
	var s string
	for i, q := range ocschema.Quirks() {
		if i > 0 {
			s += ", "
		}
		s += "`" + q.Key + "` of " + q.Object
	}
	return s
}

func checkUnservableKeys(c *Context) {
	reportKeys(c, func(r *opencode.RecordSchema) []ocschema.Problem { return r.Unservable },
		"has", "which opencode 1.18 cannot serve whatever its value, so it cannot open the session")
}

package scan

import (
	"github.com/sessfix/sessfix/pkg/ocschema"
	"github.com/sessfix/sessfix/pkg/opencode"
)

var ruleSF206 = &Rule{
	Code:     SF206,
	Name:     "missing-record-key",
	Severity: Error,
	Summary:  "a message or part lacks a key opencode's schema requires, one that has a safe default",
	What: "A stored message or part without a key OpenCode 1.18's schema requires (or with null there), where " +
		"the key is bookkeeping OpenCode fills in itself: a user message's `agent`, `model` or `time`, an " +
		"assistant message's `parentID`, `modelID`, `providerID`, `mode`, `agent`, `path`, `cost`, `tokens` or " +
		"`time`, a text or reasoning part's `time`, a `step-finish` part's `reason`, `cost` or `tokens`, a " +
		"tool state's `input`, `title`, `metadata` or `time`, a retry part's `time`, an API error's " +
		"`isRetryable`. Older OpenCode versions and other tools wrote such records. The finding names every " +
		"such key of the record (as a JSON path) and the error OpenCode answers for the first one.",
	Why: "OpenCode 1.18 checks every record against its schema when it serves a session (`GET " +
		"/session/:id/message`, which the TUI, the desktop app and the web UI load): one record that does not " +
		"fit makes the whole answer HTTP 400 and the session cannot be opened; `opencode run --session` fails " +
		"with `UnknownError` before calling the provider. Shown on real OpenCode 1.18.33 for every key " +
		"(docs/opencode-invariants.md).",
	ProviderError: "OpenCode 1.18.33, GET /session/:id/message: 400 Missing key at [0][\"info\"][\"agent\"]",
	Marks:         []string{"missing key at", `]["info"]`, `]["parts"]`},
	FixDoc: "`backfillSchemaFields` writes the value OpenCode itself writes for each missing key, derived from " +
		"the record's place in the session (a user message's `model` is its reply's, an assistant message's " +
		"`parentID` the closest user message before it, times the record's own creation time, counts and costs " +
		"zero, `agent` `build` when nothing names one): the table in docs/opencode-invariants.md, each default " +
		"shown to make the session load again on real OpenCode 1.18.33. Only the missing keys are written; " +
		"every other byte of the record stays. A key whose default cannot be derived (no model anywhere in " +
		"the session, no creation time) is reported by SF207 instead.",
	Fixable: true,
	Fix:     "backfillSchemaFields",
	Check:   checkMissingRecordKeys,
}

func checkMissingRecordKeys(c *Context) {
	reportKeys(c, func(r *opencode.RecordSchema) []ocschema.Problem { return r.Filled },
		"lacks", "which opencode 1.18 requires, so it cannot open the session")
}

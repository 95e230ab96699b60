package scan

import "github.com/sessfix/sessfix/pkg/opencode"

var ruleSF205 = &Rule{
	Code:     SF205,
	Name:     "foreign-part-type",
	Severity: Error,
	Summary:  "a part has a type opencode does not have",
	What: "A part whose `type` is not one of OpenCode's: text, reasoning, tool, step-start, step-finish, file, " +
		"patch, snapshot, agent, subtask, retry, compaction. Types such as `thinking`, `redacted_thinking`, " +
		"`tool_use` and `tool_result` come from other repair tools that wrote provider block shapes into " +
		"OpenCode's store.",
	Why: "OpenCode 1.18 cannot serve a session holding one: `GET /session/:id/message` answers HTTP 400 " +
		"(`Expected Part, got {…}`), so the TUI, the desktop app and the web UI cannot open it (observed on real " +
		"OpenCode 1.18.33). OpenCode also ignores these parts when it builds a request, so whatever they were " +
		"meant to repair is not repaired.",
	ProviderError: "OpenCode 1.18.33, GET /session/:id/message: 400 Expected Part, got {\"type\":\"thinking\",…} at [1][\"parts\"][0]",
	Marks:         []string{"expected part, got", `]["info"]`, `]["parts"]`},
	FixDoc:        "`deletePart` removes the part (backed up first, restorable with `undo`).",
	Fixable:       true,
	Fix:           "deletePart",
	Check:         checkForeignPart,
}

func checkForeignPart(c *Context) {
	for _, m := range c.Session.Messages {
		for _, p := range m.Parts {
			if opencode.IsOpenCodePartType(p.Type) {
				continue
			}
			f := At(m, p)
			f.Message = "part type " + quote(p.Type) + " is not an opencode type; opencode 1.18 cannot open the session, and ignores the part when it sends it"
			c.Report(f)
		}
	}
}

package scan

func init() {
	register(&Rule{
		Code:     "SF205",
		Name:     "foreign-part-type",
		Severity: Warning,
		Summary:  "a part has a type opencode does not have",
		What: "A part whose `type` is not one of OpenCode's: text, reasoning, tool, step-start, step-finish, file, " +
			"patch, snapshot, agent, subtask, retry, compaction. Types such as `thinking`, `redacted_thinking`, " +
			"`tool_use` and `tool_result` come from other repair tools that wrote provider block shapes into " +
			"OpenCode's store.",
		Why: "OpenCode ignores these parts when it builds a request, so whatever they were meant to repair is not " +
			"repaired, and the session can look healthy to other checks while the provider sees something else.",
		FixDoc:  "`deletePart` removes the part (backed up first, restorable with `undo`).",
		Fixable: true,
		Fix:     "deletePart",
		Check:   checkForeignPart,
	})
}

// OpenCodePartTypes are the part types real OpenCode writes.
var OpenCodePartTypes = []string{
	"text", "reasoning", "tool", "step-start", "step-finish", "file",
	"patch", "snapshot", "agent", "subtask", "retry", "compaction",
}

// IsOpenCodePartType reports whether t is one of OpenCodePartTypes.
func IsOpenCodePartType(t string) bool {
	for _, k := range OpenCodePartTypes {
		if k == t {
			return true
		}
	}
	return false
}

func checkForeignPart(c *Context) {
	for _, m := range c.Session.Messages {
		for _, p := range m.Parts {
			if IsOpenCodePartType(p.Type) {
				continue
			}
			f := At(m, p)
			f.Message = "part type " + quote(p.Type) + " is not an opencode type; opencode ignores it"
			c.Report(f)
		}
	}
}

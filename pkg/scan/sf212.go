package scan

import "github.com/sessfix/sessfix/pkg/opencode"

var ruleSF212 = &Rule{
	Code:     SF212,
	Name:     "project-mismatch",
	Severity: Error,
	Summary:  "the session's project row is missing, or is not the one opencode lists its directory under",
	What: "In an OpenCode database: a session whose `project_id` names no `project` row (an error: a project " +
		"row deleted by hand or by another tool, a database merged from two), or names a row other than the " +
		"project OpenCode resolves the session's directory to (a warning: a second row for the same worktree " +
		"shadowing the real one, or a repository whose history was rewritten or whose `.git` was removed; " +
		"OpenCode issues #8661, #36464). OpenCode resolves a directory outside git to the project `global`, " +
		"and a git repository to the id of its first commit, which it caches in `.git/opencode`; sessfix reads " +
		"that cache and never runs git, so a repository OpenCode has not run in, or a directory that does not " +
		"exist on this machine, is not judged.",
	Why: "OpenCode lists the sessions of the project it resolves for the current directory, so the session is " +
		"missing from `opencode session list`, the TUI's session list and the server's `GET /session`, and users " +
		"take it for lost; it still loads by id. On a duplicate row it also still resumes: only the lists " +
		"leave it out (observed on OpenCode 1.18.33, whose runs update the resolved project's row and leave " +
		"the duplicate as it is). With no project row at all, `opencode run --session` also " +
		"fails: OpenCode updates the session row and SQLite answers `FOREIGN KEY constraint failed` (observed " +
		"on OpenCode 1.18.33).",
	ProviderError: "OpenCode 1.18.33, opencode run --session: UnknownError: Unexpected server error (log: SQLiteError: FOREIGN KEY constraint failed)",
	Marks:         []string{"foreign key constraint failed"},
	FixDoc: "`setSessionProject` sets the session row's `project_id` to the project the finding names, the one " +
		"OpenCode resolves the session's directory to, when that project has a row: OpenCode lists the session " +
		"again and resumes it (shown on OpenCode 1.18.33, for a missing row and for a duplicate one). Only that " +
		"column changes (not `time_updated`), and `sessfix undo` puts the row back. Project rows are never " +
		"changed or deleted: a duplicate row stays, and OpenCode leaves it alone (remove it by hand if you " +
		"want it gone, after checking no session names it). When the resolved project has no row yet, or the directory cannot be " +
		"resolved here, the finding is report only: sessfix never invents a project row. Running OpenCode once " +
		"in the session's directory makes the row (then `sessfix fix` repairs the session), or by hand, with " +
		"OpenCode closed, `sqlite3 ~/.local/share/opencode/opencode.db \"UPDATE session SET project_id = " +
		"'PROJECT' WHERE id = 'SESSION'\"` after a copy of the database (`opencode db path` prints where it " +
		"is). OpenCode still serves the session by id meanwhile (`GET /session/:id/message` answers 200).",
	Fixable: true,
	Fix:     "setSessionProject",
	Check:   checkSessionProject,
}

func checkSessionProject(c *Context) {
	s := c.Session
	project, rows, res, ok := opencode.SessionProject(s, c.Opts.OpenCode)
	if !ok {
		return
	}
	f := Finding{Location: s.Info.Loc}
	switch {
	case !rows[project]:
		f.Message = "its project " + project + " has no project row: opencode lists it under no project and cannot resume it"
		if res.ID != "" {
			f.Message += "; its directory resolves to project " + res.ID
			if !rows[res.ID] {
				f.Message += " (no row yet: opencode makes it when it next runs there)"
			}
		}
	case res.ID != "" && res.ID != project:
		f.Severity = Warning
		f.Message = "opencode lists the sessions of " + s.Info.Get("directory").Str + " under project " + res.ID +
			", not under this session's project " + project + ", so its session list leaves this one out"
	default:
		return
	}
	if _, ok := opencode.ProjectRepair(s, c.Opts.OpenCode); !ok {
		c.reportNoFix(f)
		return
	}
	c.Report(f)
}

package scan

import (
	"github.com/sessfix/sessfix/pkg/ocenv"
)

func init() {
	register(&Rule{
		Code:     "SF212",
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
			"take it for lost; it still loads by id. With no project row at all, `opencode run --session` also " +
			"fails: OpenCode updates the session row and SQLite answers `FOREIGN KEY constraint failed` (observed " +
			"on OpenCode 1.18.33).",
		ProviderError: "OpenCode 1.18.33, opencode run --session: UnknownError: Unexpected server error (log: SQLiteError: FOREIGN KEY constraint failed)",
		FixDoc: "Report only: sessfix does not write session rows yet. Setting the session's `project_id` to the " +
			"project the finding names makes OpenCode list it again, and resume it (shown on OpenCode 1.18.33): with " +
			"OpenCode closed, `sqlite3 ~/.local/share/opencode/opencode.db \"UPDATE session SET project_id = " +
			"'PROJECT' WHERE id = 'SESSION'\"` after a copy of the database (`opencode db path` prints where it " +
			"is). OpenCode still serves the session by id meanwhile (`GET /session/:id/message` answers 200).",
		Check: checkSessionProject,
	})
}

func checkSessionProject(c *Context) {
	s := c.Session
	if s.Info == nil || s.Projects == nil {
		return
	}
	project := s.Info.Get("project_id").Str
	if project == "" {
		return
	}
	rows := map[string]bool{}
	for _, p := range s.Projects {
		rows[p.ID] = true
	}
	var res ocenv.Resolution
	if c.Opts.OpenCode != nil {
		res = c.Opts.OpenCode.Project(s.Info.Get("directory").Str)
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
	c.Report(f)
}

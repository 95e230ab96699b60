package scan

import "strings"

var ruleSF403 = &Rule{
	Code:      SF403,
	Name:      "hidden-by-project",
	Severity:  Warning,
	OpenCode2: true,
	Summary:   "an opencode 2 session is filed under the catch-all project global, so its directory's session list leaves it out",
	What: "In an OpenCode 2 database: a session of `session_v2` whose `project_id` is `global` while its " +
		"directory is not the root. OpenCode 1.x filed the sessions of directories outside a git repository " +
		"under `global`, and OpenCode 2's import keeps the project it finds (and moves a session whose " +
		"project row is gone to `global`). OpenCode 2 gives every directory a project of its own (its " +
		"repository's, or one made from the directory's path) and lists the sessions of the current " +
		"project, so these are not listed (#50800, #49827, #50521, #50551). The finding names the project " +
		"OpenCode 2 made for the directory when the database has it.",
	Why: "The session is intact but missing from `/sessions` and `opencode session list` in its directory, " +
		"so users take it for lost.",
	FixDoc: "Report only: sessfix never writes an OpenCode 2 database, so it does not move the session to the " +
		"directory's project (`session_v2.project_id`): whether OpenCode 2 keeps such an edit or rebuilds the " +
		"row from its events cannot be checked without an OpenCode 2 build. What users report works (not " +
		"confirmed here): the TUI's session picker lists every project's sessions once switched to \"Show all " +
		"project sessions\" (#50551), and OpenCode 2's server answers `GET /api/session?directory=DIR` with " +
		"them (#50800). Resetting `kv['migration.v1-v2']` does not help (the import keeps the project) and " +
		"loses data (see SF401).",
	Check: checkHiddenByProject,
}

func checkHiddenByProject(c *Context) {
	s := c.Session
	oc := s.OpenCode2
	if oc == nil || !oc.V2 || s.Info == nil || s.Info.Get("project_id").Str != "global" {
		return
	}
	dir := s.Info.Get("directory").Str
	if dir == "" || isRoot(dir) {
		return
	}
	f := Finding{Location: s.Info.Loc}
	f.Message = "filed under the catch-all project global, so opencode 2's session list in " + dir + " leaves it out"
	if oc.DirectoryProject != "" {
		f.Message += ": opencode 2 lists project " + oc.DirectoryProject + " there"
	}
	c.Report(f)
}

// isRoot reports whether dir is a filesystem root ("/", "C:\"): the
// worktree of OpenCode's global project.
func isRoot(dir string) bool {
	d := strings.TrimRight(dir, `/\`)
	return d == "" || len(d) == 2 && d[1] == ':'
}

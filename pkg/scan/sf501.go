package scan

import (
	"fmt"
	"strings"
)

var ruleSF501 = &Rule{
	Code:     SF501,
	Name:     "damaged-database",
	Severity: Error,
	Summary:  "the database fails sqlite's integrity check, or sql cannot open it at all",
	What: "An OpenCode SQLite database (1.x or OpenCode 2) whose `PRAGMA quick_check` reports damage " +
		"(`sessfix scan --deep`: the full `PRAGMA integrity_check`, which also checks every index against its " +
		"table), or that SQL cannot open at all because its schema page (page 1, `sqlite_schema`) or its " +
		"header is damaged, even gone (a file that no longer starts with \"SQLite format 3\" but whose pages are " +
		"laid out as a database's). The finding names the tables and indexes the check's report is about and how many " +
		"of the listed sessions could still be read. A crash, a kill in the middle of a write, a full disk or " +
		"a synced or network folder leave a database like this (#30157, #37821, #14970, #37495, #48416, " +
		"#21215, #49221, #42263).",
	Why: "OpenCode stops on the first statement that touches a damaged page: every session may be gone " +
		"from its point of view although most rows are intact on their own pages. Writing into a damaged " +
		"database can spread the damage, so sessfix's writer refuses it.",
	ProviderError: "SQLiteError: database disk image is malformed\nSQLITE_CORRUPT\nfile is not a database",
	FixDoc: "With OpenCode closed, `sessfix fix` backs up the database, its -wal and -shm byte for byte and " +
		"salvages it (`salvageDatabase`): every row SQLite can still read (or, when the schema page is lost, that " +
		"the raw pages hold; a file whose bytes then name an OpenCode 2 table, `session_v2`, is not salvaged, " +
		"since sessfix never writes OpenCode 2 databases) is copied into a new file beside the database, which must pass integrity_check, " +
		"and the new file replaces the database and its old -wal and -shm in one step that a killed run " +
		"finishes or puts back. When only indexes are damaged it rebuilds them in place instead " +
		"(`reindexDatabase`). `fix --dry-run` runs the salvage into a temporary file and names the sessions, " +
		"messages and parts it would lose; `sessfix undo RUN` puts the original files back. Fix refuses " +
		"(exit 4) while OpenCode or another program has the database open. `fix --session ID` repairs no " +
		"session of a damaged database (exit 3: the repair would be written into a damaged file): run " +
		"`sessfix fix` on the database first.",
	Fixable:    true,
	Fix:        "salvageDatabase|reindexDatabase",
	StoreCheck: checkDamagedDatabase,
}

func checkDamagedDatabase(c *StoreContext) {
	h := c.Health
	if !h.Damaged() {
		return
	}
	truncated := ""
	if h.HeaderSize > h.Size {
		truncated = fmt.Sprintf("; the file is truncated: %d bytes where its header says %d", h.Size, h.HeaderSize)
	}
	if h.Unopenable != "" {
		c.Report(Finding{Message: "sql cannot open the database: " + h.Unopenable + truncated +
			"; its schema cannot be read, so no session can be listed or read through sql"})
		return
	}
	what := h.Problems[0]
	if n := len(h.Problems) - 1; n > 0 {
		what += fmt.Sprintf(" (and %d more)", n)
	}
	msg := fmt.Sprintf("the database is damaged: sqlite's %s fails (%s)", h.Check, what)
	if len(h.Affected) > 0 {
		msg += "; affected: " + strings.Join(h.Affected, ", ")
	}
	msg += truncated
	if c.Listed >= 0 {
		msg += fmt.Sprintf("; %d of %d sessions could be read", c.Readable, c.Listed)
	}
	c.Report(Finding{Message: msg})
}

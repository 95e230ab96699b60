package scan

import "fmt"

// Free space SF504 reports: more than freeShare of the pages free, and at
// least freeMinimum bytes of them.
const (
	freeShare   = 0.5
	freeMinimum = 16 << 20
)

var ruleSF504 = &Rule{
	Code:     SF504,
	Name:     "free-space",
	Severity: Info,
	Summary:  "most of the database's pages are free",
	What: "More than half of the database's pages are on its free list (`PRAGMA freelist_count` against " +
		"`PRAGMA page_count`), and at least 16 MiB of them: space left by deleted sessions that SQLite " +
		"keeps for reuse rather than give back to the disk.",
	Why: "Nothing breaks: the file is only larger than its data. It is worth knowing when the disk is full.",
	FixDoc: "A plain `sessfix fix` leaves it: the repair rewrites the whole file, for space that breaks nothing, so " +
		"it runs only on request, with the rule named in full: `sessfix fix --select SF504` (or `select: [SF504]` " +
		"in a config file; a prefix such as SF5 does not ask for it) rewrites the database without its free pages " +
		"(`vacuumDatabase`: SQLite's `VACUUM`, then a checkpoint that truncates the log), in a backup run holding " +
		"the database, its -wal and -shm byte for byte; `sessfix undo RUN` puts them back. It needs free disk " +
		"space the size of the database, and refuses (exit 4, nothing changed) while OpenCode has the database " +
		"open or another sessfix holds the store. A damaged database (SF501) or an oversized log (SF502) is " +
		"repaired first; the vacuum follows at the next run.",
	StoreCheck: checkFreeSpace,
}

func checkFreeSpace(c *StoreContext) {
	h := c.Health
	if h.PageCount == 0 || float64(h.FreePages) <= freeShare*float64(h.PageCount) || h.FreePages*h.PageSize < freeMinimum {
		return
	}
	c.Report(Finding{Message: fmt.Sprintf("%d of the database's %d pages (%s) are free", h.FreePages, h.PageCount, mib(h.FreePages*h.PageSize))})
}

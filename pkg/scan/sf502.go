package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/store"
)

// WAL sizes SF502 reports: larger than walFactor times the database and
// than walMinimum.
const (
	walFactor  = 4
	walMinimum = 64 << 20
)

var ruleSF502 = &Rule{
	Code:     SF502,
	Name:     "oversized-wal",
	Severity: Warning,
	Summary:  "the database's write-ahead log is far larger than the database while no program holds it",
	What: "The database's `-wal` file is larger than 4 times the database and larger than 64 MiB while no " +
		"other program has the database open. SQLite folds the log back into the database at a checkpoint; " +
		"a log this size means checkpoints stopped completing (a reader held open for days, a crash), and " +
		"users report logs of 10–15 GB that never shrink. While OpenCode (or another program) has the " +
		"database open the log is its to checkpoint, and the rule says nothing.",
	Why: "Every read goes through the log's index: OpenCode starts slowly or not at all, and the disk fills.",
	FixDoc: "`sessfix fix` backs up the database, its -wal and -shm byte for byte and folds the log into the " +
		"database (`checkpointWAL`: SQLite's `PRAGMA wal_checkpoint(TRUNCATE)`), which empties it; " +
		"`sessfix undo RUN` puts the original files back. It refuses (exit 4) when another program has the " +
		"database open, and never checkpoints into a damaged database (SF501 is repaired first).",
	Fixable:    true,
	Fix:        "checkpointWAL",
	StoreCheck: checkOversizedWAL,
}

func checkOversizedWAL(c *StoreContext) {
	h := c.Health
	if h.WALSize <= walMinimum || h.WALSize <= walFactor*h.Size {
		return
	}
	if st, ok := c.activity(); ok && st != store.ActivityNone {
		return
	}
	c.Report(Finding{
		Message:  fmt.Sprintf("the write-ahead log is %s, %s the database's %s, and no program holds it", mib(h.WALSize), times(h.WALSize, h.Size), mib(h.Size)),
		Location: store.Location{Path: h.Path + "-wal"},
	})
}

// times says how many times b a is: "12 times".
func times(a, b int64) string {
	if b == 0 {
		return "many times"
	}
	return fmt.Sprintf("%d times", a/b)
}

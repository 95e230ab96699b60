// Package write is the run every command that writes stores shares (fix,
// drop, rewind, fork): decide whether to write (--dry-run, a question on
// a terminal, --yes), begin a write transaction on each store before
// planning (fix.Tx: the writer lock, or none in a dry run), show the plans
// or their diff, ask, apply each store's plans in one backup run with its
// read-back, and say how to undo what was written. A command brings its
// planner and its own words; what the flow says, it says here once.
package write

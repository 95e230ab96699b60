// Package surgery does to one OpenCode session what a user asks for by
// name, rather than what a rule finds: list the sessions of the stores
// (List), show one as stored and as OpenCode would send it (Show), and
// plan precise cuts: drop messages or parts (PlanDrop), discard everything
// after a message (PlanRewind); and copy a session's history into a new
// session of the same store (PlanFork).
//
// A cut is data, like a repair: each planner returns a fix.SessionPlan
// whose change set holds every edit (store.Edit with the exact Before
// bytes), computed from the loaded session before anything is written.
// The commands run it through fix.Pipeline, the one repair pipeline (the
// settle policy's busy check, the writer lock, a backup run, the atomic
// apply and the read-back), so `sessfix undo` reverts it byte for byte.
//
// Guarantees:
//   - A plan keeps what OpenCode relies on consistent (docs/surgery.md):
//     the parts of a dropped message go with it; an assistant reply whose
//     user message is dropped goes too, or points at the closest earlier
//     user message; a cut that removes where the session's pending revert
//     or a compaction's kept tail (tail_start_id) starts, or leaves a
//     message without parts or no message at all, is refused. A cut never
//     writes the session record.
//   - A fork only adds: a session record, messages and parts with fresh
//     ids minted as OpenCode mints them (store.IDSeq), every reference to
//     a copied record rewritten, nothing of the original touched. Its
//     record drops what belongs to the original alone (parent, share
//     link, pending revert, change summary, compaction and archive times).
//   - A plan is checked in memory before it is returned: the edits are
//     applied to a copy of the session (fix.ApplyInMemory) and every rule
//     runs on the result. A cut that would leave an error the session did
//     not have (a thinking-only answer, a tool call without its result) is
//     refused with the finding that says why; nothing is written.
//   - Nothing here writes. Show and List only read.
package surgery

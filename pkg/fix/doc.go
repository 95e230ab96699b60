// Package fix plans repairs of OpenCode sessions from scan findings.
//
// A repair is data: Plan turns a loaded session and its findings into one
// store.ChangeSet of edits (update a record's JSON paths, add a part, delete,
// re-key or quarantine a record), computed before anything is written. Each
// edit comes from a named mutation (the brief's prependThinkingPart,
// replaceEmptyTextParts, stripThinkingParts and injectTextPart, and sessfix's
// markToolAborted, markToolCutOff, moveThinkingFirst, markMessageAborted, excludeMessage,
// finishFailedCompaction,
// adoptCurrentModel (with prependThinkingPart, for DeepSeek and Kimi),
// deletePart, quarantine and rekey, and the session row's setSessionProject
// and setSessionModel), each a pure function of the session.
//
// Pipeline is the one repair pipeline `sessfix fix` and `sessfix watch` run
// on: list a store's sessions (Targets), load, check, drop suppressed
// findings, plan, hold back what opencode.SettlePolicy says may be in use, and
// write under the store's writer lock with a backup, verifying from disk
// (Apply, or Repair for one session at a time). Each session comes out as
// an Outcome (Clean, Planned, SkippedBusy, Held, Applied or Failed at a
// Step), in the order the sessions were given, from an ordered worker pool
// shared with scan.Run (internal/pool).
//
// Tx is the write transaction of every command that plans repairs, built
// on backup.Tx (which undo uses directly): Begin refuses a store sessfix
// never writes and takes the store's writer lock through backup.BeginTx
// (a dry run takes none and writes nothing),
// Tx.Apply backs up, applies and verifies in one backup run, Close releases
// the lock. WriteOptions.Apply is its one seam for tests to inject a
// failing write.
//
// Guarantees:
//   - Planning writes nothing; only a writing Tx does, through a store
//     Writer under the writer lock, after backing every record up.
//   - Edits of existing records change only the JSON paths they must; every
//     other byte (unknown keys, formatting) stays. New records use the
//     store's own formatting (pretty 2-space JSON for JSON shapes, compact
//     for SQLite data columns) and ids minted to sort where they must go.
//   - A plan is validated before it is returned: the edits are applied to an
//     in-memory copy of the session (ApplyInMemory) and the rules re-run; a
//     finding whose repair does not make it go away, or that brings new
//     findings, falls back to the rule's next strategy or is reported as
//     unfixed with the reason. Repairs of messages that cannot change each
//     other's findings (scan.Coupling) are validated with one check of the
//     session; the decisions are those of validating one repair after
//     another, and the merged change set is validated by a full check of
//     its result. Planning the fixed session again plans nothing.
//   - Error-driven recovery (PlanFromError) maps a provider's messages.N to a
//     stored message through one function (MapProviderIndex) and changes
//     nothing when the mapping is not exact.
package fix

// Package backup keeps sessfix's backup journal and undoes repairs.
//
// Every run that writes a store gets its own folder under the state
// directory ($SESSFIX_STATE_DIR, else $XDG_STATE_HOME/sessfix, else
// ~/.local/state/sessfix), named by a run id that sorts by time
// (20261121T153000Z-k3x9qa):
//
//	backups/<run>/manifest.json      what the run changed and how to put it back
//	backups/<run>/before/0001-part-prt_….json  the exact bytes before the run
//
// Folders are 0700 and files 0600. The manifest is replaced atomically.
//
// Guarantees:
//   - Record writes and fsyncs the before image of everything a change set
//     will touch (files, or whole SQLite rows with every column) before the
//     writer changes anything; a change set whose backup fails is not applied.
//   - Undo restores byte for byte: files get their old bytes and mode back,
//     deleted and quarantined records are re-created, added ones removed;
//     SQLite rows get back every column, in one transaction.
//   - Undo refuses, and restores nothing, when a record no longer has the
//     bytes sessfix wrote (OpenCode or a person changed it since), unless
//     forced; it reports which records. Undoing a run twice is a no-op.
//   - Every write goes through a Tx (BeginTx): fix, drop, rewind, fork and
//     watch apply change sets in one (through pkg/fix's Tx), undo restores
//     runs in one. A writing Tx holds the store's writer lock, taken by
//     Lock, the one place sessfix takes it, which first rolls back what a
//     killed sessfix left half-written; a dry-run Tx takes no lock. The
//     package's Apply expects the caller to hold the lock.
//   - A database-level change (ApplyDatabase: a salvage swapped in, a
//     reindex or a checkpoint) backs up the database, its -wal and -shm
//     whole, byte for byte, before it writes; a run killed at any step is
//     finished or put back by the next Lock; undo puts the three files
//     back, refusing a database changed since unless forced, and any
//     database another program has open.
//
// Failures the user can act on are typed (StateDirError, JournalError,
// StoreGoneError, RefusedError) and carry the facts advice needs; the
// command turns them into hints.
package backup

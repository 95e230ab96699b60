// Package store reads (and, through Writer, repairs) OpenCode session stores in
// every on-disk shape sessfix supports: the SQLite database of OpenCode 1.2 and
// later, the JSON storage/ tree of 1.0–1.1, the oldest per-project tree, the
// sessions/ layout used for fixtures, and `opencode export` files.
//
// Guarantees:
//   - Reading never writes: SQLite is opened read-only, JSON files are only read.
//     Only a StoreWriter (OpenWriter) changes a store, and only by
//     applying a ChangeSet whose Before bytes still match: JSON files through
//     a temp file, fsync, rename and directory fsync; SQLite in one
//     transaction per session. AcquireLock keeps sessfix writers apart.
//   - Every record keeps its raw bytes exactly as stored, so later edits can be
//     byte-surgical, and its location (file path and line, or table and rowid).
//   - Sessions are loaded one at a time; memory is bounded by the largest
//     session, not the store.
//   - Symlinks that leave the store are never followed; unreadable records are
//     returned as Broken records, never dropped silently.
//
// Errors callers act on are typed (ChangedError, HeldError, BusyError,
// WriteError) and carry facts, not advice: the command phrases the hints.
//
// The package knows nothing about rules; it hands sessions to pkg/scan and
// applies change sets planned by pkg/fix (pkg/backup journals them first).
package store

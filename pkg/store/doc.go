// Package store is what every storage shape shares: the model of a loaded
// session (Session, Message, Part, Record with its raw bytes and Location),
// the Store and Writer interfaces each shape implements, change sets (the
// edits pkg/fix plans and a Writer applies), OpenCode's record ids, the
// errors callers act on, and the sessfix writer lock.
//
// The shapes themselves live in sub-packages, one per on-disk layout:
// sqlite (OpenCode 1.2+), jsonfs (the storage/ tree of 1.0–1.1, the
// per-project tree of ≤0.5, the sessions/ layout), export (`opencode
// export` files). Package shapes finds stores and registers every shape;
// nothing here imports them (see docs/architecture.md).
//
// Guarantees every shape keeps:
//   - Reading never writes: SQLite is opened read-only, JSON files are only
//     read. Only a Writer changes a store, and only by applying a ChangeSet
//     whose Before bytes still match: JSON files through a temp file,
//     fsync, rename and directory fsync; SQLite in one transaction per
//     session. AcquireLock keeps sessfix writers apart.
//   - Session records are written like messages and parts: a session
//     file in the JSON shapes, the columns of a session row in SQLite
//     (mapped from and to the JSON object of its columns the reader
//     builds; see pkg/store/sqlite). An added session has an id in
//     OpenCode's descending format (NewSessionID).
//   - Every record keeps its raw bytes exactly as stored, so later edits can
//     be byte-surgical, and its location (file path and line, or table and
//     rowid).
//   - Sessions are loaded one at a time; memory is bounded by the largest
//     session, not the store.
//   - Symlinks that leave the store are never followed; unreadable records
//     are returned as Broken records, never dropped silently.
//
// Errors callers act on are typed (ChangedError, HeldError, BusyError,
// WriteError) and carry facts, not advice: the command phrases the hints.
//
// The package knows nothing about rules; it hands sessions to pkg/scan and
// applies change sets planned by pkg/fix (pkg/backup journals them first).
package store

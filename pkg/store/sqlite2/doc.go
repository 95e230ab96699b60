// Package sqlite2 reads OpenCode 2's databases: an opencode.db (or
// $OPENCODE_DB, or a channel's opencode-*.db) holding OpenCode 2's
// session_v2 and session_message tables, usually next to the 1.x tables
// (session, message, part) OpenCode 2 imported its sessions from once.
//
// The reader opens the database read-only (pkg/store/internal/sqlitedb,
// as pkg/store/sqlite does) and reads each session in one read
// transaction. Every session either table holds is listed once; a session
// in session_v2 is loaded as OpenCode 2 has it (its session_message rows
// in seq order, an assistant message's content items as parts), with its
// 1.x rows attached as the frozen copy it was imported from; a session
// only in the 1.x tables is loaded from them as a 1.x database is. What
// the database says about the import and the session's project is in
// store.OpenCode2. The message types and content items are read as the
// source of OpenCode 2 defines them (packages/core/src/session/message.ts
// of anomalyco/opencode); the reader does not judge them: pkg/scan reports
// what it does not understand.
//
// sessfix never writes such a database: no OpenCode 2 build can be
// installed to prove a repair of its tables, and OpenCode 2 no longer reads
// its 1.x tables once it has imported them. The writer refuses every
// change set with a *store.ReadOnlyError (docs/storage-shapes.md).
//
// Shape is its entry in the shapes registry, before pkg/store/sqlite.
package sqlite2

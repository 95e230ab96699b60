// Package sqlite reads and writes the v1 tables (session, message, part)
// of OpenCode's SQLite database, 1.2 and later: opencode.db and the
// channels' opencode-*.db in OpenCode's data dir, or $OPENCODE_DB.
//
// The reader is pkg/store/internal/sqlitedb's: it opens the database
// read-only and query-only and reads each session in one read
// transaction, so it works while OpenCode has the database open in WAL
// mode and is writing; a read-only directory is read as immutable, or from
// a private snapshot copy when its write-ahead log has content. The writer
// applies one change set per IMMEDIATE transaction, foreign keys deferred
// to the commit, and restores rows with every column. Session rows have a
// column per field, not a data column: the writer maps the session body
// the reader builds back onto those columns (session.go). Both check the
// schema (checkSchema: an OpenCode 2 database, with session_v2, is
// ErrUnsupported here: pkg/store/sqlite2 reads it) and classify driver
// errors (sqlitedb.Error: a busy database is a *store.BusyError) the same
// way.
//
// Shape is its entry in the shapes registry.
package sqlite

// Package sqlitedb is what the two shapes kept in OpenCode's SQLite
// database share: opening the file read-only (with the fallbacks for a
// read-only directory: immutable, or a private snapshot copy when the
// write-ahead log has content), classifying driver errors, inspecting the
// schema, finding the databases of a data dir, and reading the 1.x tables
// (session, message, part) into the session model.
//
// pkg/store/sqlite (OpenCode 1.2 – 1.18) and pkg/store/sqlite2 (OpenCode 2,
// whose databases keep the 1.x tables frozen next to their own) are built
// on it; it imports no shape and nothing above pkg/store.
package sqlitedb

// Package salvage copies what can still be read out of a damaged SQLite
// database ("database disk image is malformed") into a new database.
//
// Salvage never writes the damaged file or anything next to it: it reads
// the file with immutable=1 (or a private snapshot copy, in the system's
// temporary directory, when its write-ahead log holds changes) and writes
// only the destination, through a temporary file in the destination's
// directory that is fsynced and renamed into place at the end, so the
// destination either does not exist or is a whole database that passes
// SQLite's integrity_check.
//
// Two ways of reading are tried in turn. The SQL way reads the schema from
// sqlite_master, creates the tables, copies each table in rowid order and,
// where a read fails part-way, searches rowid ranges around the failure
// down to single rowids, so only the rows SQLite cannot read are left out;
// indexes, triggers and views are created afterwards, so indexes are built
// from the copied rows. Rows SQLite cannot reach because an interior page
// above them is damaged are then looked for in the raw pages (below).
// When sqlite_master itself cannot be read, the page way scans every page
// of the file (and the committed frames of its write-ahead log), decodes
// the table b-tree leaf cells and assigns their records to OpenCode's
// known tables by their shape; the schema then comes from OpenCode
// 1.18.33's, embedded (schema-1.18.33.sql, with its migration rows in
// migrations-1.18.33.tsv).
//
// The Report names, per table, the rows read and the rowid ranges lost, and
// the ids of what was lost where intact indexes or surviving rows still
// name them.
//
// Reindex and Checkpoint work on the database in place; their caller has
// backed it up and holds sessfix's writer lock (pkg/backup): this package
// takes no lock.
//
// The package lives beside the sqlite shape, not inside
// pkg/store/internal/sqlitedb, because it needs only that package's
// exported opening functions; it imports nothing above pkg/store.
package salvage

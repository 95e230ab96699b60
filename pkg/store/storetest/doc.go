// Package storetest builds OpenCode session stores for tests.
//
// A Fixture describes sessions once (ids, titles, raw JSON bodies of
// messages and parts); Materialize writes them into a fresh store of any
// shape sessfix reads, laid out and formatted the way OpenCode writes that
// shape: pretty 2-space JSON files with ids inside for the JSON layouts, the
// v1 tables of OpenCode 1.18 with compact data columns without ids for
// SQLite, one pretty file for export. LoadExportFixture reads a fixture
// written as an `opencode export` file, so a rule fixture can be written once
// and materialised into every shape. Cases reads the rule fixture cases of
// testdata/sessions (an export file or a committed store tree, with their
// shapes and idle time) and Case.Open writes and opens one.
//
// Bodies that are not JSON objects (0-byte, NUL-filled, truncated files)
// are written verbatim, so damaged records can be fixtures too; the export
// shape cannot hold invalid JSON (see Supports).
package storetest

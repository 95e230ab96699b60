// Package bodyindex answers gjson lookups on a record body without scanning
// it from the start. Rules ask every part for keys it does not have
// ("ignored", "synthetic", the ids a SQLite data column lacks) or that come
// after a long text or tool output; each such gjson lookup would read the
// whole body again. An Index records where each top-level key of a body is,
// built in the same pass that validates the body (Valid), and Lookup
// answers the same as gjson.GetBytes.
//
// An index is built once, when a message or part is made (pkg/store), and
// never changes, so records stay safe to read from several goroutines.
package bodyindex

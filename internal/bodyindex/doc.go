// Package bodyindex answers gjson lookups on a record body without scanning
// it from the start. Rules ask every part for keys it does not have
// ("ignored", "synthetic", the ids a SQLite data column lacks) or that come
// after a long text or tool output; each such gjson lookup would read the
// whole body again. An Index records where each top-level key of a body is,
// and each key of a top-level object value (a part's state, a message's
// time), built in the same pass that validates the body (Valid), and Lookup
// answers the same as gjson.GetBytes: state.time.start is found without
// stepping over a tool's input and output.
//
// An index is built once, when a message or part is made (pkg/store), and
// never changes, so records stay safe to read from several goroutines.
package bodyindex

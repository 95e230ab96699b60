//go:build !unix

package sqlitedb

// diskFull cannot be told here: an I/O error stays an I/O error.
var diskFull = func(string) bool { return false }

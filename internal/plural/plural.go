// Package plural words counts in sessfix's messages: "1 session",
// "3 sessions". It is the one helper every package uses, so that the same
// count reads the same way in every command.
package plural

import "strconv"

// Count renders n with the singular or plural noun: Count(1, "edit",
// "edits") is "1 edit", Count(3, "edit", "edits") is "3 edits".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Word(n, one, many)
}

// Word returns the singular noun for 1 and the plural one otherwise.
func Word(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

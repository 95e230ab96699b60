// Package rules is the `sessfix rules` command: list every rule sessfix
// checks, as a table or JSON.
package rules

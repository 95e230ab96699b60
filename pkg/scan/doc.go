// Package scan finds what breaks OpenCode sessions. It holds the rule
// registry (one file per rule, named after its code), the checks that run over
// one loaded session, and Run, which streams every session of a set of stores
// through the rules with bounded memory and both cores.
//
// scan never writes: it reads sessions through pkg/store and returns findings
// as plain values, sorted and stable.
package scan

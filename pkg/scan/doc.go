// Package scan finds what breaks OpenCode sessions. It holds the rule
// registry (one file per rule, named after its code), the checks that run over
// one loaded session, and Run, which streams every session of a set of stores
// through the rules with bounded memory and both cores (on internal/pool, the
// ordered worker pool fix.Pipeline runs on too).
//
// SettlePolicy is sessfix's one rule for whether OpenCode may still be
// writing a session: scan's streaming check, fix's busy check and watch's
// wait and abandon decisions all consult it.
//
// The preflight (preflight*.go, rules SF150–SF169) checks the request
// OpenCode sends for a session, as pkg/sent builds it for the model's
// provider family with every block mapped back to its stored message and
// part (sent.Build, sent.Request.LocateIndex), against that family's rules.
// pkg/sent's mapping is the only one from a provider's index to storage;
// see docs/preflight.md.
//
// scan never writes: it reads sessions through pkg/store and returns findings
// as plain values, sorted and stable.
package scan

// Package scan finds what breaks OpenCode sessions. It holds the rules (one
// file per rule, named after its code), the rule list (rulelist.go: a
// constant per code and one table of the rules by family, which the
// registry is built from), the checks that run over
// one loaded session, and Run, which streams every session of a set of stores
// through the rules with bounded memory and both cores (on internal/pool, the
// ordered worker pool fix.Pipeline runs on too).
//
// What OpenCode and its providers do (parts, the settle policy, provider
// errors) is pkg/opencode's; the rules ask it.
//
// The preflight (rules SF150–SF189) checks the request OpenCode sends for a
// session, as pkg/sent builds it for the model's provider family with every
// block mapped back to its stored message and part (sent.Build,
// sent.Request.LocateIndex), against that family's rules. Each check lives
// in the file of the rule it reports (a check that reports two codes, in
// the first's); preflight*.go holds what they share: the requests built
// once per session, Violation, the providers' texts, CheckRequest.
// pkg/sent's mapping is the only one from a provider's index to storage;
// see docs/preflight.md.
//
// scan never writes: it reads sessions through pkg/store and returns findings
// as plain values, sorted and stable.
package scan

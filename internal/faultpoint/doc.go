// Package faultpoint stops sessfix at a chosen step, so a test can see
// exactly what a sessfix killed or signalled there leaves behind.
//
// sessfix calls Hit after each step that changes a file or a database (a
// temporary file written, a rename, a removal, a statement of a write
// transaction, a commit) and after each session it plans. Hit does nothing
// unless fault injection is enabled: in a build with the tag
// sessfix_faults (`go build -tags sessfix_faults`), or in a test binary
// that runs itself as sessfix and calls Enable. Then Hit counts the steps
// and reads the environment once:
//
//   - SESSFIX_FAULT_AT=N: right after step N the process sends itself
//     SESSFIX_FAULT_SIGNAL (INT, TERM or HUP; SIGKILL when unset, as
//     `kill -9` would at that point); for INT, TERM and HUP, Hit returns
//     only once the process's signal handler has taken the signal
//     (Observed), so what follows step N never depends on how soon the
//     handler ran;
//   - SESSFIX_FAULT_LOG=FILE: each step is appended to FILE as "N what", so
//     a test can count the steps of a whole run and tell them apart.
//
// Signals at random times, which depend on how fast the machine is, are a
// stress test (scripts/stress-kill.sh), not part of the test suite.
package faultpoint

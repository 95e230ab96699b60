// Package faultpoint stops sessfix at a chosen write, so a test can see
// exactly what a sessfix killed there leaves behind.
//
// The writers call Hit after each step that changes a file or a database
// (a temporary file written, a rename, a removal, a statement of a write
// transaction, a commit). In a normal build Hit does nothing and costs
// nothing. In a build with the tag sessfix_faults (tests build the binary
// with `go build -tags sessfix_faults`), Hit counts the steps and reads two
// environment variables once:
//
//   - SESSFIX_FAULT_KILL_AT=N: the process sends itself SIGKILL right after
//     step N, as `kill -9` would at that point;
//   - SESSFIX_FAULT_LOG=FILE: each step is appended to FILE as "N what", so
//     a test can count the steps of a whole run and tell them apart.
//
// Random kills at random times, which depend on how fast the machine is,
// are a stress test (scripts/stress-kill.sh), not part of the test suite.
package faultpoint

// Package rewind is `sessfix rewind`: discard every message of a session
// after one (pkg/surgery.PlanRewind, written through cmd/internal/cut).
package rewind

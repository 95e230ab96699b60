// Package fork is `sessfix fork`: copy a session's history into a new
// session of the same store (pkg/surgery.PlanFork, written through
// cmd/internal/cut).
package fork

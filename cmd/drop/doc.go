// Package drop is `sessfix drop`: remove messages or parts from a session
// (pkg/surgery.PlanDrop, written through cmd/internal/cut).
package drop

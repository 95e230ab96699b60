package backup

import "testing"

// SetBeforeRestore makes f run between Undo's check of the store and the
// restore, for the rest of the test.
func SetBeforeRestore(t testing.TB, f func()) {
	beforeRestore = f
	t.Cleanup(func() { beforeRestore = nil })
}

// KillDatabaseAt makes ApplyDatabase stop after step as a kill would (it
// panics with a Killed value), for the rest of the test.
func KillDatabaseAt(t testing.TB, step string) {
	killAt = func(s string) bool { return s == step }
	t.Cleanup(func() { killAt = nil })
}

// IsKilled reports whether a recovered panic is KillDatabaseAt's.
func IsKilled(v any) bool {
	_, ok := v.(killed)
	return ok
}

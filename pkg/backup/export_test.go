package backup

import "testing"

// SetBeforeRestore makes f run between Undo's check of the store and the
// restore, for the rest of the test.
func SetBeforeRestore(t testing.TB, f func()) {
	beforeRestore = f
	t.Cleanup(func() { beforeRestore = nil })
}

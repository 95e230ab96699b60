package sqlitedb

// SetAfterPartRow makes v run f after each part row it reads.
func SetAfterPartRow(v *V1, f func()) { v.afterPartRow = f }

// SetUnmapAfter sets how much a mapped connection reads before its map is
// dropped, until the test ends.
func SetUnmapAfter(t interface{ Cleanup(func()) }, n int64) {
	old := unmapAfter
	unmapAfter = n
	t.Cleanup(func() { unmapAfter = old })
}

package sqlitedb

// SetAfterPartRow makes v run f after each part row it reads.
func SetAfterPartRow(v *V1, f func()) { v.afterPartRow = f }

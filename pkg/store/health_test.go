package store

import "testing"

// TestDamageCommandRunsAsPrinted: the command that shows a database's
// damage takes the path as one shell word, and a relative path that starts
// with a dash as a file, not a flag.
func TestDamageCommandRunsAsPrinted(t *testing.T) {
	for path, want := range map[string]string{
		"/d/opencode.db":       "sessfix scan --deep --select SF501 /d/opencode.db",
		"/d/my db/opencode.db": "sessfix scan --deep --select SF501 '/d/my db/opencode.db'",
		"-odd.db":              "sessfix scan --deep --select SF501 ./-odd.db",
		"it's.db":              `sessfix scan --deep --select SF501 'it'\''s.db'`,
	} {
		if got := DamageCommand(path); got != want {
			t.Errorf("DamageCommand(%q) = %s, want %s", path, got, want)
		}
	}
}

// Package golden compares test output with golden files: a test fails
// when its output differs from the file, and `go test -update` rewrites
// the file instead.
package golden

import (
	"os"
	"testing"
)

// Check compares got with the file at path, or writes got there first when
// update is set (the test's -update flag).
func Check(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

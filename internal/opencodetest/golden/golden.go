// Package golden is sessfix's one convention for golden files: a test fails
// when its output differs from the file, and `go test -update` rewrites the
// file instead. Every test with a golden file (printer output, fix diffs,
// the rule fixtures' expected findings, docs/compatibility.md, and the
// expected output inside testscript scripts) goes by the same -update flag,
// which this package defines.
package golden

import (
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files (and testscript expectations) from this run")

// Update reports whether the run was asked to rewrite golden files
// (go test -update).
func Update() bool { return *update }

// Check compares got with the file at path, or with -update writes got there
// first.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *update {
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

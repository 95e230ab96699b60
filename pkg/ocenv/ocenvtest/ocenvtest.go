// Package ocenvtest gives tests a home holding the files OpenCode reads
// outside its data dir (its config, the models catalogue it caches), and
// an environment that reads only that home.
package ocenvtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessfix/sessfix/pkg/ocenv"
)

// Home writes files (text by path relative to the home, such as
// ".config/opencode/opencode.json") into a new temporary home and returns
// it with an environment that reads it and no environment variable.
func Home(t testing.TB, files map[string]string) (string, ocenv.Env) {
	t.Helper()
	home := t.TempDir()
	Write(t, home, files)
	return home, ocenv.Env{Home: home, Getenv: func(string) string { return "" }}
}

// Write writes files (text by path relative to home) into home, making
// their directories.
func Write(t testing.TB, home string, files map[string]string) {
	t.Helper()
	for rel, text := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

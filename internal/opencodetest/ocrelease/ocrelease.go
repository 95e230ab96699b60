// Package ocrelease names the OpenCode releases sessfix's test lab pins, and
// copies a data dir one of them recorded. It is the one thing unit tests of
// the product need from the lab besides the recorded stores themselves, kept
// apart so that they do not build the real-OpenCode driver
// (internal/opencodetest) and its provider mocks.
package ocrelease

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Pinned OpenCode versions the lab installs, runs and recorded.
const (
	// V1_18 stores sessions in SQLite (<data>/opencode.db).
	V1_18 = "1.18.33"
	// V1_1 stores sessions as JSON files (<data>/storage/…).
	V1_1 = "1.1.65"
	// VDev is a build of OpenCode's dev channel (2026-09-21). It is not
	// published as opencode-ai, only as the platform packages
	// (opencode-linux-x64@VDev, ...), and it keeps its database in
	// <data>/opencode-dev.db, beside an event log (the event table).
	VDev = "0.0.0-dev-202609212252"
)

// IsChannel reports whether version is a channel build (VDev), which npm
// serves only as the platform packages.
func IsChannel(version string) bool { return strings.Contains(version, "-dev-") }

// CopyTree copies the regular files under src to dst, creating directories.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

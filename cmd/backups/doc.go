// Package backups is the `sessfix backups` command: list the backup runs in
// pkg/backup's journal, and prune old ones.
package backups

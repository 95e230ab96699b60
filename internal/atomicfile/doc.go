// Package atomicfile replaces files so that a reader, or a crash, sees
// either the old bytes or the new ones, never a mix: write a temporary file
// in the same directory, fsync, close, rename it over the target, fsync the
// directory. It is how every file sessfix writes reaches the disk: the
// records of the JSON stores and export files (pkg/store/jsonfs,
// pkg/store/export) and the backup journal (pkg/backup).
//
// Guarantees:
//   - A replaced file keeps its mode (and, running as root, its owner); a
//     new one gets the mode asked for, and created directories the mode
//     and owner of their nearest existing parent.
//   - Symlinks and anything but regular files are refused, never followed.
//   - On every error path the temporary file is removed and the target is
//     untouched, unless the error says only the directory fsync failed.
//   - Every filesystem call goes through Ops, so tests inject faults (a
//     full disk, a failed fsync, a crash before the rename): see
//     atomicfiletest.
package atomicfile

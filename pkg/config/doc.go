// Package config reads sessfix's configuration file, `.sessfix.json` or
// `.sessfix.yaml`, so that CI and users need no long command lines: the
// rules to select and ignore, the --fail-on threshold, repair strategies,
// the placeholder text, the settle window, and per-finding suppressions.
//
// Find looks for the file from a directory upwards and stops at the
// repository root (the first directory holding .git). Load reads one file
// strictly: unknown keys, bad values and suppressions without a reason are
// errors that name the file and say what to fix.
//
// Guarantees:
//   - A suppression always carries a non-blank reason, names a rule code
//     (or prefix), and is anchored to a session, message, part or path glob,
//     so it cannot silence a whole rule everywhere by accident.
//   - Config.Apply only marks findings (scan.Finding.Suppression); it never
//     drops or reorders them. Callers decide what suppressed means for
//     output; it never fails a run and is never fixed.
//   - Values in the file are defaults: command-line flags win.
package config

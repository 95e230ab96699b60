// Package watch repairs OpenCode sessions while OpenCode runs: the engine of
// `sessfix watch`.
//
// A Watcher scans every store once, then follows changes: fsnotify watches
// on every directory of a JSON store (added recursively, and for each
// directory that appears, whose contents are then scanned because they may
// predate the watch), the directory of a SQLite database filtered to the
// database and its -wal file (each change asks the database which sessions
// have a newer time_updated than the last pass), and the directory of an
// export file. With Options.Poll set it polls instead, for filesystems
// without inotify. Once a database has been quiet for the settle window
// (at most once a minute) a checksum of every session's rows, computed
// inside SQLite, finds what changed without a newer time_updated.
//
// Stores come and go: each store's path is remembered with the file or
// directory opened there, and the places stores are found in (a data
// dir, the paths named) are watched from their nearest existing parent.
// A store replaced by another file, a new store and a store gone make the
// watcher look for the stores again (Options.Rediscover) and follow what
// it finds; with none at the start it waits.
//
// Guarantees:
//   - Events are debounced per session in one goroutine, on an injected
//     clock. What to do with a session whose time has come is one pure
//     function of its state and the time (decide, consulting
//     opencode.SettlePolicy): wait until it has been quiet for the settle
//     window, skip content already examined, leave an unfinished assistant
//     message alone while another process holds the store open and the
//     abandon window has not passed, else repair. A session OpenCode is
//     writing is never touched.
//   - Every session goes through fix.Pipeline, the pipeline `sessfix fix`
//     runs on, one at a time: the same findings, the same plan, written the
//     same way (writer lock, backup journal, atomic apply, verification),
//     so `sessfix undo` reverts it. When another sessfix holds the writer
//     lock the session is retried later.
//   - A session is examined again only when its content changed: each
//     session's records are fingerprinted, and the fingerprint of what a
//     repair wrote is remembered, so its own writes never trigger work.
//   - Cancelling the context stops the watcher between sessions: a repair
//     that has started writing is finished, never left half applied.
//   - A store that was replaced or is gone is not held open: its reader,
//     its database connection and its directory watches are closed before
//     the new one is followed.
//   - Idle costs nothing: no timer runs while no session is pending.
package watch

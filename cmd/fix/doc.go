// Package fix is the `sessfix fix` command: plan the repair of every session
// (pkg/fix), show it or its diff, ask, write it with a backup under the
// store's writer lock, and verify it by scanning again from disk. It parses
// flags into FixOptions and leaves the work to pkg/fix and pkg/store.
package fix

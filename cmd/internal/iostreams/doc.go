// Package iostreams owns sessfix's standard streams and every decision that
// depends on them: whether stdout and stderr are terminals, whether output is
// coloured, and the progress indicator.
//
// Guarantees:
//   - The colour decision is made once per process, in this order: the
//     --color flag (always, never, auto); for auto, NO_COLOR (any non-empty
//     value) disables, CLICOLOR_FORCE or FORCE_COLOR (non-empty, not "0")
//     forces, TERM=dumb disables, otherwise colour follows whether stdout is a
//     terminal. Nothing else in sessfix inspects the environment for colour.
//   - Progress is written to stderr only, only when stderr is a terminal, only
//     after the work has run for a short delay, and is erased when it stops.
//   - Tests get buffered streams whose terminal flags are set explicitly.
package iostreams

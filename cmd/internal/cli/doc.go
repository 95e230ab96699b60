// Package cli is the plumbing every sessfix command shares: the Factory that
// hands commands their streams, build information and store access (so tests
// can replace each), the global flags, the rule flags every scanning command
// shares (Filters: --select, --ignore, --fail-on) and how the config file
// fills them (Factory.ApplyConfig; flags win), the exit policy of findings
// (FailPolicy: which fail a run, from --fail-on), the error kinds that
// cmd/exitcode.go maps to exit codes, the `hint:` lines (Hints: the one
// place that turns the typed errors of pkg/store and pkg/backup into
// advice, plus what commands attach with WithHints), the Prompter that asks
// before a command writes (Factory.Prompt) and the clock (Factory.Clock),
// and shell completion of rule codes, --fail-on lists, strategies and
// session ids.
//
// It holds no command logic: each verb lives in its own package under cmd/.
package cli

package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/spf13/cobra"
	"strings"

	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// OpenStores discovers the user's stores (no paths) or opens the named
// paths, for the command verb ("scan", "fix", ...; with the flags the
// command cannot run without, as shell words: "diagnose --error 'TEXT'",
// so that a suggested command runs as printed), and prints discovery's
// notes on stderr. "Nothing there" becomes an error that says where sessfix
// looked, with hints naming the verb. When some inputs cannot be opened
// and others can, disc.Failed lists them: scan and fix go on with the
// others and end with InputsFailed (exit code 3); a command that needs
// them all returns InputsFailed at once.
func (f *Factory) OpenStores(verb string, paths []string) (*shapes.Discovery, error) {
	var (
		disc *shapes.Discovery
		err  error
	)
	if len(paths) == 0 {
		disc, err = f.Discover(f.Env())
	} else {
		disc, err = f.Open(paths)
	}
	if err == nil && (disc == nil || len(disc.Stores) == 0) {
		looked := paths
		if disc != nil && len(disc.Looked) > 0 {
			looked = disc.Looked
		}
		err = fmt.Errorf("%w (looked in %s)", store.ErrNotFound, strings.Join(looked, ", "))
	}
	if err == nil {
		for _, n := range disc.Notes {
			f.IOStreams.Statusf("note: %s", n)
		}
		return disc, nil
	}
	if disc != nil {
		disc.Close()
	}
	return nil, openError(verb, len(paths) == 0, err)
}

// InputsFailed is the error for the inputs OpenStores could not open
// while it opened others (nil when there are none), with the hints for
// what they are.
func InputsFailed(verb string, disc *shapes.Discovery) error {
	err := disc.FailedErr()
	if err == nil {
		return nil
	}
	return openError(verb, false, err)
}

// openError adds the hints for an error opening the stores: discovered
// (no paths) or named.
func openError(verb string, discovered bool, err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound) && discovered:
		return WithHints(err,
			"pass a path: "+withPath(verb, "~/.local/share/opencode"),
			"OpenCode keeps its data in $XDG_DATA_HOME/opencode; `opencode debug paths` prints it")
	case errors.Is(err, store.ErrNotFound):
		return WithHints(err, "pass an OpenCode data dir, storage/ dir, sessions dir, opencode.db or export file, e.g. "+withPath(verb, "~/.local/share/opencode"))
	case errors.Is(err, store.ErrUnsupported):
		return WithHints(err, "this sessfix cannot read that store; check for a newer release")
	}
	return err
}

// surgeryVerbs are the commands whose arguments are ids: they take their
// stores with --store.
var surgeryVerbs = map[string]bool{"show": true, "drop": true, "rewind": true, "fork": true}

// withPath is the command line that runs verb on the store at path. verb
// may carry the arguments and flags the command was given ("show ses_1");
// a surgery verb without them gets a SESSION to fill in.
func withPath(verb, path string) string {
	name, args, _ := strings.Cut(verb, " ")
	if surgeryVerbs[name] {
		if args == "" {
			args = "SESSION"
		}
		return "sessfix " + name + " " + args + " --" + StoreFlag + " " + path
	}
	return "sessfix " + verb + " " + path
}

// Verb is a command with its arguments, each a shell word, as OpenStores
// takes it: what a hint repeats with the store added.
func Verb(words ...string) string { return strings.TrimPrefix(CommandLine(words...), "sessfix ") }

// ShowCommand is the command that shows session id in the stores named
// with --store (none: the discovered ones), as a hint prints it.
func ShowCommand(id string, stores []string) string {
	args := []string{"show", id}
	for _, p := range stores {
		args = append(args, "--"+StoreFlag, p)
	}
	return CommandLine(args...)
}

// ListSessions is the hint that says where the user finds session ids:
// `sessfix sessions` on the stores the command read (paths, none for the
// discovered ones), so that it lists the sessions the command looked in.
func ListSessions(paths []string) string {
	return "list the sessions with `" + CommandLine(append([]string{"sessions"}, paths...)...) + "`"
}

// ReadPaths are the paths of a command's inputs that could be opened: those
// a hint may name (one that failed would make the suggested command fail).
func ReadPaths(paths []string, disc *shapes.Discovery) []string {
	failed := map[string]bool{}
	for _, in := range disc.Failed {
		failed[in.Path] = true
	}
	var out []string
	for _, p := range paths {
		if !failed[p] {
			out = append(out, p)
		}
	}
	return out
}

// SessionNotFound is the error for a --session id that no store holds:
// a mistyped id must not pass as a clean run. paths are the stores read,
// as ListSessions takes them.
func SessionNotFound(id string, paths []string) error {
	return WithHints(fmt.Errorf("session %s not found in the stores", id), ListSessions(paths))
}

// ResolveSessions returns ids with each prefix replaced by the whole id of
// the one session of stores it names (an error when it names none or
// several), as show, drop and rewind resolve theirs. A whole session id is
// kept as it is: a session missing from the stores is reported once they
// are read (CheckSessionsFound); an empty one is a usage error, as an empty
// SESSION argument is (SessionArg). paths are the stores' paths for the
// hints, as ListSessions takes them.
func ResolveSessions(ctx context.Context, stores []store.Store, ids, paths []string) ([]string, error) {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id
		if strings.TrimSpace(id) == "" {
			return nil, WithHints(FlagErrorf("--session needs a session id, got an empty argument"), ListSessions(paths))
		}
		if store.ValidID(id, store.PrefixFor(store.KindSession)) {
			continue
		}
		found, err := surgery.Find(ctx, stores, id)
		var several *surgery.InStoresError
		switch {
		case errors.As(err, &several):
			out[i] = several.ID // scan and fix read every store that holds it
		case err != nil:
			return nil, SessionError(err, "", paths)
		default:
			out[i] = found.Ref.ID
		}
	}
	return out, nil
}

// CheckSessionsFound returns SessionNotFound for the first of ids that
// found lacks; paths are the stores read, as ListSessions takes them.
func CheckSessionsFound(ids []string, found map[string]bool, paths []string) error {
	for _, id := range ids {
		if !found[id] {
			return SessionNotFound(id, paths)
		}
	}
	return nil
}

// SessionError is the error of a session argument that names no session,
// or several (a usage error): with the hint that says where ids are
// listed (in the stores at paths, as ListSessions takes them), or, for a
// session found in several stores, the command (verb, as OpenStores takes
// it) again with one of them named.
func SessionError(err error, verb string, paths []string) error {
	var amb *surgery.AmbiguousError
	var nf *surgery.NotFoundError
	var several *surgery.InStoresError
	switch {
	case errors.As(err, &amb):
		return WithHints(&FlagError{Err: err}, ListSessions(paths))
	case errors.As(err, &several):
		return WithHints(&FlagError{Err: err}, "name the store to use, e.g. "+withPath(verb, ShellArg(several.Stores[0])))
	case errors.As(err, &nf):
		return WithHints(err, ListSessions(paths))
	}
	return err
}

// StoreFlag is the flag the surgery commands (show, drop, rewind, fork)
// name stores with: their arguments are the session and record ids.
const StoreFlag = "store"

// AddStoreFlag adds --store PATH (repeatable) to a command.
func AddStoreFlag(cmd *cobra.Command, paths *[]string) {
	cmd.Flags().StringArrayVar(paths, StoreFlag, nil, "read the store at `PATH` instead of discovering OpenCode's (repeatable)")
}

// SayRollbacks says on stderr what taking a store's writer lock did about
// change sets a killed sessfix left half-written (backup.Lock), or, in a
// dry run, what it will do (backup.Interrupted). A roll-back is a status
// line (quiet hides it); a change set left alone is a warning, printed
// even when quiet.
func SayRollbacks(ios *iostreams.IOStreams, rbs []backup.Rollback) {
	for _, rb := range rbs {
		if len(rb.Refused) == 0 {
			ios.Statusf("%s", rb.Message())
			continue
		}
		fmt.Fprintf(ios.ErrOut, "warning: %s\nhint: to put it back anyway, run %s\n", rb.Message(), CommandLine("undo", rb.RunID, "--force"))
	}
}

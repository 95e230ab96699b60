package cli

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// RuleCodes completes one rule code, with the rule's name as description.
func RuleCodes(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return codesWithPrefix("", toComplete), cobra.ShellCompDirectiveNoFileComp
}

// RuleCodeList completes a comma-separated list of rule codes (the value of
// --select and --ignore): the codes after the last comma.
func RuleCodeList(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	return codesWithPrefix(done, last), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

func codesWithPrefix(done, prefix string) []string {
	var out []string
	for _, r := range scan.Rules() {
		if strings.HasPrefix(strings.ToUpper(r.Code), strings.ToUpper(prefix)) {
			out = append(out, done+r.Code+"\t"+r.Name)
		}
	}
	return out
}

// FailOnValues completes a --fail-on list: severities and rule codes after
// the last comma.
func FailOnValues(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []string
	for _, s := range []string{"error", "warning", "info"} {
		if strings.HasPrefix(s, strings.ToLower(last)) {
			out = append(out, done+s+"\tfindings of this severity or above")
		}
	}
	out = append(out, codesWithPrefix(done, last)...)
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// StrategyPairs completes --strategy CODE=NAME: first the codes that have
// repair strategies, then, after the '=', that code's strategy names with
// what each does.
func StrategyPairs(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	code, name, hasEq := strings.Cut(toComplete, "=")
	var out []string
	if !hasEq {
		for _, r := range scan.Rules() {
			if len(fix.Strategies(r.Code)) > 0 && strings.HasPrefix(strings.ToUpper(r.Code), strings.ToUpper(code)) {
				out = append(out, r.Code+"=\t"+r.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	for _, s := range fix.Strategies(code) {
		if strings.HasPrefix(s.Name, strings.ToLower(name)) {
			out = append(out, code+"="+s.Name+"\t"+s.Doc)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completionTimeout bounds how long session completion may list stores: a
// shell waiting on TAB must not hang on a huge or locked store.
const completionTimeout = 2 * time.Second

// SessionIDs completes a session id (--session, or the SESSION argument
// of show, drop, rewind and fork) with the ids of the sessions in the
// stores named on the command line, or the discovered stores: newest
// first (by id, which OpenCode counts down), each with its title as
// description. It reads the store listings only, never the sessions, and
// fails soft: any error completes nothing.
func (f *Factory) SessionIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	const dir = cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	disc := f.completionStores(storePaths(cmd, args))
	if disc == nil {
		return nil, dir
	}
	defer disc.Close()
	ctx, cancel := completionContext(cmd)
	defer cancel()
	seen := map[string]bool{}
	var refs []store.SessionRef
	for _, st := range disc.Stores {
		list, err := st.List(ctx)
		if err != nil {
			continue
		}
		for _, ref := range list {
			if !seen[ref.ID] && strings.HasPrefix(ref.ID, toComplete) {
				seen[ref.ID] = true
				refs = append(refs, ref)
			}
		}
	}
	// OpenCode's session ids count down with time: by id is newest first.
	sort.Slice(refs, func(a, b int) bool { return refs[a].ID < refs[b].ID })
	out := make([]string, 0, len(refs))
	for _, ref := range refs {
		c := ref.ID
		if t := strings.Join(strings.Fields(ref.Title), " "); t != "" {
			c += "\t" + t
		}
		out = append(out, c)
	}
	return out, dir
}

// MessageIDs completes a message id of the session named by the first
// argument, in the session's order, each described by its position, role
// and the start of its text. Stores are the --store flags, or the
// discovered ones; it fails soft.
func (f *Factory) MessageIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return f.recordIDs(cmd, args, toComplete, false)
}

// PartIDs completes a part id of the session named by the first argument,
// like MessageIDs.
func (f *Factory) PartIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return f.recordIDs(cmd, args, toComplete, true)
}

func (f *Factory) recordIDs(cmd *cobra.Command, args []string, toComplete string, parts bool) ([]string, cobra.ShellCompDirective) {
	const dir = cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	if len(args) == 0 {
		return nil, dir
	}
	disc := f.completionStores(storePaths(cmd, nil))
	if disc == nil {
		return nil, dir
	}
	defer disc.Close()
	ctx, cancel := completionContext(cmd)
	defer cancel()
	s, _, err := surgery.Load(ctx, disc.Stores, args[0])
	if err != nil {
		return nil, dir
	}
	var out []string
	for i, m := range s.Messages {
		if !parts {
			if strings.HasPrefix(m.ID, toComplete) {
				out = append(out, m.ID+"\t"+surgery.Describe(i, m))
			}
			continue
		}
		for _, p := range m.Parts {
			if strings.HasPrefix(p.ID, toComplete) {
				out = append(out, p.ID+"\t"+fmt.Sprintf("#%d %s %s", i, m.Role, p.Type))
			}
		}
	}
	return out, dir
}

// storePaths are the stores a completion reads: the command's --store
// flags when it has them (the surgery commands), else its arguments
// (scan, fix).
func storePaths(cmd *cobra.Command, args []string) []string {
	if cmd != nil {
		if fl := cmd.Flags().Lookup(StoreFlag); fl != nil {
			paths, _ := cmd.Flags().GetStringArray(StoreFlag)
			return paths
		}
	}
	return args
}

// completionStores opens the stores named in paths, or the discovered
// ones; nil when there are none.
func (f *Factory) completionStores(paths []string) *shapes.Discovery {
	var (
		disc *shapes.Discovery
		err  error
	)
	if len(paths) > 0 && f.Open != nil {
		disc, err = f.Open(paths)
	} else if f.Discover != nil && f.Env != nil {
		disc, err = f.Discover(f.Env())
	}
	if err != nil || disc == nil {
		if disc != nil {
			disc.Close()
		}
		return nil
	}
	return disc
}

func completionContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := context.Background()
	if cmd != nil && cmd.Context() != nil {
		ctx = cmd.Context()
	}
	return context.WithTimeout(ctx, completionTimeout)
}

// OneSession is the argument check of a command that takes exactly one
// session id (show, rewind); more is the hint for extra arguments.
func OneSession(verb, more string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return WithHints(FlagErrorf("%s needs a session id", verb), ListSessions(storePaths(cmd, nil)))
		case len(args) > 1:
			if err := SessionArg(verb, args[0], storePaths(cmd, nil)); err != nil {
				return err
			}
			if err := StorePathArgs(cmd, args); err != nil {
				return err
			}
			return WithHints(FlagErrorf("%s takes one session id, got %d arguments", verb, len(args)), more)
		}
		return SessionArg(verb, args[0], storePaths(cmd, nil))
	}
}

// SessionArg refuses a session argument that is a path (an export file, a
// store): a surgery command names its stores with --store, and a user who
// passes the file where the session id goes needs to be told how to say
// it. Session ids and their prefixes hold no path separator and no dot.
// paths are the stores named with --store, for the hint.
func SessionArg(verb, arg string, paths []string) error {
	if strings.TrimSpace(arg) == "" {
		return WithHints(FlagErrorf("%s needs a session id, got an empty argument", verb), ListSessions(paths))
	}
	if !strings.ContainsAny(arg, `/\.`) {
		if _, err := os.Stat(arg); err != nil {
			return nil
		}
	}
	return WithHints(FlagErrorf("%s is a path, not a session id: %s takes the store with --store", arg, verb),
		"list its sessions: sessfix sessions "+arg,
		"then: sessfix "+verb+" SESSION --store "+arg)
}

// OneSessionID completes the one session id of a command checked by
// OneSession, and nothing after it.
func (f *Factory) OneSessionID(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return f.SessionIDs(cmd, nil, toComplete)
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

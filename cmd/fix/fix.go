package fix

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/config"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// FixOptions are the parsed inputs of `sessfix fix`.
type FixOptions struct {
	Factory *cli.Factory

	Paths          []string
	Sessions       []string
	Select, Ignore []string
	DryRun         bool
	Diff           bool
	Yes            bool
	Force          bool
	Strategies     []string
	Placeholder    string
	Error          string
	Settle         time.Duration
	// FailOn is --fail-on: which unfixed findings make the command exit 1
	// ("" means warning).
	FailOn string
	// Config is the config file whose suppressions apply (suppressed
	// findings are left alone); nil when none was found.
	Config *config.Config

	// Apply writes one store's change sets, backing every edit up first, and
	// returns the backup run's id. The caller holds the store's writer lock.
	// Nil means backup.Apply with the default journal.
	Apply func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (runID string, err error)
	// Confirm asks the user a yes/no question; nil reads a line from stdin.
	Confirm func(question string) (bool, error)
	// Interactive reports whether sessfix may ask; nil means stdin and
	// stdout are terminals.
	Interactive func() bool
}

// NewCmdFix returns `sessfix fix`. runF replaces the command's work in tests.
func NewCmdFix(f *cli.Factory, runF func(context.Context, *FixOptions) error) *cobra.Command {
	opts := &FixOptions{Factory: f}
	filters := &cli.Filters{}
	cmd := &cobra.Command{
		Use:   "fix [PATH...]",
		Short: "Repair broken OpenCode sessions",
		Long: `Repair what ` + "`sessfix scan`" + ` finds. For each session sessfix plans the edits first, checks them on an
in-memory copy (the fixed findings must go away and nothing new may appear, else the rule's next strategy is
tried), backs every record up, writes under its writer lock, and scans the session again from disk.

On a terminal the plan is shown and sessfix asks before writing (--yes skips the question). Without a
terminal it writes only with --yes; otherwise it prints the plan, like --dry-run, and says so on stderr.
--dry-run --diff prints a unified diff of every record that would change. Sessions changed within the
--settle window may still be in use and are skipped unless --force.

--error TEXT repairs what a provider error points at (its messages.N, mapped to the exact stored message);
it needs --session. Without it, a stored failed attempt (SF302) gets the same repair.
Strategies per rule and what each mutation writes: docs/fixing.md. Undo with ` + "`sessfix undo`" + `.

Exit codes:
  0    nothing to fix, or everything planned was fixed
  1    findings remain unfixed, or a dry run would change something
  2    usage error
  3    a store could not be read or written, or verification failed
  4    a store is locked by another sessfix
  130  interrupted`,
		Example: `  # see what would change, as a diff
  sessfix fix --dry-run --diff

  # fix one session without asking
  sessfix fix --session ses_3a1f2b9c8d7eAbCdEfGhIjKlMn --yes

  # fix only thinking-order findings, stripping instead of moving
  sessfix fix --select SF103 --strategy SF103=strip

  # repair what a provider error points at
  sessfix fix --session ses_3a1f2b9c8d7eAbCdEfGhIjKlMn \
    --error 'messages.3.content.0.type: Expected ` + "`thinking`" + ` or ` + "`redacted_thinking`" + `, but found ` + "`tool_use`" + `'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			cfg, err := f.ApplyConfig(cmd, cli.ConfigTargets{Filters: filters, Settle: &opts.Settle,
				Strategies: &opts.Strategies, Placeholder: &opts.Placeholder})
			if err != nil {
				return err
			}
			if cfg.Path != "" {
				opts.Config = cfg
			}
			opts.Select, opts.Ignore, opts.FailOn = filters.Select, filters.Ignore, filters.FailOn
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunFix(cmd.Context(), opts)
		},
	}
	cli.AddFilterFlags(cmd, filters, "fix")
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Sessions, "session", nil, "fix only the session with this `ID` (repeatable)")
	fl.BoolVarP(&opts.DryRun, "dry-run", "n", false, "plan and print, write nothing")
	fl.BoolVar(&opts.Diff, "diff", false, "print a unified diff of every record that would change (with --dry-run)")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "write without asking")
	fl.BoolVar(&opts.Force, "force", false, "also fix sessions that changed within the settle window (they may be in use)")
	fl.StringArrayVar(&opts.Strategies, "strategy", nil, "repair `CODE=NAME`, e.g. SF103=strip (repeatable; see docs/fixing.md)")
	fl.StringVar(&opts.Placeholder, "placeholder", fix.DefaultPlaceholder, "`TEXT` for empty and injected text parts (must not be blank)")
	fl.StringVar(&opts.Error, "error", "", "repair what this provider error `TEXT` points at (needs --session)")
	fl.DurationVar(&opts.Settle, "settle", scan.DefaultSettle, "a session changed within this `long` may be in use and is skipped")
	_ = cmd.RegisterFlagCompletionFunc("session", f.SessionIDs)
	_ = cmd.RegisterFlagCompletionFunc("strategy", cli.StrategyPairs)
	return cmd
}

// sessionPlan is a planned session, with what the command needs to apply
// and verify it. It keeps the session's id and title, not the loaded
// session: memory follows the edits planned, not the size of every session
// that needs one.
type sessionPlan struct {
	st        store.Store
	ref       store.SessionRef
	id, title string
	plan      *fix.SessionPlan
}

// planner loads, checks and plans sessions for RunFix.
type planner struct {
	opts   *FixOptions
	fopts  fix.Options
	sopts  *scan.Options
	policy *report.Report
	now    func() time.Time
}

// planned is what planning one session gave: a plan to show (nil when there
// is nothing to say), status lines for stderr, and counts for the exit code.
type planned struct {
	sp      *sessionPlan
	status  []string
	unfixed int
	busy    bool
	err     error
}

// planAll plans refs with GOMAXPROCS workers and returns the outcomes in
// refs' order, calling progress after each session. Each worker holds one
// loaded session at a time; the outcomes hold plans only.
func (pl *planner) planAll(ctx context.Context, st store.Store, refs []store.SessionRef, progress func(done, total int)) []planned {
	out := make([]planned, len(refs))
	next := make(chan int)
	var wg sync.WaitGroup
	var done atomic.Int64
	var failed atomic.Bool // a plan failed: RunFix stops at it, so plan no more
	for range min(runtime.GOMAXPROCS(0), len(refs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = pl.plan(ctx, st, refs[i])
				if out[i].err != nil {
					failed.Store(true)
				}
				progress(int(done.Add(1)), len(refs))
			}
		}()
	}
	for i := range refs {
		switch {
		case ctx.Err() != nil:
			out[i].err = ctx.Err()
		case failed.Load():
			out[i].err = errNotPlanned
		default:
			next <- i
		}
	}
	close(next)
	wg.Wait()
	return out
}

// errNotPlanned marks sessions left unplanned after another one's plan
// failed; RunFix returns that failure, which comes first.
var errNotPlanned = errors.New("not planned: an earlier session's plan failed")

// plan loads, checks and plans one session.
func (pl *planner) plan(ctx context.Context, st store.Store, ref store.SessionRef) planned {
	opts := pl.opts
	s, err := st.Load(ctx, ref)
	if err != nil {
		return planned{unfixed: 1, status: []string{fmt.Sprintf("warning: session %s in %s cannot be loaded, skipped: %v", ref.ID, st.Info().Path, err)}}
	}
	var p *fix.SessionPlan
	if opts.Error != "" {
		p, err = fix.PlanFromError(s, opts.Error, pl.fopts)
	} else if len(pl.sopts.Select) == 0 && len(pl.sopts.Ignore) == 0 {
		// Every rule runs: the planner's own check of the session is this one.
		all := scan.CheckSession(s, pl.sopts)
		p, err = fix.PlanChecked(s, all, unsuppressed(opts.Config, all), pl.fopts)
	} else {
		p, err = fix.Plan(s, unsuppressed(opts.Config, scan.CheckSession(s, pl.sopts)), pl.fopts)
	}
	if err != nil {
		return planned{err: fmt.Errorf("session %s in %s: %w", s.ID, st.Info().Path, err)}
	}
	o := planned{unfixed: countUnfixed(p, pl.policy)}
	if p.Empty() && len(p.Unfixed) == 0 && len(p.Notes) == 0 {
		return o
	}
	if !p.Empty() {
		if age := pl.now().Sub(s.LastModified()); !s.LastModified().IsZero() && age < pl.sopts.SettleWindow() {
			when := age.Round(time.Second).String() + " ago"
			if age < 0 {
				when = "after the current time"
			}
			if !opts.Force {
				o.status = append(o.status, fmt.Sprintf("skipped session %s: it changed %s and may still be in use (wait, or add --force)", s.ID, when))
				o.busy = true
				return o
			}
			o.status = append(o.status, fmt.Sprintf("WARNING: session %s changed %s and may still be in use; fixing it anyway because of --force", s.ID, when))
		}
	}
	o.sp = &sessionPlan{st: st, ref: ref, id: s.ID, title: strings.Clone(s.Title), plan: p}
	return o
}

// RunFix does the work of `sessfix fix`.
func RunFix(ctx context.Context, opts *FixOptions) error {
	f := opts.Factory
	ios := f.IOStreams
	now := f.Now
	if now == nil {
		now = time.Now
	}

	strategies, err := fix.ParseStrategies(opts.Strategies)
	if err != nil {
		return &cli.FlagError{Err: err}
	}
	if err := fix.ValidatePlaceholder(opts.Placeholder); err != nil {
		return &cli.FlagError{Err: fmt.Errorf("invalid --placeholder: %w", err)}
	}
	if opts.Settle < 0 {
		return cli.FlagErrorf("invalid --settle %s: must not be negative", opts.Settle)
	}
	if opts.Diff && !opts.DryRun {
		return cli.WithHints(cli.FlagErrorf("--diff needs --dry-run"), "sessfix fix --dry-run --diff")
	}
	if opts.Error != "" && len(opts.Sessions) != 1 {
		return cli.WithHints(cli.FlagErrorf("--error needs exactly one --session: the error's messages.N only means something in the session it came from"),
			"find the session with `sessfix scan`, then: sessfix fix --session ID --error TEXT")
	}
	sopts, failOn, failCodes, err := (&cli.Filters{Select: opts.Select, Ignore: opts.Ignore, FailOn: opts.FailOn}).ScanFilters()
	if err != nil {
		return err
	}
	sopts.Sessions, sopts.Settle, sopts.Now = opts.Sessions, opts.Settle, now
	// policy decides which findings left unfixed make the command exit 1.
	policy := &report.Report{FailOn: failOn, FailCodes: failCodes}
	fopts := fix.Options{Strategies: strategies, Placeholder: opts.Placeholder, Now: now, Scan: sopts}

	cli.BatchGC()
	disc, err := f.OpenStores("fix", opts.Paths)
	if err != nil {
		return err
	}
	defer disc.Close()
	for _, n := range disc.Notes {
		ios.Statusf("note: %s", n)
	}

	// Plan every session: loaded, checked and planned by GOMAXPROCS workers,
	// reported in the store's order.
	var plans []*sessionPlan
	var unfixed, skippedBusy int
	found := map[string]bool{}
	pl := &planner{opts: opts, fopts: fopts, sopts: sopts, policy: policy, now: now}
	for _, st := range disc.Stores {
		refs, err := st.List(ctx)
		if err != nil {
			return fmt.Errorf("cannot list the sessions of %s store %s: %w", st.Info().Shape, st.Info().Path, err)
		}
		var todo []store.SessionRef
		for _, ref := range refs {
			if len(opts.Sessions) > 0 && !contains(opts.Sessions, ref.ID) {
				continue
			}
			found[ref.ID] = true
			todo = append(todo, ref)
		}
		prog := ios.StartProgress("planning", "sessions")
		outcomes := pl.planAll(ctx, st, todo, prog.Update)
		prog.Stop()
		for _, o := range outcomes {
			for _, line := range o.status {
				ios.Statusf("%s", line)
			}
			if o.err != nil {
				return o.err
			}
			unfixed += o.unfixed
			if o.busy {
				skippedBusy++
			}
			if o.sp != nil {
				plans = append(plans, o.sp)
			}
		}
	}
	if err := cli.CheckSessionsFound(opts.Sessions, found); err != nil {
		return err
	}

	changing := 0
	for _, sp := range plans {
		if !sp.plan.Empty() {
			changing++
		}
	}
	out := ios.Out
	if opts.Diff {
		if err := printDiffs(out, plans, ios.ColorEnabled()); err != nil {
			return err
		}
		printPlans(ios.ErrOut, plans, false)
	} else {
		printPlans(out, plans, ios.ColorEnabled())
	}
	if changing == 0 {
		ios.Statusf("nothing to change")
		if unfixed > 0 || skippedBusy > 0 {
			return cli.ErrFindings
		}
		return nil
	}

	write := !opts.DryRun
	if write && !opts.Yes {
		interactive := opts.Interactive
		if interactive == nil {
			interactive = func() bool { return isTTY(ios.In) && ios.IsStdoutTTY() }
		}
		if !interactive() {
			ios.Statusf("not writing: no terminal to ask on; this was a dry run (add --yes to write)")
			write = false
		} else {
			confirm := opts.Confirm
			if confirm == nil {
				confirm = func(q string) (bool, error) { return askLine(ios.In, ios.ErrOut, q) }
			}
			ok, err := confirm(fmt.Sprintf("write %s to %s?", cli.Plural(editCount(plans), "edit", "edits"), cli.Plural(changing, "session", "sessions")))
			if err != nil {
				return err
			}
			if !ok {
				ios.Statusf("nothing written")
				return cli.ErrFindings
			}
		}
	}
	if !write {
		ios.Statusf("dry run: %s in %s would be written", cli.Plural(editCount(plans), "edit", "edits"), cli.Plural(changing, "session", "sessions"))
		return cli.ErrFindings
	}
	return apply(ctx, opts, plans, sopts, unfixed+skippedBusy)
}

// apply writes each store's change sets under its writer lock, then
// re-scans every fixed session from disk.
func apply(ctx context.Context, opts *FixOptions, plans []*sessionPlan, sopts *scan.Options, remaining int) error {
	ios := opts.Factory.IOStreams
	applyF := opts.Apply
	if applyF == nil {
		applyF = func(ctx context.Context, info store.Info, sets []*store.ChangeSet) (string, error) {
			return backup.Apply(ctx, backup.Options{Now: opts.Factory.Now}, info, sets)
		}
	}
	byStore := map[store.Store][]*sessionPlan{}
	var order []store.Store
	for _, sp := range plans {
		if sp.plan.Empty() {
			continue
		}
		if _, ok := byStore[sp.st]; !ok {
			order = append(order, sp.st)
		}
		byStore[sp.st] = append(byStore[sp.st], sp)
	}
	var runs []string
	byRule := map[string]int{}
	sessions := 0
	for _, st := range order {
		info := st.Info()
		var planned []fix.Planned
		for _, sp := range byStore[st] {
			planned = append(planned, fix.Planned{Ref: sp.ref, Plan: sp.plan})
		}
		run, err := fix.Write(ctx, st, planned, fix.WriteOptions{Apply: applyF, Scan: sopts})
		switch {
		case errors.Is(err, store.ErrLocked) && run == "":
			// The error says who holds the store (another sessfix, or
			// OpenCode holding the database) and what to do.
			return fmt.Errorf("cannot fix %s: %w", info.Path, err)
		case err != nil && run != "":
			return cli.WithHints(err, "undo the run with `sessfix undo "+run+"` and report the session if it was a verification failure")
		case err != nil:
			return err
		}
		if run != "" {
			runs = append(runs, run)
		}
		for _, sp := range byStore[st] {
			sessions++
			for r, n := range sp.plan.EditsByRule() {
				byRule[r] += n
			}
		}
	}
	var rules []string
	for r := range byRule {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	var parts []string
	total := 0
	for _, r := range rules {
		parts = append(parts, fmt.Sprintf("%s %d", r, byRule[r]))
		total += byRule[r]
	}
	ios.Statusf("fixed %s: %s (%s)", cli.Plural(sessions, "session", "sessions"), cli.Plural(total, "edit", "edits"), strings.Join(parts, ", "))
	for _, run := range runs {
		ios.Statusf("backup run %s; undo with: sessfix undo %s", run, run)
	}
	if remaining > 0 {
		return cli.ErrFindings
	}
	return nil
}

func countUnfixed(p *fix.SessionPlan, policy *report.Report) int {
	n := 0
	for _, u := range p.Unfixed {
		if policy.Fails(u.Finding) {
			n++
		}
	}
	return n
}

// unsuppressed drops the findings the config file suppresses: fix leaves
// them as they are.
func unsuppressed(c *config.Config, fs []scan.Finding) []scan.Finding {
	if c == nil {
		return fs
	}
	out := fs[:0:0]
	for _, f := range fs {
		if !c.Suppressed(f) {
			out = append(out, f)
		}
	}
	return out
}

func editCount(plans []*sessionPlan) int {
	n := 0
	for _, sp := range plans {
		if sp.plan.Changes != nil {
			n += len(sp.plan.Changes.Edits)
		}
	}
	return n
}

// printPlans writes, per session, what will change and why, and what will
// not.
func printPlans(w io.Writer, plans []*sessionPlan, color bool) {
	st := report.NewStyles(color)
	var last store.Store
	for _, sp := range plans {
		if sp.st != last {
			info := sp.st.Info()
			fmt.Fprintln(w, st.Header.Render(fmt.Sprintf("%s store %s", info.Shape, report.Clean(info.Path))))
			last = sp.st
		}
		title := ""
		if sp.title != "" {
			title = " " + strconvQuote(sp.title)
		}
		fmt.Fprintf(w, "  session %s%s\n", st.Title.Render(report.Clean(sp.id)), title)
		for _, r := range sp.plan.Fixed {
			how := r.Strategy
			if how == "" {
				how = "fixed by the repairs above"
			} else {
				how = fmt.Sprintf("%s (%s), %s", r.Strategy, r.Mutations, cli.Plural(r.Edits, "edit", "edits"))
			}
			fmt.Fprintf(w, "    %s %s %s: %s\n", st.OK.Render("fix"), st.Code.Render(r.Finding.Code), report.Clean(r.Finding.Message), how)
		}
		for _, u := range sp.plan.Unfixed {
			fmt.Fprintf(w, "    %s %s %s: %s\n", st.Warning.Render("left"), st.Code.Render(u.Finding.Code), report.Clean(u.Finding.Message), report.Clean(u.Reason))
		}
		for _, sk := range sp.plan.Skipped {
			fmt.Fprintf(w, "    %s %s %s %s: %s\n", st.Dim.Render("skipped edit"), sk.Edit.Op, sk.Edit.Kind, report.Clean(sk.Edit.ID), report.Clean(sk.Reason))
		}
		for _, n := range sp.plan.Notes {
			fmt.Fprintf(w, "    %s %s\n", st.Hint.Render("note:"), report.Clean(n))
		}
	}
}

// printDiffs writes the unified diffs of every plan, coloured on request.
func printDiffs(w io.Writer, plans []*sessionPlan, color bool) error {
	st := report.NewStyles(color)
	for _, sp := range plans {
		if sp.plan.Empty() {
			continue
		}
		var b bytes.Buffer
		if err := fix.Diff(&b, sp.plan.Changes); err != nil {
			return err
		}
		for _, line := range strings.SplitAfter(b.String(), "\n") {
			if line == "" {
				continue
			}
			body := report.Clean(strings.TrimSuffix(line, "\n"))
			switch {
			case !color:
			case strings.HasPrefix(body, "---"), strings.HasPrefix(body, "+++"), strings.HasPrefix(body, "#"):
				body = st.Header.Render(body)
			case strings.HasPrefix(body, "@@"):
				body = st.Info.Render(body)
			case strings.HasPrefix(body, "-"):
				body = st.Error.Render(body)
			case strings.HasPrefix(body, "+"):
				body = st.OK.Render(body)
			}
			if _, err := io.WriteString(w, body+line[len(strings.TrimSuffix(line, "\n")):]); err != nil {
				return err
			}
		}
	}
	return nil
}

func askLine(in io.Reader, out io.Writer, q string) (bool, error) {
	fmt.Fprintf(out, "%s [y/N] ", q)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

func isTTY(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

package fix

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/store"
)

// confirm decides whether to write: --dry-run never does, --yes always
// does, otherwise the user is asked on a terminal. It returns
// cli.ErrFindings when nothing is to be written.
func (r *fixRun) confirm(changing, edits int) error {
	opts, ios := r.opts, r.opts.Factory.IOStreams
	what := fmt.Sprintf("%s to %s", plural.Count(edits, "edit", "edits"), plural.Count(changing, "session", "sessions"))
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
			ok, err := confirm("write " + what + "?")
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
		ios.Statusf("dry run: %s in %s would be written", plural.Count(edits, "edit", "edits"), plural.Count(changing, "session", "sessions"))
		return cli.ErrFindings
	}
	return nil
}

// apply writes each store's plans in one backup run, under its writer
// lock, and verifies every written session from disk.
func (r *fixRun) apply(ctx context.Context) error {
	ios := r.opts.Factory.IOStreams
	var stores []store.Store
	byStore := map[store.Store][]fix.Outcome{}
	for _, o := range r.plans {
		if !o.Changes() {
			continue
		}
		if _, ok := byStore[o.Store]; !ok {
			stores = append(stores, o.Store)
		}
		byStore[o.Store] = append(byStore[o.Store], o)
	}
	var runs []string
	var written []fix.Outcome
	for _, st := range stores {
		run, err := r.pipe.Apply(ctx, st, byStore[st])
		switch {
		case errors.Is(err, store.ErrLocked) && run == "":
			// The error says who holds the store (another sessfix, or
			// OpenCode holding the database) and what to do.
			return fmt.Errorf("cannot fix %s: %w", st.Info().Path, err)
		case err != nil && run != "":
			return cli.WithHints(err, "undo the run with `sessfix undo "+run+"` and report the session if it was a verification failure")
		case err != nil:
			return err
		}
		if run != "" {
			runs = append(runs, run)
		}
		written = append(written, byStore[st]...)
	}
	ios.Statusf("%s", report.FixSummary(written))
	for _, run := range runs {
		ios.Statusf("backup run %s; undo with: sessfix undo %s", run, run)
	}
	if r.remaining() > 0 {
		return cli.ErrFindings
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

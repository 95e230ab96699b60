package cut

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// exportCut drops the last message of a healthy export file's session (a
// copy): an applier counts the writes.
type exportCut struct {
	opts *Options
	runs int
}

func newExportCut(t *testing.T) *exportCut {
	t.Helper()
	b, err := os.ReadFile("../../testdata/stores/healthy.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "healthy.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := iostreams.Test()
	f := cli.New(cli.BuildInfo{Version: "test"})
	f.IOStreams = ios
	c := &exportCut{}
	c.opts = &Options{Factory: f, Verb: "drop", Session: "ses_3522ba9dffffdoScdCQgorR49x", Paths: []string{path},
		Settle: opencode.DefaultSettle, Abandon: opencode.DefaultAbandon,
		Apply: func(context.Context, store.Info, []*store.ChangeSet) (string, error) { c.runs++; return "run-1", nil }}
	return c
}

func (c *exportCut) run() error {
	return Run(context.Background(), c.opts, func(s *store.Session, so *scan.Options) (*fix.SessionPlan, error) {
		return surgery.PlanDrop(s, []string{"msg_cadd48187000adtmta9iyA4W4c"}, nil, surgery.CutOptions{Scan: so})
	})
}

func TestCutAsksOnATerminal(t *testing.T) {
	for _, answer := range []bool{false, true} {
		c := newExportCut(t)
		var asked string
		c.opts.Factory.Prompter = &cli.StubPrompter{Terminal: true, Answer: func(q string) (bool, error) { asked = q; return answer, nil }}
		err := c.run()
		if asked != "write 4 edits?" {
			t.Errorf("question %q", asked)
		}
		if wrote := c.runs > 0; wrote != answer || answer != (err == nil) {
			t.Errorf("answer %v: wrote %v, err %v", answer, wrote, err)
		}
	}
}

func TestCutDryRunWritesNothing(t *testing.T) {
	c := newExportCut(t)
	c.opts.DryRun, c.opts.Yes = true, true
	if err := c.run(); !errors.Is(err, cli.ErrFindings) || c.runs != 0 {
		t.Errorf("dry run: err %v, %d writes", err, c.runs)
	}
}

// TestCutChecksWithOpenCodesConfig: the cut judges the session before and
// after with what OpenCode reads outside its data dir (the family of a
// provider the user added, SF213), as scan and fix do; a factory that reads
// none gives the planner none.
func TestCutChecksWithOpenCodesConfig(t *testing.T) {
	for _, reads := range []bool{true, false} {
		c := newExportCut(t)
		c.opts.DryRun = true
		if !reads {
			c.opts.Factory.OpenCodeEnv = nil
		}
		var got *scan.Options
		err := Run(context.Background(), c.opts, func(s *store.Session, so *scan.Options) (*fix.SessionPlan, error) {
			got = so
			return surgery.PlanDrop(s, []string{"msg_cadd48187000adtmta9iyA4W4c"}, nil, surgery.CutOptions{Scan: so})
		})
		if !errors.Is(err, cli.ErrFindings) || got == nil {
			t.Fatalf("dry run: err %v, planned %v", err, got != nil)
		}
		if (got.OpenCode != nil) != reads {
			t.Errorf("factory reads OpenCode's environment: %v; the cut's scan options read it: %v", reads, got.OpenCode != nil)
		}
	}
}

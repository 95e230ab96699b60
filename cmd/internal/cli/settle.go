package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
)

// AddSettleFlags registers --settle and --abandon, the windows of the
// settle policy (opencode.SettlePolicy) that scan, fix, diagnose and watch
// decide by whether OpenCode may still be writing a session.
func AddSettleFlags(cmd *cobra.Command, settle, abandon *time.Duration) {
	f := cmd.Flags()
	f.DurationVar(settle, "settle", opencode.DefaultSettle,
		"an unfinished message that changed within `DURATION` (5s, 2m) is being written; watch waits this long after a change (0: no window)")
	f.DurationVar(abandon, "abandon", opencode.DefaultAbandon,
		"an unfinished message counts as being written for up to `DURATION` (10m, 1h) while another program (OpenCode) has its store open (0: never)")
}

// SetSettle checks --settle and --abandon and sets them on opts. Zero
// means no window, never the default: --settle 0 (opencode.NoSettle) leaves
// only what is seen of other programs as evidence that a message is being
// written, --abandon 0 (opencode.NoAbandon) only the settle window. Negative
// values are usage errors.
func SetSettle(opts *scan.Options, settle, abandon time.Duration) error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"--settle", settle}, {"--abandon", abandon}} {
		if f.d < 0 {
			return FlagErrorf("invalid %s %s: must not be negative (0 means no window)", f.name, f.d)
		}
	}
	if settle == 0 {
		settle = opencode.NoSettle
	}
	if abandon == 0 {
		abandon = opencode.NoAbandon
	}
	opts.Settle, opts.Abandon = settle, abandon
	return nil
}

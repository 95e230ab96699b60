package scan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/opencode"
)

// TestScanReportsADatabaseSQLCannotOpen: a database whose schema page is
// damaged is an SF501 finding (exit 1, ErrFindings), not an unreadable
// input (exit 3) telling the user to run the sqlite3 shell; the hint
// offers `sessfix fix`, which salvages it.
func TestScanReportsADatabaseSQLCannotOpen(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.OverwritePage(t, 1)
	ios, _, out, errOut := iostreams.Test()
	f := cli.New(cli.BuildInfo{Version: "test"})
	f.IOStreams = ios
	f.OpenCodeEnv = nil
	opts := &ScanOptions{Factory: f, Paths: []string{rs.Path}, FailOn: "warning", Settle: opencode.DefaultSettle, Abandon: opencode.DefaultAbandon}
	err := RunScan(context.Background(), opts)
	if !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("scan: %v, want the findings error (exit 1)\n%s", err, errOut)
	}
	if !strings.Contains(out.String(), "error SF501 sql cannot open the database: database disk image is malformed") {
		t.Errorf("no SF501 finding:\n%s", out)
	}
	if all := out.String() + errOut.String(); !strings.Contains(all, "sessfix fix") || strings.Contains(all, "sqlite3 ") {
		t.Errorf("the hints do not offer the salvage, or send the user to the sqlite3 shell:\n%s", all)
	}
}

package scan

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestScanSaysWhichSessionsItSkippedAsBusy: a session whose unfinished
// turn changed a second ago may still be being written, so the rules leave
// that turn alone; scan says so, with the reason and the flags that check
// it anyway, on stderr next to any format and in the JSON document's
// session, instead of a bare "no findings".
func TestScanSaysWhichSessionsItSkippedAsBusy(t *testing.T) {
	fx, err := storetest.LoadExportFixture(filepath.Join("..", "..", "testdata", "sessions", "sf301-stale", "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	created, err := fx.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	now := created.Add(time.Hour)
	path := storetest.Materialize(t, store.ShapeSessions, t.TempDir(), fx)
	storetest.SetTimes(t, path, now.Add(-time.Second))

	for _, format := range []string{"text", "json", "sarif"} {
		t.Run(format, func(t *testing.T) {
			ios, _, out, errOut := iostreams.Test()
			f := cli.New(cli.BuildInfo{Version: "test"})
			f.IOStreams = ios
			f.Now = func() time.Time { return now }
			f.OpenCodeEnv = nil
			f.Globals.Format = format
			opts := &ScanOptions{Factory: f, Paths: []string{path}, FailOn: "warning", Settle: opencode.DefaultSettle, Abandon: opencode.DefaultAbandon}
			_ = RunScan(context.Background(), opts)
			const why = "session ses_31993717ffffDgfyZBF9sR3OmH skipped: its last assistant message is unfinished and the session changed 1s ago, so OpenCode may still be writing it and its unfinished turn was not checked; add --settle 0 --abandon 0 to check it anyway"
			if !strings.Contains(errOut.String(), why) && !strings.Contains(out.String(), why) {
				t.Errorf("the %s scan does not say it skipped the session:\n%s\n%s", format, out, errOut)
			}
			if format == "json" {
				var doc struct {
					Stores []struct {
						Sessions []struct {
							InUse string `json:"in_use"`
						} `json:"sessions"`
					} `json:"stores"`
				}
				if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				if len(doc.Stores) != 1 || len(doc.Stores[0].Sessions) != 1 || !strings.Contains(doc.Stores[0].Sessions[0].InUse, "changed 1s ago") {
					t.Errorf("the JSON document does not mark the session in use:\n%s", out)
				}
			}
		})
	}
}

package scan

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

func TestFlagsFillOptions(t *testing.T) {
	tests := []struct {
		args []string
		want ScanOptions
	}{
		{[]string{}, ScanOptions{FailOn: "warning", Settle: opencode.DefaultSettle, Abandon: opencode.DefaultAbandon, Paths: []string{}}},
		{
			[]string{"a.db", "dir", "--select", "SF1,SF203", "--select", "SF3", "--ignore", "SF104",
				"--fail-on", "error", "--session", "ses_1", "--session", "ses_2", "--settle", "90s"},
			ScanOptions{
				Paths: []string{"a.db", "dir"}, Select: []string{"SF1", "SF203", "SF3"}, Ignore: []string{"SF104"},
				FailOn: "error", Sessions: []string{"ses_1", "ses_2"}, Settle: 90 * time.Second, Abandon: opencode.DefaultAbandon,
			},
		},
	}
	for _, tt := range tests {
		ios, _, _, _ := iostreams.Test()
		f := &cli.Factory{IOStreams: ios}
		var got *ScanOptions
		cmd := NewCmdScan(f, func(_ context.Context, o *ScanOptions) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		got.Factory = nil
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("%v:\ngot  %+v\nwant %+v", tt.args, *got, tt.want)
		}
	}
}

func TestRunScanPassesOptionsToTheScan(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	f := &cli.Factory{
		IOStreams: ios,
		Globals:   &cli.Globals{Format: "json"},
		Now:       func() time.Time { return now },
		Open:      openFixture,
	}
	var seen *scan.Options
	// A whole id is passed on as it is; prefixes are resolved against the
	// stores (testdata/script/scan.txtar).
	const sid = "ses_33c1f6ffffffO8I11AapoBFcd9"
	opts := &ScanOptions{
		Factory: f, Paths: []string{"x"}, FailOn: "info", Select: []string{"sf1"}, Ignore: []string{"SF104"},
		Sessions: []string{sid}, Settle: time.Minute,
		Scan: func(_ context.Context, _ []store.Store, o *scan.Options) (*scan.Result, error) {
			seen = o
			return &scan.Result{Stores: []scan.StoreResult{{Sessions: []scan.SessionSummary{{ID: sid}}}}}, nil
		},
	}
	if err := RunScan(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen.Select, []string{"SF1"}) || !reflect.DeepEqual(seen.Ignore, []string{"SF104"}) ||
		!reflect.DeepEqual(seen.Sessions, []string{sid}) || seen.Settle != time.Minute || !seen.Now().Equal(now) ||
		seen.Progress == nil {
		t.Errorf("scan options = %+v", seen)
	}
}

package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
	"github.com/sessfix/sessfix/pkg/watch"
)

func TestFlagsReachTheOptions(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var got *WatchOptions
	cmd := NewCmdWatch(&cli.Factory{IOStreams: ios}, func(_ context.Context, o *WatchOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--settle", "3s", "--abandon", "1m", "--poll", "5s", "-n", "-v", "--select", "SF1",
		"--ignore", "SF104", "--session", "ses_1", "--strategy", "SF103=strip", "--placeholder", "[x]", "a.db"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Settle != 3*time.Second || got.Abandon != time.Minute || got.Poll != 5*time.Second || !got.DryRun || !got.Verbose ||
		strings.Join(got.Select, ",") != "SF1" || strings.Join(got.Ignore, ",") != "SF104" || strings.Join(got.Sessions, ",") != "ses_1" ||
		strings.Join(got.Strategies, ",") != "SF103=strip" || got.Placeholder != "[x]" || strings.Join(got.Paths, ",") != "a.db" {
		t.Errorf("options %+v", got)
	}
}

// factory returns a factory over buffers that opens a real store of the
// broken fixture.
func factory(t *testing.T, format string) (*cli.Factory, *bytes.Buffer, string) {
	t.Helper()
	f, err := storetest.LoadExportFixture("../../testdata/sessions/preflight-blank-text/session.json")
	if err != nil {
		t.Fatal(err)
	}
	path := storetest.Materialize(t, store.ShapeSessions, t.TempDir(), f)
	ios, _, out, _ := iostreams.Test()
	return &cli.Factory{IOStreams: ios, Globals: &cli.Globals{Format: format}, Open: shapes.Open, Now: time.Now}, out, path
}

func TestRunWatchRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format string
		edit   func(*WatchOptions)
	}{
		{"negative settle", "text", func(o *WatchOptions) { o.Settle = -time.Second }},
		{"negative abandon", "text", func(o *WatchOptions) { o.Abandon = -time.Second }},
		{"negative poll", "text", func(o *WatchOptions) { o.Poll = -time.Second }},
		{"blank placeholder", "text", func(o *WatchOptions) { o.Placeholder = "  " }},
		{"unknown rule", "text", func(o *WatchOptions) { o.Select = []string{"SF999"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, path := factory(t, tc.format)
			ran := false
			o := &WatchOptions{Factory: f, Paths: []string{path}, Settle: time.Second, Abandon: time.Minute, Placeholder: "[x]",
				Watch: func(context.Context, watch.Options) error { ran = true; return nil }}
			tc.edit(o)
			err := RunWatch(context.Background(), o)
			var fe *cli.FlagError
			if !errors.As(err, &fe) {
				t.Errorf("error %v, want a usage error", err)
			}
			if ran {
				t.Error("watch ran despite a bad flag")
			}
		})
	}
}

// TestRunWatchPrintsJSONLines drives the real watcher until it repaired
// the fixture, then cancels it, and checks every stdout line is one JSON
// event.
func TestRunWatchPrintsJSONLines(t *testing.T) {
	f, out, path := factory(t, "json")
	t.Setenv("SESSFIX_STATE_DIR", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var repaired watch.Event
	o := &WatchOptions{Factory: f, Paths: []string{path}, Settle: time.Millisecond, Abandon: time.Minute, Placeholder: "[x]",
		Watch: func(ctx context.Context, wo watch.Options) error {
			report := wo.Report
			wo.Report = func(e watch.Event) {
				report(e)
				if e.Kind == watch.Repaired {
					repaired = e
					cancel()
				}
			}
			wo.Activity = func(store.Info) store.Activity { return store.Activity{State: store.ActivityNone} }
			w, err := watch.New(wo)
			if err != nil {
				return err
			}
			return w.Run(ctx)
		}}
	if err := RunWatch(ctx, o); err != nil {
		t.Fatal(err)
	}
	if repaired.Backup == "" {
		t.Fatalf("no repair; output:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Errorf("%d lines without --verbose, want the one repair:\n%s", len(lines), out)
	}
	var e watch.Event
	if err := json.Unmarshal([]byte(lines[0]), &e); err != nil {
		t.Fatalf("line %q is not JSON: %v", lines[0], err)
	}
	if e.Kind != watch.Repaired || e.Backup != repaired.Backup || e.Store == nil || filepath.Base(e.Store.Path) != "sessions" {
		t.Errorf("printed %+v, want the repair %+v", e, repaired)
	}
	// docs/watch.md: store has shape, path and notes (an array, as in
	// every other JSON document of sessfix).
	var raw struct {
		Store map[string]json.RawMessage `json:"store"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &raw); err != nil {
		t.Fatal(err)
	}
	if notes, ok := raw.Store["notes"]; !ok || string(notes) != "[]" {
		t.Errorf("store.notes is %q (present %v), want [] in %s", notes, ok, lines[0])
	}
}

func TestTextLine(t *testing.T) {
	at := time.Date(2026, 11, 21, 16, 8, 54, 0, time.Local)
	p := &printer{styles: report.NewStyles(false)}
	got := p.text(watch.Event{Time: at, Kind: watch.Repaired, Session: "ses_1", Title: "a title",
		Rules: []string{"SF101", "SF301"}, Edits: 3, Backup: "RUN", Message: "undo with `sessfix undo RUN`"})
	want := "16:08:54 repaired ses_1 \"a title\" SF101,SF301 (3 edits) backup RUN: undo with `sessfix undo RUN`"
	if got != want {
		t.Errorf("text line\ngot  %q\nwant %q", got, want)
	}
	info := &watch.StoreRef{Shape: store.ShapeSQLite, Path: "/d/opencode.db"}
	got = p.text(watch.Event{Time: at, Kind: watch.Warning, Store: info, Message: "cannot watch /d", Error: "no space"})
	if want := "16:08:54 warning: cannot watch /d: no space (sqlite store /d/opencode.db)"; got != want {
		t.Errorf("warning line\ngot  %q\nwant %q", got, want)
	}
	colored := (&printer{styles: report.NewStyles(true)}).text(watch.Event{Time: at, Kind: watch.Failed, Session: "ses_1"})
	if !strings.Contains(colored, "\x1b[") {
		t.Errorf("no colour on a terminal: %q", colored)
	}
}

func TestQuietAndVerbose(t *testing.T) {
	all := []watch.Kind{watch.Repaired, watch.WouldRepair, watch.SkippedBusy, watch.Unfixed, watch.Failed,
		watch.Warning, watch.StoreFound, watch.Started, watch.Stopped, watch.Rescan, watch.Checked, watch.Waiting}
	count := func(p *printer) (n int) {
		for _, k := range all {
			if p.shows(k) {
				n++
			}
		}
		return n
	}
	if n := count(&printer{verbose: true}); n != len(all) {
		t.Errorf("--verbose shows %d of %d kinds", n, len(all))
	}
	if n := count(&printer{}); n != 7 {
		t.Errorf("default shows %d kinds, want 7 (the ones that matter)", n)
	}
	q := &printer{quiet: true}
	if n := count(q); n != 3 || !q.shows(watch.Failed) || q.shows(watch.SkippedBusy) {
		t.Errorf("--quiet shows %d kinds, want repaired, would-repair and failed", n)
	}
}

// TestAStoreThatDoesNotExistYetIsWaitedFor: with no store yet watch does
// not fail (exit 3 would tell a service manager not to restart it); what
// exists but is no store still does.
func TestAStoreThatDoesNotExistYetIsWaitedFor(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	xdg := t.TempDir()
	f := &cli.Factory{IOStreams: ios, Globals: &cli.Globals{Format: "text"}, Open: shapes.Open, Discover: shapes.Discover,
		Env: func() shapes.Env { return shapes.Env{XDGDataHome: xdg} }, Now: time.Now}
	run := func(paths ...string) (watch.Options, error) {
		var got watch.Options
		err := RunWatch(context.Background(), &WatchOptions{Factory: f, Paths: paths, Placeholder: "[x]",
			Watch: func(_ context.Context, o watch.Options) error { got = o; return nil }})
		return got, err
	}
	// No path, and OpenCode never ran: the data dir is waited for.
	o, err := run()
	if err != nil {
		t.Fatalf("no store yet: %v", err)
	}
	if len(o.Stores) != 0 || o.Rediscover == nil || len(o.Places) == 0 || o.Places[0] != filepath.Join(xdg, "opencode") {
		t.Errorf("stores %d, places %v, rediscover set %v; want none, the data dir, set", len(o.Stores), o.Places, o.Rediscover != nil)
	}
	// A path that does not exist, and an empty directory.
	missing, empty := filepath.Join(t.TempDir(), "opencode"), t.TempDir()
	if o, err = run(missing, empty); err != nil || len(o.Stores) != 0 || strings.Join(o.Places, ",") != missing+","+empty {
		t.Errorf("missing path: err %v, %d stores, places %v", err, len(o.Stores), o.Places)
	}
	// A file that is no store is an operational error, as before.
	notStore := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notStore, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(notStore); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a file that is no store: %v, want the not-found error", err)
	}
}

// TestWatchReadsOpenCodesConfig: the watcher is given the factory's way to
// read what OpenCode reads outside its data dir (pkg/watch reads it for
// each examination), and none when the factory reads none.
func TestWatchReadsOpenCodesConfig(t *testing.T) {
	home := t.TempDir()
	for _, reads := range []bool{true, false} {
		f, _, path := factory(t, "text")
		if reads {
			f.OpenCodeEnv = func() ocenv.Env { return ocenv.Env{Home: home} }
		}
		var got watch.Options
		err := RunWatch(context.Background(), &WatchOptions{Factory: f, Paths: []string{path}, Placeholder: "[x]",
			Watch: func(_ context.Context, o watch.Options) error { got = o; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if (got.OpenCode != nil) != reads {
			t.Fatalf("factory reads OpenCode's environment: %v; the watcher's options read it: %v", reads, got.OpenCode != nil)
		}
		if first, second := got.OpenCode, got.OpenCode; reads && first() == second() {
			t.Errorf("the watcher reads OpenCode's environment once for every examination, not afresh")
		}
	}
}

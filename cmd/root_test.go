package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/internal/faultpoint"
	goldenfile "github.com/sessfix/sessfix/internal/opencodetest/golden"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"sessfix": func() {
			// Fault injection reads SESSFIX_FAULT_*, which only the
			// tests that stop sessfix at a numbered step set.
			faultpoint.Enable()
			os.Exit(Main())
		},
	})
}

const (
	broken  = "testdata/stores/broken.json"
	healthy = "testdata/stores/healthy.json"
)

type result struct {
	code   int
	stdout string
	stderr string
}

// run executes sessfix args on buffered streams. setup may adjust the
// factory and streams (terminal flags, environment, fake stores).
func run(t *testing.T, setup func(*cli.Factory, *iostreams.IOStreams), args ...string) result {
	t.Helper()
	return runCtx(t, context.Background(), setup, args...)
}

func runCtx(t *testing.T, ctx context.Context, setup func(*cli.Factory, *iostreams.IOStreams), args ...string) result {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := cli.New(cli.BuildInfo{Version: "1.0.0-test"})
	f.IOStreams = ios
	home := t.TempDir()
	f.Env = func() shapes.Env { return shapes.Env{Home: home} }
	f.OpenCodeEnv = func() ocenv.Env { return ocenv.Env{Home: home} }
	// A day after now: every fixture session has been quiet long enough
	// to count as abandoned, however recently its file was written.
	f.Now = func() time.Time { return time.Now().Add(24 * time.Hour) }
	if setup != nil {
		setup(f, ios)
	}
	code := Run(ctx, f, args)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func tty(_ *cli.Factory, ios *iostreams.IOStreams) {
	ios.SetStdoutTTY(true)
	ios.SetStderrTTY(true)
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

func TestScanExitCodes(t *testing.T) {
	locked := func(f *cli.Factory, _ *iostreams.IOStreams) {
		f.Open = func([]string) (*shapes.Discovery, error) {
			return nil, fmt.Errorf("%s is held by opencode (pid 4242): %w", broken, store.ErrLocked)
		}
	}
	unsupported := func(f *cli.Factory, _ *iostreams.IOStreams) {
		f.Open = func([]string) (*shapes.Discovery, error) {
			return nil, fmt.Errorf("/x/opencode.db is an opencode 2.x database (session_v2): %w", store.ErrUnsupported)
		}
	}
	tests := []struct {
		name   string
		setup  func(*cli.Factory, *iostreams.IOStreams)
		args   []string
		code   int
		stderr []string // substrings
	}{
		{"clean", nil, []string{"scan", healthy}, ExitOK, []string{"scanning export store " + healthy + " (1 session)", "no findings in 1 session"}},
		{"findings", nil, []string{"scan", broken}, ExitFindings, []string{"hint: run `sessfix fix " + broken + "` to repair"}},
		{"findings below fail-on", nil, []string{"scan", broken, "--select", "SF301", "--fail-on", "error"}, ExitOK, nil},
		{"warning at fail-on info", nil, []string{"scan", broken, "--select", "SF301", "--fail-on", "info"}, ExitFindings, nil},
		{"ignored away", nil, []string{"scan", broken, "--ignore", "SF1,SF3"}, ExitOK, nil},
		{"unknown rule", nil, []string{"scan", broken, "--select", "SF999"}, ExitUsage, []string{`sessfix: unknown rule code or prefix "SF999"`}},
		{"unknown ignore prefix", nil, []string{"scan", broken, "--ignore", "XX"}, ExitUsage, []string{`"XX"`}},
		{"bad fail-on", nil, []string{"scan", broken, "--fail-on", "fatal"}, ExitUsage, []string{"invalid --fail-on"}},
		{"bad flag", nil, []string{"scan", "--frobnicate"}, ExitUsage, []string{"sessfix: unknown flag: --frobnicate", "hint:"}},
		{"bad format", nil, []string{"scan", broken, "--format", "xml"}, ExitUsage, []string{`scan prints text, github, json, junit or sarif, not "xml"`}},
		{"bad color", nil, []string{"scan", broken, "--color", "sometimes"}, ExitUsage, []string{`invalid --color "sometimes"`}},
		{"unknown command", nil, []string{"scna"}, ExitUsage, []string{`unknown command "scna"`, "did you mean scan?"}},
		{"missing path", nil, []string{"scan", "testdata/no-such-store"}, ExitFailure,
			[]string{"sessfix: testdata/no-such-store does not exist", "hint: pass an OpenCode data dir"}},
		{"nothing discovered", nil, []string{"scan"}, ExitFailure,
			[]string{"sessfix: no opencode store found (looked in ", "hint: pass a path: sessfix scan ~/.local/share/opencode"}},
		{"unsupported", unsupported, []string{"scan", "/x/opencode.db"}, ExitFailure, []string{"opencode 2.x database", "hint:"}},
		{"locked", locked, []string{"scan", broken}, ExitLocked, []string{"held by opencode (pid 4242)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.setup, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if tt.code >= ExitUsage && r.stdout != "" {
				t.Errorf("a failed command printed on stdout:\n%s", r.stdout)
			}
		})
	}
}

func TestScanInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := runCtx(t, ctx, nil, "scan", broken)
	if r.code != ExitInterrupted {
		t.Errorf("exit code %d, want %d; stderr:\n%s", r.code, ExitInterrupted, r.stderr)
	}
	if !strings.Contains(r.stderr, "sessfix: interrupted") {
		t.Errorf("stderr = %q", r.stderr)
	}
}

func TestScanStoreListErrorExits3AfterReport(t *testing.T) {
	failing := func(f *cli.Factory, _ *iostreams.IOStreams) {
		f.Open = func(paths []string) (*shapes.Discovery, error) {
			d, err := shapes.Open(paths)
			if err != nil {
				return nil, err
			}
			d.Stores = append(d.Stores, unlistable{})
			return d, nil
		}
	}
	r := run(t, failing, "scan", broken)
	if r.code != ExitFailure {
		t.Errorf("exit code %d, want %d", r.code, ExitFailure)
	}
	if !strings.Contains(r.stdout, "SF151") {
		t.Errorf("findings of the readable store are missing:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "sessfix: cannot list the sessions of storage store /gone/storage: permission denied") {
		t.Errorf("stderr = %s", r.stderr)
	}
}

type unlistable struct{}

func (unlistable) Info() store.Info {
	return store.Info{Shape: store.ShapeStorage, Path: "/gone/storage"}
}
func (unlistable) List(context.Context) ([]store.SessionRef, error) {
	return nil, errors.New("permission denied")
}
func (unlistable) Load(context.Context, store.SessionRef) (*store.Session, error) {
	return nil, errors.New("not reached")
}
func (unlistable) Close() error             { return nil }
func (unlistable) Activity() store.Activity { return store.Activity{State: store.ActivityNone} }

func TestScanGolden(t *testing.T) {
	noColorEnv := func(_ *cli.Factory, ios *iostreams.IOStreams) {
		tty(nil, ios)
		ios.SetEnv(map[string]string{"NO_COLOR": "1"})
	}
	tests := []struct {
		file  string
		setup func(*cli.Factory, *iostreams.IOStreams)
		args  []string
	}{
		{"scan-piped.golden", nil, []string{"scan", broken, healthy}},
		{"scan-tty.golden", tty, []string{"scan", "--color=never", broken, healthy}},
		{"scan-tty-color.golden", tty, []string{"scan", broken, healthy}},
		{"scan.json.golden", nil, []string{"scan", "--format", "json", broken, healthy}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := run(t, tt.setup, tt.args...)
			if r.code != ExitFindings {
				t.Fatalf("exit code %d, want 1; stderr:\n%s", r.code, r.stderr)
			}
			golden(t, tt.file, r.stdout)
		})
	}

	t.Run("NO_COLOR", func(t *testing.T) {
		r := run(t, noColorEnv, "scan", broken, healthy)
		want, err := os.ReadFile("testdata/scan-tty.golden")
		if err != nil {
			t.Fatal(err)
		}
		if r.stdout != string(want) {
			t.Errorf("NO_COLOR on a terminal should print scan-tty.golden, got:\n%s", r.stdout)
		}
	})
	t.Run("color=always beats NO_COLOR", func(t *testing.T) {
		r := run(t, noColorEnv, "scan", "--color=always", broken, healthy)
		if !ansi.MatchString(r.stdout) {
			t.Errorf("no colour with --color=always:\n%s", r.stdout)
		}
	})
	t.Run("color=always piped is the plain lines, coloured", func(t *testing.T) {
		r := run(t, nil, "scan", "--color=always", broken, healthy)
		want, _ := os.ReadFile("testdata/scan-piped.golden")
		if !ansi.MatchString(r.stdout) || ansi.ReplaceAllString(r.stdout, "") != string(want) {
			t.Errorf("piped output with --color=always is not scan-piped.golden with colour:\n%s", r.stdout)
		}
	})
	t.Run("tty colour is the plain layout plus escapes", func(t *testing.T) {
		coloured, _ := os.ReadFile("testdata/scan-tty-color.golden")
		plain, _ := os.ReadFile("testdata/scan-tty.golden")
		if !ansi.Match(coloured) {
			t.Error("scan-tty-color.golden has no colour")
		}
		if got := ansi.ReplaceAllString(string(coloured), ""); got != string(plain) {
			t.Errorf("colour changes the layout:\n%s\nvs\n%s", got, plain)
		}
	})
}

func TestScanStderr(t *testing.T) {
	r := run(t, nil, "scan", broken, healthy)
	for _, want := range []string{
		"scanning export store " + broken + " (1 session)\n",
		"scanning export store " + healthy + " (1 session)\n",
		"3 findings in 1 of 2 sessions\n",
		"hint: run `sessfix fix " + broken + " " + healthy + "` to repair 3 of them\n",
		"hint: run `sessfix explain SF151` to read about the most frequent error (2 findings)\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	q := run(t, nil, "scan", "-q", broken, healthy)
	if q.stderr != "" {
		t.Errorf("-q stderr = %q, want nothing", q.stderr)
	}
	if q.stdout != r.stdout || q.code != r.code {
		t.Errorf("-q changed stdout or the exit code")
	}
	// On a terminal the summary and hints are part of the report, not stderr.
	tr := run(t, tty, "scan", "--color=never", broken)
	if strings.Contains(tr.stderr, "hint:") || !strings.Contains(tr.stdout, "hint: run `sessfix fix "+broken+"` to repair") {
		t.Errorf("terminal hints misplaced:\nstdout:\n%s\nstderr:\n%s", tr.stdout, tr.stderr)
	}
}

func TestScanOutputFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "findings.txt")
	r := run(t, tty, "scan", "--output", path, broken)
	if r.code != ExitFindings {
		t.Fatalf("exit code %d", r.code)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing with --output", r.stdout)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A file is never a terminal: the piped line format, without colour.
	piped := run(t, nil, "scan", broken)
	if string(got) != piped.stdout {
		t.Errorf("--output file:\n%s\nwant the piped format:\n%s", got, piped.stdout)
	}
	bad := run(t, nil, "scan", "--output", filepath.Join(t.TempDir(), "no", "dir", "f.txt"), broken)
	if bad.code != ExitFailure || !strings.Contains(bad.stderr, "cannot write the report to") {
		t.Errorf("unwritable --output: code %d, stderr %s", bad.code, bad.stderr)
	}
}

func TestScanSessionFilter(t *testing.T) {
	sessions := func(stdout string) []string {
		var doc struct {
			Stores []struct {
				Sessions []struct{ ID string }
			}
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		var ids []string
		for _, st := range doc.Stores {
			for _, s := range st.Sessions {
				ids = append(ids, s.ID)
			}
		}
		return ids
	}
	all := sessions(run(t, nil, "scan", "--format", "json", "../testdata/demo").stdout)
	if len(all) < 2 {
		t.Fatalf("demo store sessions %v, want several", all)
	}
	one := run(t, nil, "scan", "--format", "json", "--session", all[1], "../testdata/demo")
	if got := sessions(one.stdout); len(got) != 1 || got[0] != all[1] {
		t.Errorf("--session %s scanned %v", all[1], got)
	}
	// An id no store holds is an error, not an empty clean scan.
	r := run(t, nil, "scan", "--format", "json", "--session", "ses_none", broken)
	if r.code != ExitFailure || !strings.Contains(r.stderr, "session ses_none not found") {
		t.Errorf("exit code %d, stderr %q: want 3 naming the session", r.code, r.stderr)
	}
}

func TestScanShapesLocations(t *testing.T) {
	fx, err := storetest.LoadExportFixture(broken)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		shape store.Shape
		line  *regexp.Regexp // the SF104 on the blank user text
	}{
		{store.ShapeSQLite, regexp.MustCompile(`(?m)^/.*/opencode\.db:part/\d+ \(ses_33c1f6ffffffO8I11AapoBFcd9/msg_cc3e0a2b90007TIwsFVAjCqUB1/prt_cc3e0a2b9001BltghWe6MeMfoK\): error SF104 text part is whitespace-only$`)},
		{store.ShapeStorage, regexp.MustCompile(`(?m)^/.*/storage/part/msg_cc3e0a2b90007TIwsFVAjCqUB1/prt_cc3e0a2b9001BltghWe6MeMfoK\.json(:1)?: error SF104 text part is whitespace-only$`)},
		{store.ShapeSessions, regexp.MustCompile(`(?m)^/.*/sessions/ses_33c1f6ffffffO8I11AapoBFcd9/parts/msg_cc3e0a2b90007TIwsFVAjCqUB1/prt_cc3e0a2b9001BltghWe6MeMfoK\.json(:1)?: error SF104 text part is whitespace-only$`)},
	}
	for _, tt := range tests {
		t.Run(string(tt.shape), func(t *testing.T) {
			path := storetest.Materialize(t, tt.shape, t.TempDir(), fx)
			r := run(t, nil, "scan", "--select", "SF104", path)
			if r.code != ExitFindings {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			if !tt.line.MatchString(r.stdout) {
				t.Errorf("no line matching %s in:\n%s", tt.line, r.stdout)
			}
			if !strings.Contains(r.stderr, "scanning "+string(tt.shape)+" store "+path+" (1 session)") {
				t.Errorf("stderr:\n%s", r.stderr)
			}
		})
	}
}

package cmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/rogpeppe/go-internal/testscript"

	goldenfile "github.com/sessfix/sessfix/internal/opencodetest/golden"
)

// TestScripts runs testdata/script/*.txtar against the real sessfix command
// (TestMain registers it), as a user's shell would. Scripts run sessfix
// with exec (or exits, or watchuntil), never bare; go test -update rewrites
// the expected output that scripts compare with cmp.
func TestScripts(t *testing.T) {
	dirs := map[string]string{}
	for name, rel := range map[string]string{"STORES": "testdata/stores", "DEMO": "../testdata/demo", "SESSIONS": "../testdata/sessions", "REAL": "../testdata/real", "OPENCODE2": "../testdata/opencode2"} {
		abs, err := filepath.Abs(rel)
		if err != nil {
			t.Fatal(err)
		}
		dirs[name] = abs
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       goldenfile.Update(),
		Setup: func(env *testscript.Env) error {
			for name, dir := range dirs {
				env.Setenv(name, dir)
			}
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("XDG_DATA_HOME", "")
			for _, k := range []string{"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "OPENCODE_CONFIG", "OPENCODE_CONFIG_CONTENT", "OPENCODE_MODELS_PATH"} {
				env.Setenv(k, "") // OpenCode's config and models catalogue (SF213): the script's home's only
			}
			env.Setenv("XDG_STATE_HOME", "")
			env.Setenv("SESSFIX_STATE_DIR", "")
			env.Setenv("NO_COLOR", "")
			env.Setenv("TZ", "UTC")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      exits,
			"watchuntil": watchUntil,
			"encode":     encode,
		},
	})
}

// exits N PROG ARGS... runs PROG and fails unless it exits with code N.
// Its stdout and stderr are kept for the next stdout/stderr commands.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// watchuntil REGEXP ARGS... is a bounded run of `sessfix watch ARGS...`:
// it starts the watcher with its stdout in watch.out and its stderr in
// watch.err, waits (at most a minute) until watch.out matches REGEXP,
// stops it with SIGTERM, and fails unless it exits 143, as documented for
// SIGTERM.
func watchUntil(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: watchuntil REGEXP [WATCH ARGS...]")
	}
	re, err := regexp.Compile("(?m)" + args[0])
	if err != nil {
		ts.Fatalf("watchuntil: %v", err)
	}
	out, errOut := ts.MkAbs("watch.out"), ts.MkAbs("watch.err")
	stdout, err := os.Create(out)
	ts.Check(err)
	defer stdout.Close()
	stderr, err := os.Create(errOut)
	ts.Check(err)
	defer stderr.Close()
	cmd := exec.Command("sessfix", append([]string{"watch"}, args[1:]...)...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "NO_COLOR", "XDG_DATA_HOME", "XDG_STATE_HOME", "SESSFIX_STATE_DIR"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	ts.Check(cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(out)
		ts.Check(err)
		if re.Match(b) {
			break
		}
		select {
		case err := <-done:
			ts.Fatalf("watch stopped before its output matched %q: %v", args[0], err)
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			ts.Fatalf("watch output never matched %q", args[0])
		}
	}
	ts.Check(cmd.Process.Signal(syscall.SIGTERM))
	err = <-done
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		ts.Fatalf("watch stopped by SIGTERM: %v, want exit status 143", err)
	}
}

// encode ENC IN OUT writes the UTF-8 file IN as OUT in ENC: utf-16le-bom
// (what Windows PowerShell 5's > writes), utf-16le, or utf-8-bom.
func encode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: encode utf-16le-bom|utf-16le|utf-8-bom IN OUT")
	}
	in := ts.ReadFile(args[1])
	var out []byte
	switch args[0] {
	case "utf-8-bom":
		out = append([]byte("\xef\xbb\xbf"), in...)
	case "utf-16le-bom", "utf-16le":
		if args[0] == "utf-16le-bom" {
			out = []byte{0xff, 0xfe}
		}
		for _, u := range utf16.Encode([]rune(in)) {
			out = append(out, byte(u), byte(u>>8))
		}
	default:
		ts.Fatalf("encode: unknown encoding %q", args[0])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), out, 0o644))
}

//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/golden"
)

// sessfixBin is the sessfix binary built for this run.
var sessfixBin string

// versions are the pinned OpenCode releases, in the order
// docs/compatibility.md lists them; a scenario runs on those where its shape
// exists.
var versions = []string{opencodetest.V1_18, opencodetest.V1_1}

// alsoInstalled are releases single tests run on (vDropsPrompts: the last
// that drops a prompt by id order), installed up front with versions.
var alsoInstalled = []string{vDropsPrompts}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sessfix-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// SESSFIX_E2E_BIN runs the suite against a given binary (a release
	// build, say) instead of building one.
	sessfixBin = os.Getenv("SESSFIX_E2E_BIN")
	if sessfixBin == "" {
		sessfixBin = filepath.Join(dir, "sessfix")
		build := exec.Command("go", "build", "-o", sessfixBin, "github.com/sessfix/sessfix")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: go build sessfix: %v\n%s", err, out)
			return 1
		}
	}
	// Install every OpenCode release the tests run up front: a missing one
	// fails the run instead of skipping anything.
	for _, v := range append(slices.Clone(versions), alsoInstalled...) {
		if _, err := opencodetest.Install(v); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: install opencode-ai@%s: %v\n", v, err)
			return 1
		}
	}
	code := m.Run()
	cleanupBases()
	return code
}

// slots bounds how many OpenCode scenarios run at once (CI has 2 cores).
var slots = make(chan struct{}, 2)

// parallel runs the test beside the others, two OpenCode scenarios at a
// time (the slots): one at a time, the package left a core idle whenever
// it ran alone (its last minutes in the suite), and the scenarios share
// nothing but the built binary and the OpenCode installs, each in its own
// OpenCode home and temporary directories. Under -update the tests rewrite
// shared sections of docs/compatibility.md, so they run one after the other
// there, as before.
func parallel(t *testing.T) {
	t.Helper()
	if !golden.Update() {
		t.Parallel()
	}
}

// acquire takes a slot until the test ends.
func acquire(t *testing.T) {
	t.Helper()
	slots <- struct{}{}
	t.Cleanup(func() { <-slots })
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// sfResult is one sessfix run.
type sfResult struct {
	Args     []string
	Stdout   string
	Stderr   string
	ExitCode int
}

func (r *sfResult) String() string {
	return fmt.Sprintf("sessfix %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.Args, " "), r.ExitCode, r.Stdout, r.Stderr)
}

// sessfix runs the built binary with the OpenCode home's environment, in its
// project directory.
func sessfix(t *testing.T, e *opencodetest.Env, args ...string) *sfResult {
	t.Helper()
	return sessfixEnv(t, e, nil, args...)
}

// sessfixEnv is sessfix with more KEY=VALUE pairs in sessfix's environment
// only (OpenCode's runs do not see them).
func sessfixEnv(t *testing.T, e *opencodetest.Env, env []string, args ...string) *sfResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sessfixBin, args...)
	cmd.Dir = e.ProjectDir
	cmd.Env = append(e.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := &sfResult{Args: args, Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	default:
		t.Fatalf("sessfix %s: %v", strings.Join(args, " "), err)
	}
	return res
}

// scanDoc is the part of `sessfix scan --format json` (docs/json-output.md)
// the suite reads.
type scanDoc struct {
	Stores []struct {
		Shape string `json:"shape"`
		Path  string `json:"path"`
		Error string `json:"error"`
	} `json:"stores"`
	Findings []finding `json:"findings"`
}

type finding struct {
	Code          string `json:"code"`
	Severity      string `json:"severity"`
	Message       string `json:"message"`
	Session       string `json:"session"`
	MessageID     string `json:"message_id"`
	PartID        string `json:"part_id"`
	Fix           string `json:"fix"`
	Fixable       bool   `json:"fixable"`
	ProviderError string `json:"provider_error"`
	Index         string `json:"index"`
	ErrorType     string `json:"error_type"`
}

// scanFlags are passed to every scan (never to fix, which runs with its
// defaults as a user runs it): the suite scans right after it killed
// OpenCode, and with no settle window (--settle=0) what sessfix sees of
// OpenCode, no process holding the store any more, is what makes the
// killed turn count as abandoned at once. TestLiveTurnLeftAlone shows the
// same settings leave a live OpenCode's turn alone.
var scanFlags = []string{"--settle=0"}

// scanStore runs `sessfix scan --format json` on the data dir and returns
// the findings of one session.
func scanStore(t *testing.T, e *opencodetest.Env, session string) ([]finding, *sfResult) {
	t.Helper()
	return scanPath(t, e, e.DataDir(), session)
}

// scanPath is scanStore on any store path.
func scanPath(t *testing.T, e *opencodetest.Env, path, session string) ([]finding, *sfResult) {
	t.Helper()
	args := append([]string{"scan", "--format", "json"}, scanFlags...)
	res := sessfix(t, e, append(args, path)...)
	if res.ExitCode != 0 && res.ExitCode != 1 {
		t.Fatalf("scan failed\n%s", res)
	}
	var doc scanDoc
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("scan printed no JSON document: %v\n%s", err, res)
	}
	var out []finding
	for _, f := range doc.Findings {
		if f.Session == session {
			out = append(out, f)
		}
	}
	return out, res
}

// isPreflight reports whether a code is a preflight code (SF150–SF169).
func isPreflight(code string) bool {
	return len(code) == 5 && code >= "SF150" && code <= "SF169"
}

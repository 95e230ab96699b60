// Command record makes the real, healthy OpenCode stores kept under
// testdata/real/.
//
// For each pinned OpenCode version it installs the release from npm, drives
// it offline against internal/opencodetest/mockanthropic (thinking signed with
// mockanthropic.DefaultSecret), records three sessions — a plain one, a
// bash tool loop and a two-turn one resumed with --session — and copies
// only the session data (opencode.db, checkpointed so no -wal/-shm is
// needed, or the storage/ tree) to testdata/real/opencode-<version>/.
//
// With -families (default: all) it also records, with 1.18.33, one store
// per provider family into testdata/real/opencode-1.18.33-<family>/:
// google, zen-gemini (OpenCode Zen's Gemini) and amazon-bedrock (a tool loop
// and a two-turn session against internal/opencodetest/mockgemini and
// internal/opencodetest/mockbedrock), openai-compatible (DeepSeek
// and Kimi), openai-responses (openai) and zen (OpenCode Zen's GPT), whose
// sessions against internal/opencodetest/mockopenai are named by their title.
//
//	go run ./internal/opencodetest/cmd/record            # both versions, every family
//	go run ./internal/opencodetest/cmd/record -versions 1.18.33 -families ""
//	go run ./internal/opencodetest/cmd/record -versions "" -families google,openai-responses
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
)

func main() {
	versions := flag.String("versions", opencodetest.V1_18+","+opencodetest.V1_1, "comma-separated OpenCode versions")
	out := flag.String("out", "", "output directory (default <repo>/testdata/real)")
	flag.Parse()
	if *out == "" {
		root, err := opencodetest.RepoRoot()
		if err != nil {
			log.Fatal(err)
		}
		*out = filepath.Join(root, "testdata", "real")
	}
	for _, v := range strings.Split(*versions, ",") {
		if strings.TrimSpace(v) == "" {
			continue
		}
		start := time.Now()
		if err := record(strings.TrimSpace(v), *out); err != nil {
			log.Fatalf("%s: %v", v, err)
		}
		log.Printf("%s: recorded in %s", v, time.Since(start).Round(time.Second))
	}
	if err := recordFamilies(*out); err != nil {
		log.Fatal(err)
	}
}

func record(version, outRoot string) error {
	e, err := opencodetest.New(opencodetest.Options{Version: version})
	if err != nil {
		return err
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	if err := runSteps(ctx, e, version, []step{
		{false, "What is a good name for a cat?"},
		{false, "Please run a command for me [[tool:bash echo hello from bash]]"},
		{false, "Let's talk about Go testing."},
		{true, "And what about table-driven tests?"},
	}); err != nil {
		return err
	}
	for _, r := range e.Mock.Requests() {
		if r.Verdict != mockanthropic.Accepted {
			return fmt.Errorf("mock rejected request %d: %s", r.Index, r.Error)
		}
	}

	return save(e, filepath.Join(outRoot, "opencode-"+version), 3)
}

// step is one prompt of a recording: a new session, or the last one
// resumed.
type step struct {
	resume bool
	prompt string
}

// runSteps runs the steps on e, each a finished run that names its
// session; label names the recording in the log.
func runSteps(ctx context.Context, e *opencodetest.Env, label string, steps []step) error {
	last := ""
	for _, s := range steps {
		var (
			res *opencodetest.Result
			err error
		)
		if s.resume {
			res, err = e.Resume(ctx, last, s.prompt)
		} else {
			res, err = e.Prompt(ctx, s.prompt)
		}
		if err != nil {
			return err
		}
		if res.ExitCode != 0 || res.SessionID == "" {
			return fmt.Errorf("run failed\n%s", res)
		}
		last = res.SessionID
		log.Printf("%s: %q -> %s (%s)", label, s.prompt, res.SessionID, res.Duration.Round(time.Millisecond))
	}
	return nil
}

//go:build acceptance

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
)

// Prompts of the recorded base sessions.
const (
	promptLoop   = "Please run a command for me [[tool:bash echo hello from e2e]]"
	promptSecond = "Thanks. What does that output mean?"
	promptCut    = "Run this one too [[tool:bash echo cut after the result]]"
	markerCut    = "cut after the result"
)

// base is a healthy data dir recorded once per OpenCode version and copied
// into every scenario's OpenCode home.
type base struct {
	version string
	dir     string // a data dir: opencode.db (checkpointed) or storage/
	// loop is a session with a bash tool loop and a second turn:
	// user, assistant (tool), assistant (text), user, assistant (text).
	loop string
	// cut is a session whose tool loop was killed (SIGKILL) after the tool
	// result was stored, while the follow-up request was in flight: its
	// last answered assistant message is the final tool-loop message.
	cut string
	err error
	// env is the recording home. It stays until the run ends: OpenCode
	// 1.18 resumes a session in the directory it recorded, which is this
	// home's project directory.
	env *opencodetest.Env
}

var (
	basesMu sync.Mutex
	bases   = map[string]*baseOnce{}
)

type baseOnce struct {
	once sync.Once
	b    *base
}

// getBase records the version's base on first use (taking a slot while
// OpenCode runs) and fails the test if recording failed.
func getBase(t *testing.T, version string) *base {
	t.Helper()
	basesMu.Lock()
	bo := bases[version]
	if bo == nil {
		bo = &baseOnce{}
		bases[version] = bo
	}
	basesMu.Unlock()
	bo.once.Do(func() {
		slots <- struct{}{}
		defer func() { <-slots }()
		bo.b = recordBase(version)
	})
	if bo.b.err != nil {
		t.Fatalf("recording the healthy base on OpenCode %s: %v", version, bo.b.err)
	}
	return bo.b
}

// baseRoot holds the recorded bases.
var baseRoot string

// cleanupBases removes the recorded bases and their homes.
func cleanupBases() {
	basesMu.Lock()
	defer basesMu.Unlock()
	for _, bo := range bases {
		if bo.b != nil && bo.b.env != nil {
			bo.b.env.Close()
		}
	}
	if baseRoot != "" {
		os.RemoveAll(baseRoot)
	}
}

func recordBase(version string) *base {
	b := &base{version: version}
	if baseRoot == "" {
		dir, err := os.MkdirTemp("", "sessfix-e2e-base-")
		if err != nil {
			b.err = err
			return b
		}
		baseRoot = dir
	}
	b.dir = filepath.Join(baseRoot, version)
	b.err = b.record()
	return b
}

func (b *base) record() error {
	e, err := opencodetest.New(opencodetest.Options{Version: b.version})
	if err != nil {
		return err
	}
	b.env = e
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	res, err := e.Prompt(ctx, promptLoop)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 || res.SessionID == "" {
		return fmt.Errorf("tool loop failed\n%s", res)
	}
	b.loop = res.SessionID
	if res, err = e.Resume(ctx, b.loop, promptSecond); err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("second turn failed\n%s", res)
	}

	// The cut session: hold the follow-up request of the tool loop and
	// SIGKILL OpenCode once the tool result is stored.
	pause := e.Mock.Pause(mockanthropic.StageReceived, func(r *mockanthropic.Request) bool {
		return r.Chat && len(r.Parsed.PendingToolResults()) > 0 && strings.Contains(r.Parsed.LastUserText(), markerCut)
	})
	defer pause.Release()
	before, err := opencodetest.Sessions(e.DataDir())
	if err != nil {
		return err
	}
	proc, err := e.StartPrompt("", promptCut)
	if err != nil {
		return err
	}
	err = proc.KillAt(ctx, pause, func() bool {
		ids, _ := opencodetest.Sessions(e.DataDir())
		for _, id := range ids {
			if !slices.Contains(before, id) {
				b.cut = id
			}
		}
		if b.cut == "" {
			return false
		}
		msgs, err := opencodetest.LoadSession(e.DataDir(), b.cut)
		if err != nil {
			return false
		}
		for _, m := range msgs {
			for _, p := range m.Parts {
				if p.Type() == "tool" && opencodetest.Get(p.Data, "state.status") == "completed" {
					return true
				}
			}
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("killing the tool loop once its result is stored: %w", err)
	}
	pause.Release()

	for _, r := range e.Mock.Requests() {
		if r.Verdict != mockanthropic.Accepted {
			return fmt.Errorf("the mock rejected request %d of a healthy recording: %s", r.Index, r.Error)
		}
	}
	return e.SaveData(b.dir)
}

// onBase takes a slot until the test ends and gives the test a fresh
// OpenCode home of the version holding a copy of the version's base, with a
// caseRun on the base's loop session as stored.
func onBase(t *testing.T, version string) (*base, *caseRun) {
	t.Helper()
	b := getBase(t, version)
	acquire(t)
	e := opencodetest.NewT(t, opencodetest.Options{Version: version})
	b.adopt(t, e)
	d := dataDir{t: t, dir: e.DataDir()}
	return b, &caseRun{t: t, version: version, e: e, d: d, session: b.loop, msgs: d.session(b.loop)}
}

// adopt gives a fresh OpenCode home a copy of the base's data and runs it
// in the base's project directory: OpenCode 1.18 runs a resumed session in
// the directory it recorded, and `opencode run --session` started anywhere
// else gets the answer but never exits.
func (b *base) adopt(t *testing.T, e *opencodetest.Env) {
	t.Helper()
	if err := e.LoadData(b.dir); err != nil {
		t.Fatal(err)
	}
	e.ProjectDir = b.env.ProjectDir
}

//go:build acceptance

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
)

// sessionBytes is every stored record of a session, for comparing before
// and after a sessfix run.
func sessionBytes(t *testing.T, d dataDir, session string) string {
	t.Helper()
	b, err := json.Marshal(d.session(session))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLiveTurnLeftAlone holds a real OpenCode in the middle of a turn (the
// mock stops its stream after the first text delta). scan and fix run with
// no settle window (--settle=0), so that no time tells the turn is live:
// only OpenCode holding its store (the database's locks for 1.18.33, its log
// under the data dir for 1.1.65) does, as it is once a turn has been quiet
// for longer than the default window. They must leave the unfinished
// message alone. Once OpenCode is killed, nothing holds the store and fix
// with the same settings repairs the turn at once; OpenCode resumes the
// session.
func TestLiveTurnLeftAlone(t *testing.T) {
	parallel(t)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			_, c := onBase(t, v)
			e := c.e
			known := map[string]bool{}
			for _, m := range c.msgs {
				known[m.ID] = true
			}

			ctx := testCtx(t, 3*time.Minute)
			pause := e.Mock.Pause(mockanthropic.StageTextDelta, mockanthropic.ChatRequest)
			defer pause.Release()
			proc, err := e.StartPrompt(c.session, "Tell me more about it.")
			if err != nil {
				t.Fatal(err)
			}
			defer proc.Kill()
			select {
			case <-pause.Held():
			case <-proc.Done():
				res, _ := proc.Wait()
				t.Fatalf("opencode exited before the mock held its stream\n%s", res)
			case <-ctx.Done():
				t.Fatal("the mock's stream never reached the pause")
			}
			var open string
			for open == "" {
				for _, m := range c.d.session(c.session) {
					if !known[m.ID] && m.Role() == "assistant" && firstPart(m, "text") != nil {
						open = m.ID
					}
				}
				select {
				case <-ctx.Done():
					t.Fatal("OpenCode never stored the turn's text part")
				case <-time.After(100 * time.Millisecond):
				}
			}
			before := sessionBytes(t, c.d, c.session)

			fs, res := scanStore(t, e, c.session)
			for _, f := range fs {
				if f.MessageID == open {
					t.Errorf("scan reports %s on the message OpenCode is writing: %s\n%s", f.Code, f.Message, res)
				}
			}
			fix := sessfix(t, e, "fix", "--yes", "--settle=0", "--session", c.session, e.DataDir())
			if fix.ExitCode != 0 || !strings.Contains(fix.Stderr, "nothing to change") {
				t.Errorf("fix while OpenCode writes the turn: want exit 0 and nothing changed\n%s", fix)
			}
			if after := sessionBytes(t, c.d, c.session); after != before {
				t.Fatal("fix changed the session OpenCode is writing")
			}

			// OpenCode dies in the middle of the turn: nothing holds the
			// store, and fix repairs the turn at once.
			if _, err := proc.Kill(); err != nil {
				t.Fatal(err)
			}
			fix = sessfix(t, e, "fix", "--yes", "--settle=0", "--session", c.session, e.DataDir())
			if fix.ExitCode != 0 || !strings.Contains(fix.Stderr, "fixed 1 session") || !strings.Contains(fix.Stderr, "SF301") {
				t.Errorf("fix right after OpenCode was killed: want the unfinished turn repaired\n%s", fix)
			}
			if after := c.resume("continue"); after.State != "accepted" {
				t.Errorf("after the fix the session does not resume: %s", after)
			}
		})
	}
}

// TestFixRightAfterAFailedAttempt: seconds after OpenCode stored a failed
// attempt (well within the settle window), fix with its default settings
// repairs the session: a failed turn is finished, not in use.
func TestFixRightAfterAFailedAttempt(t *testing.T) {
	parallel(t)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			c := failedResume(t, "whitespace-text", v)
			fix := sessfix(t, c.e, "fix", "--yes", c.e.DataDir())
			// Another session OpenCode is still writing may be named as
			// skipped; the failed one must not be.
			if fix.ExitCode != 0 || !strings.Contains(fix.Stderr, "fixed ") || strings.Contains(fix.Stderr, "skipped session "+c.session) {
				t.Fatalf("fix right after the failed attempt: want the session repaired\n%s", fix)
			}
			left, res := scanStore(t, c.e, c.session)
			for _, f := range left {
				if f.Severity == "error" {
					t.Errorf("after the fix: %s %s\n%s", f.Code, f.Message, res)
				}
			}
			if after := c.resume("continue"); after.State != "accepted" {
				t.Errorf("after the fix the session does not resume: %s", after)
			}
		})
	}
}

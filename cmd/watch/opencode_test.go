//go:build acceptance

package watch_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/pkg/watch"
)

// TestRealOpenCodeKilledMidTool runs real OpenCode (1.18.33, SQLite) against
// the mock provider with watch running: while OpenCode runs a long bash
// tool, watch leaves the session alone, silently but for --verbose's
// waiting (the turn has nothing else wrong); once OpenCode is
// killed with SIGKILL, watch repairs the session, and resuming it with
// `opencode run --session` is accepted by the mock.
func TestRealOpenCodeKilledMidTool(t *testing.T) {
	t.Parallel()
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// A first turn creates the database.
	first, err := e.Prompt(ctx, "hello")
	if err != nil || first.ExitCode != 0 {
		t.Fatalf("first prompt: %v\n%s", err, first)
	}
	state := t.TempDir()
	p := startWatch(t, state, "--settle", settle.String(), e.DBPath())

	proc, err := e.StartPrompt("", "run it [[tool:bash sleep 60]]")
	if err != nil {
		t.Fatal(err)
	}
	var sid string
	for sid == "" {
		select {
		case <-ctx.Done():
			proc.Kill()
			t.Fatal("the bash tool never ran")
		case <-proc.Done():
			res, _ := proc.Wait()
			t.Fatalf("opencode exited before the tool ran\n%s", res)
		case <-time.After(100 * time.Millisecond):
		}
		ids, _ := opencodetest.Sessions(e.DataDir())
		for _, id := range ids {
			if id == first.SessionID {
				continue
			}
			if toolStatus(e, id) == "running" {
				sid = id
			}
		}
	}
	// OpenCode is alive and silent while the tool runs: watch must wait.
	busy := p.wait(func(r received) bool { return r.Kind == watch.Waiting && r.Session == sid }, time.Minute, "waiting")
	t.Logf("left alone while the tool ran: %s", busy.Message)
	if n := len(p.all(watch.SkippedBusy, sid)); n != 0 {
		t.Error("watch reported a healthy turn in progress as skipped-busy")
	}
	if n := len(p.all(watch.Repaired, sid)); n != 0 {
		t.Fatal("watch repaired the session while OpenCode was running its tool")
	}
	killed := time.Now()
	if _, err := proc.Kill(); err != nil {
		t.Fatal(err)
	}

	rep := p.wait(func(r received) bool { return r.Kind == watch.Repaired && r.Session == sid }, 2*time.Minute, "repaired")
	if rep.Time.Before(killed) {
		t.Errorf("repaired at %s, before OpenCode was killed at %s", rep.Time, killed)
	}
	t.Logf("repaired %v (%d edits), backup %s", rep.Rules, rep.Edits, rep.Backup)
	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Errorf("watch exit after SIGTERM: %v", err)
	}
	if st := toolStatus(e, sid); st != "error" {
		t.Errorf("tool status after the repair %q, want error (OpenCode's abort shape)", st)
	}

	e.Mock.Reset()
	res, err := e.Resume(ctx, sid, "are you there?")
	if err != nil {
		t.Fatal(err)
	}
	chat := e.Mock.ChatRequests()
	if len(chat) == 0 {
		t.Fatalf("the resume sent no chat request\n%s", res)
	}
	for _, r := range chat {
		if r.Verdict != mockanthropic.Accepted {
			t.Errorf("the mock rejected the resumed session: %s", r.Error)
		}
	}
	if res.ExitCode != 0 {
		t.Errorf("resume exited %d\n%s", res.ExitCode, res)
	}
}

// toolStatus is the state.status of the last tool part of a session's last
// assistant message, or "".
func toolStatus(e *opencodetest.Env, sid string) string {
	msgs, err := opencodetest.LoadSession(e.DataDir(), sid)
	if err != nil {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role() != "assistant" {
			continue
		}
		status := ""
		for _, part := range msgs[i].Parts {
			if part.Type() == "tool" {
				status, _ = opencodetest.Get(part.Data, "state.status").(string)
			}
		}
		return status
	}
	return ""
}

// TestRealOpenCodeFirstRunIsWatched starts watch on the data dir of an
// OpenCode that has never run: watch waits instead of exiting, and the
// database OpenCode's first run creates is found and its session
// examined.
func TestRealOpenCodeFirstRunIsWatched(t *testing.T) {
	t.Parallel()
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p := startWatch(t, t.TempDir(), e.DataDir())
	p.wait(func(r received) bool {
		return r.Kind == watch.Warning && strings.Contains(r.Message, "no store found yet")
	}, time.Minute, "waiting warning")

	first, err := e.Prompt(ctx, "hello")
	if err != nil || first.ExitCode != 0 {
		t.Fatalf("first prompt: %v\n%s", err, first)
	}
	found := p.wait(func(r received) bool { return r.Kind == watch.StoreFound }, time.Minute, "store-found")
	if found.Store == nil || found.Store.Path != e.DBPath() {
		t.Errorf("found %+v, want the database %s", found.Store, e.DBPath())
	}
	p.wait(func(r received) bool { return r.Kind == watch.Checked && r.Session == first.SessionID }, time.Minute, "checked")
	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Errorf("watch exit after SIGTERM: %v", err)
	}
}

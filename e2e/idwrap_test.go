//go:build acceptance

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// lastIDWrap is the last wrap of OpenCode's 48-bit id clock before now:
// ids minted after it sort before every id minted in the 2^36 ms before it
// (2026-08-14 11:19:55 UTC).
func lastIDWrap() time.Time {
	const period = int64(1) << 36
	return time.UnixMilli(time.Now().UnixMilli() / period * period)
}

// beforeWrap moves a session's messages to a month before the id clock's
// last wrap, as if they had been written then: each message's id is minted
// again at its creation time less the shift, and its times move with it
// (time_created, time.created, time.completed); its parts follow it, and
// the assistant messages name their user message by its new id (a JSON
// storage/ tree: the message file is written under its new id and the
// part directory moved, beforeWrapFiles). A real run
// cannot write before a wrap that has passed (OpenCode takes its ids from
// the clock), so the rows are edited.
func beforeWrap(t *testing.T, d dataDir, session string, msgs []opencodetest.Message) {
	t.Helper()
	created := func(m opencodetest.Message) time.Time {
		tm, _ := m.Data["time"].(map[string]any)
		ms, _ := tm["created"].(float64)
		return time.UnixMilli(int64(ms))
	}
	shift := created(msgs[0]).Sub(lastIDWrap()) + 30*24*time.Hour
	ms := shift.Milliseconds()
	ids := map[string]string{}
	for _, m := range msgs {
		ids[m.ID] = store.NewIDSeq(created(m).Add(-shift)).Ascending(store.PrefixMessage)
	}
	if !d.sqlite() {
		beforeWrapFiles(t, d, session, msgs, ids, ms)
		return
	}
	db := d.db()
	defer db.Close()
	for _, m := range msgs {
		id := ids[m.ID]
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`UPDATE part SET message_id = ? WHERE message_id = ?`, []any{id, m.ID}},
			{`UPDATE message SET id = ?, time_created = time_created - ?,
				data = json_set(data, '$.time.created', json_extract(data, '$.time.created') - ?) WHERE id = ?`,
				[]any{id, ms, ms, m.ID}},
			{`UPDATE message SET data = json_set(data, '$.time.completed', json_extract(data, '$.time.completed') - ?)
				WHERE id = ? AND json_extract(data, '$.time.completed') IS NOT NULL`, []any{ms, id}},
			{`UPDATE message SET data = json_set(data, '$.parentID', ?) WHERE json_extract(data, '$.parentID') = ?`,
				[]any{id, m.ID}},
		} {
			if _, err := db.Exec(q.sql, q.args...); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
	}
}

// TestResumeAcrossIDWrap: a session written before the id clock's last
// wrap (2026-08-14) and resumed after it holds messages whose id order
// inverts their time order at the wrap. Users of earlier OpenCode releases
// report such sessions dropping every prompt (anomalyco/opencode#43277:
// last answer 2026-08-13, prompts from 2026-08-17 unanswered); OpenCode
// 1.18.33 resumes it, sending the request, and stores the new turn after
// the old ones. sessfix must not call the inversion a defect, before the
// resume or after it (SF204 leaves out what a wrap explains, and SF305
// finds no prompt left unanswered): nothing is reported for the session
// either time.
func TestResumeAcrossIDWrap(t *testing.T) {
	parallel(t)
	_, c := onBase(t, opencodetest.V1_18)
	beforeWrap(t, c.d, c.session, c.msgs)
	findings := func(when string) {
		t.Helper()
		for _, f := range findingsOn(t, c.e, c.session) {
			t.Errorf("%s: %s %s %s", when, f.Code, f.Severity, f.Message)
		}
	}
	findings("written before the wrap")

	if v := c.resume("Are you still there?"); v.State != "accepted" {
		t.Fatalf("OpenCode 1.18.33 did not resume the session across the wrap: %+v", v)
	}
	msgs := c.d.session(c.session)
	if n, last := len(msgs), msgs[len(msgs)-1]; n != len(c.msgs)+2 || last.Role() != "assistant" || last.ID > msgs[0].ID {
		t.Fatalf("after the resume: %d messages, the last %s %s (want %d, an assistant whose id sorts before the first's %s)",
			n, last.Role(), last.ID, len(c.msgs)+2, msgs[0].ID)
	}
	findings("resumed after the wrap")
}

// vDropsPrompts is the last OpenCode release seen ending a turn by id order
// (the run loop's `lastUser.id < lastAssistant.id`); 1.18.15 is the first
// that answers a prompt whose id sorts before the last answer's.
const vDropsPrompts = "1.18.14"

// TestDroppedPromptAfterIDWrap proves SF305 on real OpenCode 1.18.14
// (SQLite): see droppedPrompt.
func TestDroppedPromptAfterIDWrap(t *testing.T) { droppedPrompt(t, vDropsPrompts) }

// TestDroppedPromptAfterIDWrap11 proves SF305 on real OpenCode 1.1.65 (a
// JSON storage/ tree, ordered by id: the dropped prompt sorts first of
// all): see droppedPrompt.
func TestDroppedPromptAfterIDWrap11(t *testing.T) { droppedPrompt(t, opencodetest.V1_1) }

// droppedPrompt: a session answered before the id clock's last wrap (its
// records moved there: see beforeWrap) and prompted after it. Before the
// prompt sessfix reports nothing. The prompt is stored and dropped:
// OpenCode exits 0, sends no request and stores no answer, as users of
// such releases report. SF305 then names the prompt and the fork command,
// and `fix` leaves it to the user; the fork command, run as printed (with
// --yes: no terminal to ask on), makes a copy with fresh ids that the same
// OpenCode resumes, sending a request the mock accepts, and on which
// sessfix finds nothing.
func droppedPrompt(t *testing.T, version string) {
	parallel(t)
	acquire(t)
	e := opencodetest.NewT(t, opencodetest.Options{Version: version})
	ctx := testCtx(t, 8*time.Minute)
	res, err := e.Prompt(ctx, "What is a good name for a cat?")
	if err != nil || res.ExitCode != 0 || res.SessionID == "" {
		t.Fatalf("first turn: %v\n%s", err, res)
	}
	session := res.SessionID
	d := dataDir{t: t, dir: e.DataDir()}
	beforeWrap(t, d, session, d.session(session))
	if got := findingsOn(t, e, session); len(got) != 0 {
		t.Fatalf("answered before the wrap, not prompted since: %+v", got)
	}

	e.Mock.Reset()
	res, err = e.Resume(ctx, session, "Are you still there?")
	if err != nil {
		t.Fatal(err)
	}
	msgs := d.session(session)
	var prompt opencodetest.Message
	for _, m := range msgs {
		if m.Role() == "user" && len(m.Parts) > 0 && strings.Contains(fmt.Sprint(m.Parts[0].Data["text"]), "still there") {
			prompt = m
		}
	}
	if res.ExitCode != 0 || len(e.Mock.ChatRequests()) != 0 || len(msgs) != 3 || prompt.ID == "" {
		t.Fatalf("OpenCode %s did not drop the prompt: exit %d, %d requests, %d messages\n%s",
			version, res.ExitCode, len(e.Mock.ChatRequests()), len(msgs), res)
	}
	got := findingsOn(t, e, session)
	if len(got) != 1 || got[0].Code != "SF305" || got[0].Severity != "error" || got[0].MessageID != prompt.ID {
		t.Fatalf("findings %+v, want one SF305 error on the dropped prompt %s", got, prompt.ID)
	}
	if plan := sessfix(t, e, "fix", "--dry-run", e.DataDir()); !strings.Contains(plan.Stdout, "left SF305") {
		t.Errorf("fix --dry-run does not leave SF305 for the user:\n%s", plan)
	}
	m := regexp.MustCompile("`sessfix (fork [^`]*)`").FindStringSubmatch(got[0].Message)
	if m == nil {
		t.Fatalf("SF305 names no fork command: %s", got[0].Message)
	}
	fork := sessfix(t, e, append(shellWords(t, m[1]), "--yes")...)
	id := regexp.MustCompile(`new session (ses_\w+)`).FindStringSubmatch(fork.Stdout + fork.Stderr)
	if fork.ExitCode != 0 || id == nil {
		t.Fatalf("`sessfix %s --yes`:\n%s", m[1], fork)
	}

	e.Mock.Reset()
	res, err = e.Resume(ctx, id[1], "Are you still there?")
	if err != nil {
		t.Fatal(err)
	}
	chat := e.Mock.ChatRequests()
	if res.ExitCode != 0 || len(chat) == 0 || chat[len(chat)-1].Verdict != mockanthropic.Accepted {
		t.Fatalf("OpenCode %s on the fork %s: exit %d, %d requests\n%s", version, id[1], res.ExitCode, len(chat), res)
	}
	if got := findingsOn(t, e, id[1]); len(got) != 0 {
		t.Errorf("the fork, resumed: %+v", got)
	}
}

// beforeWrapFiles is beforeWrap for a JSON storage/ tree: the messages
// get the ids in ids (old to new) and move back ms milliseconds.
func beforeWrapFiles(t *testing.T, d dataDir, session string, msgs []opencodetest.Message, ids map[string]string, ms int64) {
	t.Helper()
	root := filepath.Join(d.dir, "storage")
	set := func(s, path string, v any) string {
		out, err := sjson.Set(s, path, v)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, m := range msgs {
		old := filepath.Join(root, "message", session, m.ID+".json")
		b, err := os.ReadFile(old)
		if err != nil {
			t.Fatal(err)
		}
		s := set(string(b), "id", ids[m.ID])
		s = set(s, "time.created", gjson.Get(s, "time.created").Int()-ms)
		if c := gjson.Get(s, "time.completed"); c.Exists() {
			s = set(s, "time.completed", c.Int()-ms)
		}
		if p := ids[gjson.Get(s, "parentID").String()]; p != "" {
			s = set(s, "parentID", p)
		}
		if err := os.WriteFile(filepath.Join(root, "message", session, ids[m.ID]+".json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(old); err != nil {
			t.Fatal(err)
		}
		from, to := filepath.Join(root, "part", m.ID), filepath.Join(root, "part", ids[m.ID])
		if err := os.Rename(from, to); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		parts, _ := os.ReadDir(to)
		for _, p := range parts {
			path := filepath.Join(to, p.Name())
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(set(string(b), "messageID", ids[m.ID])), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// shellWords splits a command line sessfix printed for a shell: words
// apart by spaces, single quotes around a word with others in it.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile(`'((?:[^']|'\\'')*)'|(\S+)`).FindAllStringSubmatch(line, -1) {
		if m[2] != "" {
			out = append(out, m[2])
		} else {
			out = append(out, strings.ReplaceAll(m[1], `'\''`, `'`))
		}
	}
	return out
}

// findingsOn is sessionFindings without the scan's output.
func findingsOn(t *testing.T, e *opencodetest.Env, session string) []finding {
	t.Helper()
	fs, _ := sessionFindings(t, e, session)
	return fs
}

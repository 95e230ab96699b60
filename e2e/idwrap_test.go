//go:build acceptance

package e2e

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/pkg/store"
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
// the assistant messages name their user message by its new id. A real run
// cannot write before a wrap that has passed (OpenCode takes its ids from
// the clock), so the rows are edited.
func beforeWrap(t *testing.T, d dataDir, msgs []opencodetest.Message) {
	t.Helper()
	created := func(m opencodetest.Message) time.Time {
		tm, _ := m.Data["time"].(map[string]any)
		ms, _ := tm["created"].(float64)
		return time.UnixMilli(int64(ms))
	}
	shift := created(msgs[0]).Sub(lastIDWrap()) + 30*24*time.Hour
	ms := shift.Milliseconds()
	db := d.db()
	defer db.Close()
	for _, m := range msgs {
		id := store.NewIDSeq(created(m).Add(-shift)).Ascending(store.PrefixMessage)
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
// resume or after it (SF204 leaves out what a wrap explains): nothing is
// reported for the session either time.
func TestResumeAcrossIDWrap(t *testing.T) {
	t.Parallel()
	_, c := onBase(t, opencodetest.V1_18)
	beforeWrap(t, c.d, c.msgs)
	findings := func(when string) {
		t.Helper()
		res := sessfix(t, c.e, append(append([]string{"scan", "--format", "json"}, scanFlags...), c.e.DataDir())...)
		var doc scanDoc
		if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
			t.Fatalf("scan JSON: %v\n%s", err, res)
		}
		for _, f := range doc.Findings {
			if f.Session == c.session {
				t.Errorf("%s: %s %s %s", when, f.Code, f.Severity, f.Message)
			}
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

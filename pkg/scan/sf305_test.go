package scan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// wrap2026 is when OpenCode's 48-bit id clock last wrapped.
var wrap2026 = time.UnixMilli(26 << 36)

// turnAt is a message of a dropped-prompt session: its id minted at `at`,
// as OpenCode mints it, and its body's time.created.
func turnAt(role string, at time.Time, extra string) *store.Message {
	id := store.NewIDSeq(at).Ascending(store.PrefixMessage)
	m := storetest.NewMessage(id, role, fmt.Sprintf(`{"id":%q,"role":%q,"time":{"created":%d}%s}`, id, role, at.UnixMilli(), extra),
		`{"type":"text","text":"hello"}`)
	m.Created = at.UnixMilli()
	return m
}

func droppedPromptSession(msgs ...*store.Message) *store.Session {
	return &store.Session{ID: "ses_2b28944fffff85dc4PToKKeEYM", Store: store.Info{Shape: store.ShapeSQLite, Path: "/data/two words/opencode.db"}, Messages: msgs}
}

func sf305(t *testing.T, s *store.Session) []Finding {
	t.Helper()
	var out []Finding
	for _, f := range CheckSession(s, &Options{Now: func() time.Time { return time.UnixMilli(1e13) }}) {
		if f.Code == SF305 {
			out = append(out, f)
		}
	}
	return out
}

// A session answered before the id clock's wrap (2026-08-14) and prompted
// after it: the prompt's id sorts before the answer's, which OpenCode up to
// 1.18.14 reads as a turn already answered. SF305 names the prompt, the
// answer, the wrap and the fork command for the session's store.
func TestDroppedPromptAfterIDWrap(t *testing.T) {
	before := wrap2026.Add(-30 * 24 * time.Hour)
	u1 := turnAt("user", before, "")
	a1 := turnAt("assistant", before.Add(time.Second), fmt.Sprintf(`,"parentID":%q,"finish":"stop"`, u1.ID))
	u2 := turnAt("user", wrap2026.Add(3*24*time.Hour), "")
	got := sf305(t, droppedPromptSession(u1, a1, u2))
	if len(got) != 1 || got[0].MessageID != u2.ID || got[0].Severity != Error {
		t.Fatalf("SF305 %+v, want one error on the prompt %s", got, u2.ID)
	}
	for _, want := range []string{
		`"` + a1.ID + `"`,
		"minted before the id clock wrapped on 2026-08-14 11:19:55.136 utc",
		"`sessfix fork ses_2b28944fffff85dc4PToKKeEYM --store '/data/two words/opencode.db'`",
		"1.18.15",
	} {
		if !strings.Contains(got[0].Message, want) {
			t.Errorf("message %q lacks %q", got[0].Message, want)
		}
	}

	// Two prompts dropped, in the order of a JSON-era store (by id: the
	// prompts sort first of all): one finding, on the first prompt.
	u3 := turnAt("user", wrap2026.Add(4*24*time.Hour), "")
	got = sf305(t, droppedPromptSession(u2, u3, u1, a1))
	if len(got) != 1 || got[0].MessageID != u2.ID || !strings.Contains(got[0].Message, "prompt (and 1 later prompt) written after the answer") {
		t.Errorf("two prompts first in id order: SF305 %+v, want one on %s counting the later one", got, u2.ID)
	}

	// A client whose clock is behind the one that wrote the answer, in one
	// period of the id clock: the same drop, said so.
	now := wrap2026.Add(60 * 24 * time.Hour)
	u1, a1 = turnAt("user", now, ""), turnAt("assistant", now.Add(time.Minute), `,"finish":"stop"`)
	u2 = turnAt("user", now.Add(30*time.Second), "")
	u2.Created = now.Add(2 * time.Minute).UnixMilli()
	if got := sf305(t, droppedPromptSession(u1, a1, u2)); len(got) != 1 || !strings.Contains(got[0].Message, "written on a clock ahead of this prompt's") {
		t.Errorf("skewed clock: SF305 %+v, want one naming the clock", got)
	}
}

// What OpenCode up to 1.18.14 answers is not reported: the session as the
// wrap left it before any new prompt, a prompt whose id sorts after the
// answer (not answered yet), an answer that asked for tools or whose
// finish is unknown or missing, and a prompt whose later copy in an export
// is the one at the end.
func TestDroppedPromptNotReported(t *testing.T) {
	before, after := wrap2026.Add(-30*24*time.Hour), wrap2026.Add(3*24*time.Hour)
	u1 := turnAt("user", before, "")
	answer := func(finish string) *store.Message {
		extra := ""
		if finish != "" {
			extra = `,"finish":"` + finish + `"`
		}
		return turnAt("assistant", before.Add(time.Second), extra)
	}
	for name, s := range map[string]*store.Session{
		"answered before the wrap": droppedPromptSession(u1, answer("stop")),
		"prompt after the answer":  droppedPromptSession(u1, answer("stop"), turnAt("user", before.Add(time.Minute), "")),
		"answer asked for tools":   droppedPromptSession(u1, answer("tool-calls"), turnAt("user", after, "")),
		"finish unknown":           droppedPromptSession(u1, answer("unknown"), turnAt("user", after, "")),
		"answer not finished":      droppedPromptSession(u1, answer(""), turnAt("user", after, "")),
		"prompt answered since": func() *store.Session {
			u2 := turnAt("user", after, "")
			return droppedPromptSession(u1, answer("stop"), u2, turnAt("assistant", before.Add(2*time.Second), fmt.Sprintf(`,"parentID":%q,"finish":"stop"`, u2.ID)))
		}(),
		"duplicate copy at the end": func() *store.Session {
			a := answer("stop")
			return droppedPromptSession(u1, a, u1)
		}(),
	} {
		if got := sf305(t, s); len(got) != 0 {
			t.Errorf("%s: SF305 %+v, want none", name, got)
		}
	}
}

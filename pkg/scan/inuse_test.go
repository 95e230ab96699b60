package scan

import (
	"fmt"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func TestStreaming(t *testing.T) {
	mod := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	body := fmt.Sprintf(`{"role":"assistant","time":{"created":%d}}`, mod.UnixMilli())
	m := storetest.NewMessage("m", "assistant", body, `{"type":"step-start"}`)
	m.Modified = mod
	s := &store.Session{Messages: []*store.Message{m}}
	seen := store.Activity{State: store.ActivityNone}
	at := func(s *store.Session, d time.Duration) *Context {
		now := mod.Add(d)
		return &Context{Session: s, Opts: &Options{Now: func() time.Time { return now },
			Activity: func(store.Info) store.Activity { return seen }}}
	}
	if !Streaming(at(s, 2*time.Second), m) || !InUse(at(s, 2*time.Second)).InUse {
		t.Error("an unfinished message modified 2s ago is not streaming")
	}
	if Streaming(at(s, 10*time.Second), m) {
		t.Error("an unfinished message idle past the settle window, in a store nobody has open, counts as streaming")
	}
	seen.State = store.ActivityOpen
	if !Streaming(at(s, time.Minute), m) {
		t.Error("an unfinished message in a store OpenCode has open, quiet for a minute, is not streaming")
	}
	seen.State = store.ActivityNone
	done := storetest.NewMessage("d", "assistant", `{"role":"assistant","time":{"created":1,"completed":2}}`)
	if Streaming(at(s, time.Second), done) {
		t.Error("a completed message counts as streaming")
	}
	// Only the newest assistant message can be streaming.
	later := storetest.NewMessage("l", "assistant", fmt.Sprintf(`{"role":"assistant","time":{"created":%d}}`, mod.UnixMilli()))
	two := &store.Session{Messages: []*store.Message{m, storetest.NewMessage("u", "user", `{"role":"user"}`), later}}
	if c := at(two, time.Second); Streaming(c, m) || !Streaming(c, later) {
		t.Error("an older unfinished message counts as streaming, or the newest does not")
	}
	// A fresh copy of an old session: new file time, records from months ago.
	old := storetest.NewMessage("o", "assistant", fmt.Sprintf(`{"role":"assistant","time":{"created":%d}}`, mod.Add(-90*24*time.Hour).UnixMilli()))
	old.Modified = mod
	copied := &store.Session{Messages: []*store.Message{old}}
	if Streaming(at(copied, time.Second), old) {
		t.Error("a copied session whose records are 90 days old counts as streaming")
	}
	if got := opencode.LastActivity(s); !got.Equal(mod) {
		t.Errorf("LastActivity = %v, want %v", got, mod)
	}
}

// testMessage builds a message in memory (storetest.NewMessage).
var testMessage = storetest.NewMessage

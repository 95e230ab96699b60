package opencode

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// toolIDSession is a session of n assistant messages, each with one tool
// call; every third call has an empty id and every fifth repeats the
// first call's.
func toolIDSession(n int) *store.Session {
	s := &store.Session{ID: "ses"}
	for i := range n {
		id := fmt.Sprintf("toolu_%d", i)
		switch {
		case i > 0 && i%3 == 0:
			id = ""
		case i > 0 && i%5 == 0:
			id = "toolu_0"
		}
		tool := fmt.Sprintf(`{"type":"tool","callID":%q,"tool":"bash","state":{"status":"completed","input":{},"output":"ok"}}`, id)
		s.Messages = append(s.Messages, testMessage(fmt.Sprintf("msg_%04d", i), "assistant",
			`{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5"}`, `{"type":"step-start"}`, tool))
	}
	return s
}

// ShowsBefore and ShowsFrom answer, for every message, what Shows answers
// for it alone (they compute the session's facts once).
func TestShowsBeforeAgreesWithShows(t *testing.T) {
	s := toolIDSession(40)
	for _, d := range []Defect{DefectToolUseIDs, DefectToolMissing, DefectForeignCallIDs} {
		for _, until := range []string{"", "msg_0020"} {
			var want []*store.Message
			for _, m := range s.Messages {
				if m.ID == until {
					break
				}
				if d.Shows(s, m) {
					want = append(want, m)
				}
			}
			if got := d.ShowsBefore(s, until); !slices.Equal(got, want) {
				t.Errorf("%v ShowsBefore(%q) = %d messages, Shows alone finds %d", d, until, len(got), len(want))
			}
			if got := d.ShowsFrom(s, "msg_0003", until); !slices.Equal(got, want) {
				t.Errorf("%v ShowsFrom(%q) = %d messages, Shows alone finds %d", d, until, len(got), len(want))
			}
		}
	}
	if n := len(DefectToolUseIDs.ShowsBefore(s, "")); n == 0 {
		t.Fatal("the session's empty and repeated ids show nothing")
	}
}

// BenchmarkShowsBeforeToolUseIDs is ShowsBefore of SF166's defect over a
// 4,000-message session: one pass over the session's tool parts, not one
// per message.
func BenchmarkShowsBeforeToolUseIDs(b *testing.B) {
	s := toolIDSession(4000)
	b.ResetTimer()
	for range b.N {
		if len(DefectToolUseIDs.ShowsBefore(s, "")) == 0 {
			b.Fatal("nothing shows the defect")
		}
	}
}

package scan

import (
	"errors"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

func TestUnreadableSessionLoadFailure(t *testing.T) {
	s := &store.Session{ID: "ses_3b938957ffffNnlPTlzDVPmdaI"}
	s.Broken = append(s.Broken,
		&store.Record{Kind: store.KindSession, ID: s.ID, Err: errors.New("database disk image is malformed")},
		&store.Record{Kind: store.KindSession, ID: s.ID, Err: &store.ParseError{Reason: "truncated JSON"}})
	fs := CheckSession(s, &Options{Select: []string{"SF201"}})
	if len(fs) != 2 {
		t.Fatalf("got %d findings, want 2: %+v", len(fs), fs)
	}
	if fs[0].Message != "session could not be loaded: database disk image is malformed" || fs[0].Fix != "" {
		t.Errorf("load failure: message %q fix %q; want no fix", fs[0].Message, fs[0].Fix)
	}
	if fs[1].Message != "session record is unreadable: truncated JSON" || fs[1].Fix != "quarantine" {
		t.Errorf("broken session record: message %q fix %q", fs[1].Message, fs[1].Fix)
	}
	for _, f := range fs {
		if f.Severity != Error || f.SessionID != s.ID {
			t.Errorf("finding %+v: want an error in session %s", f, s.ID)
		}
	}
}

// TestUnreadableWithoutFixWhenItCannotBeMoved: quarantine needs a record it
// can name and back up; other entries are reported without a fix.
func TestUnreadableWithoutFixWhenItCannotBeMoved(t *testing.T) {
	s := &store.Session{ID: "ses_3b938957ffffNnlPTlzDVPmdaI"}
	s.Broken = append(s.Broken,
		&store.Record{Kind: store.KindMessage, Err: &store.ParseError{Reason: "missing info"}},
		&store.Record{Kind: store.KindPart, ID: "prt_1fed60a2d001L1aSnzPt5FQJMD", Err: &store.ParseError{Entry: true, Reason: "is a directory"}},
		&store.Record{Kind: store.KindPart, ID: "prt_1fed60a2d002L1aSnzPt5FQJMD", Err: &store.ParseError{Entry: true, Reason: "permission denied"}},
		&store.Record{Kind: store.KindPart, ID: "prt_1fed60a2d003L1aSnzPt5FQJMD", Err: &store.ParseError{Reason: "truncated JSON"}})
	want := []struct{ fix, says string }{
		{"", "has no id"},
		{"", "move it out of the store by hand"},
		{"", "give sessfix read access"},
		{"quarantine", "truncated JSON"},
	}
	fs := CheckSession(s, &Options{Select: []string{"SF201"}})
	if len(fs) != len(want) {
		t.Fatalf("got %d findings, want %d: %+v", len(fs), len(want), fs)
	}
	for i, w := range want {
		if fs[i].Fix != w.fix || !strings.Contains(fs[i].Message, w.says) {
			t.Errorf("finding %d: fix %q, message %q; want fix %q and a message saying %q", i, fs[i].Fix, fs[i].Message, w.fix, w.says)
		}
	}
}

package scan

import (
	"errors"
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

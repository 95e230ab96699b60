package export_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func TestExportDamagedEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	body := `{
  "info": {"id": "ses_x", "title": "t"},
  "messages": [
    7,
    {"parts": []},
    {
      "info": {"id": "msg_a", "sessionID": "ses_other", "role": "user"},
      "parts": [
        {"id": "prt_a", "type": "text"},
        {"id": "prt_b", "text": "no type"}
      ]
    },
    {"info": {"id": "msg_b"}, "parts": [{"id": "prt_c", "type": "text"}]}
  ]
}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	st := storetest.OpenOne(t, path)
	s, err := st.Load(context.Background(), store.SessionRef{ID: "ses_x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Messages) != 1 || s.Messages[0].SessionID != "ses_x" || s.Messages[0].Loc.Line != 7 || len(s.Messages[0].Parts) != 1 {
		t.Fatalf("messages %+v", s.Messages)
	}
	if p := s.Messages[0].Parts[0]; p.Loc.Line != 9 || string(p.Raw) != `{"id": "prt_a", "type": "text"}` || p.MessageID != "msg_a" {
		t.Errorf("part %+v", p)
	}
	want := []struct {
		kind   store.Kind
		id     string
		line   int
		reason string
	}{
		{store.KindMessage, "", 4, "not an object"},
		{store.KindMessage, "", 5, "missing info"},
		{store.KindPart, "prt_b", 10, "missing type"},
		{store.KindMessage, "msg_b", 13, "missing role"},
	}
	if len(s.Broken) != len(want) {
		t.Fatalf("broken %d, want %d", len(s.Broken), len(want))
	}
	for i, w := range want {
		b := s.Broken[i]
		var pe *store.ParseError
		if b.Kind != w.kind || b.ID != w.id || b.Loc.Line != w.line || !errors.As(b.Err, &pe) || pe.Reason != w.reason || b.Loc.Path != path {
			t.Errorf("broken %d: %s %q %v %q, want %s %q line %d %q", i, b.Kind, b.ID, b.Loc, b.Err, w.kind, w.id, w.line, w.reason)
		}
	}
	if len(s.Orphans) != 1 || s.Orphans[0].ID != "prt_c" {
		t.Errorf("orphans %v: the part of the message without a role", s.Orphans)
	}
	if _, err := st.Load(context.Background(), store.SessionRef{ID: "ses_y"}); err == nil {
		t.Error("loaded a session the file does not hold")
	}
}

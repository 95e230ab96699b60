package storetest

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// Sample returns two sessions whose message times ascend with their
// ids, so every shape loads them in the same order.
func Sample() []*Fixture {
	a := &Fixture{
		ID:    "ses_7ffffffffff0aaaaaaaaaaaaaa",
		Title: "fix the <build> & tests",
		Info:  json.RawMessage(`{"id":"ses_7ffffffffff0aaaaaaaaaaaaaa","slug":"brave-otter","directory":"/work/x","version":"1.18.33","time":{"created":1767225600000,"updated":1767225609000},"extra":{"kept":true}}`),
		Messages: []Message{
			{Body: json.RawMessage(`{"id":"msg_0000000000010000000000000a","role":"user","time":{"created":1767225601000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`),
				Parts: []Part{
					{Body: json.RawMessage(`{"id":"prt_0000000000010000000000000a","type":"text","text":"hi \u00e9 \"quoted\""}`)},
				}},
			{Body: json.RawMessage(`{"id":"msg_0000000000020000000000000b","role":"assistant","parentID":"msg_0000000000010000000000000a","time":{"created":1767225602000,"completed":1767225603000},"finish":"stop","unknownKey":[1,2,{"deep":null}]}`),
				Parts: []Part{
					{Body: json.RawMessage(`{"id":"prt_0000000000020000000000000a","type":"step-start"}`)},
					{Body: json.RawMessage(`{"id":"prt_0000000000020000000000000b","type":"reasoning","text":"think","metadata":{"anthropic":{"signature":"sig"}},"time":{"start":1767225602100,"end":1767225602200}}`)},
					{Body: json.RawMessage(`{"id":"prt_0000000000020000000000000c","type":"text","text":"hello"}`)},
				}},
		},
	}
	b := &Fixture{
		ID:    "ses_7fffffffffe0bbbbbbbbbbbbbb",
		Title: "second",
		Messages: []Message{
			{ID: "msg_0000000000030000000000000c", Body: json.RawMessage(`{"role":"user","time":{"created":1767225700000}}`),
				Parts: []Part{{ID: "prt_0000000000030000000000000a", Body: json.RawMessage(`{"type":"text","text":"again"}`)}}},
		},
	}
	return []*Fixture{a, b}
}

// RecordPath returns where Materialize writes a record in a JSON shape: the
// message file when pid is "", else the part file.
func RecordPath(shape store.Shape, root, sid, mid, pid string) string {
	switch shape {
	case store.ShapeStorage:
		if pid != "" {
			return filepath.Join(root, "part", mid, pid+".json")
		}
		return filepath.Join(root, "message", sid, mid+".json")
	case store.ShapeProject:
		if pid != "" {
			return filepath.Join(root, "session", "part", sid, mid, pid+".json")
		}
		return filepath.Join(root, "session", "message", sid, mid+".json")
	case store.ShapeSessions:
		if pid != "" {
			return filepath.Join(root, sid, "parts", mid, pid+".json")
		}
		return filepath.Join(root, sid, "messages", mid+".json")
	}
	return ""
}

// ExecSQL runs statements on the database at path with a read-write
// connection of its own, failing the test on the first error.
func ExecSQL(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// Load loads the session id from st, failing the test when it cannot.
func Load(t testing.TB, st store.Store, id string) *store.Session {
	t.Helper()
	s, err := st.Load(context.Background(), store.SessionRef{ID: id})
	if err != nil {
		t.Fatalf("storetest: load %s from %s: %v", id, st.Info().Path, err)
	}
	return s
}

// MessageIDs returns the ids of the session's messages, in order.
func MessageIDs(s *store.Session) []string {
	var ids []string
	for _, m := range s.Messages {
		ids = append(ids, m.ID)
	}
	return ids
}

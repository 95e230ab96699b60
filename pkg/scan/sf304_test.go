package scan

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// recordedSession loads a session OpenCode 1.18.33 wrote
// (testdata/compaction-1.18.33-*.json: its message rows' ids and data,
// each with its part rows' in id order, as runs like TestFailedCompaction's
// left them).
func recordedSession(t *testing.T, name string) *store.Session {
	t.Helper()
	b, err := os.ReadFile("testdata/compaction-1.18.33-" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID   string          `json:"id"`
		Data json.RawMessage `json:"data"`
	}
	var rows []struct {
		row
		Parts []row `json:"parts"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	s := &store.Session{ID: "ses_dc87d0098ffeZKLERXs2kow78x", Store: store.Info{Shape: store.ShapeSQLite, Path: "/store/opencode.db"}}
	for _, r := range rows {
		var role struct{ Role string }
		if err := json.Unmarshal(r.Data, &role); err != nil {
			t.Fatal(err)
		}
		m := storetest.NewMessage(r.ID, role.Role, string(r.Data))
		m.SessionID = s.ID
		for _, p := range r.Parts {
			pt := storetest.NewMessage(p.ID, "", string(p.Data), string(p.Data)).Parts[0]
			pt.ID, pt.MessageID, pt.SessionID = p.ID, r.ID, s.ID
			m.Parts = append(m.Parts, pt)
		}
		s.Messages = append(s.Messages, m)
	}
	return s
}

func recordedFindings(s *store.Session) []Finding {
	return CheckSession(s, &Options{Now: func() time.Time { return time.UnixMilli(1e13) }})
}

// A compaction OpenCode 1.18.33 completed after a context overflow (the
// compaction request, its finished summary, the prompt replayed and
// answered) scans clean: nothing above info.
func TestRecordedCompletedCompactionIsClean(t *testing.T) {
	s := recordedSession(t, "completed")
	if req, _ := opencode.PendingCompaction(s); req != nil {
		t.Errorf("the completed compaction %s is read as pending", req.ID)
	}
	for _, f := range recordedFindings(s) {
		if f.Severity > Info {
			t.Errorf("%s %s: %s", f.Code, f.Severity, f.Message)
		}
	}
}

// A compaction the provider refused, and the next prompt's compaction
// refused again: SF304 at error level on the newest summary message, and
// no other finding above info.
func TestRecordedRefusedCompaction(t *testing.T) {
	s := recordedSession(t, "refused")
	newest := s.Messages[len(s.Messages)-1]
	var got []Finding
	for _, f := range recordedFindings(s) {
		if f.Severity > Info {
			got = append(got, f)
		}
	}
	if len(got) != 1 || got[0].Code != SF304 || got[0].Severity != Error || got[0].MessageID != newest.ID {
		t.Fatalf("findings above info %+v, want SF304 at error on %s", got, newest.ID)
	}
	// An index in the compaction's error is the compaction request's, not
	// the history's: no failed attempt (SF302) is read from it.
	refused := newest.Raw
	newest.Raw = []byte(strings.Replace(string(refused), "input length and `max_tokens` exceed context limit", "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks", 1))
	for _, f := range recordedFindings(s) {
		if f.Code == SF302 {
			t.Errorf("the compaction's error is read as a failed attempt of the history: %+v", f)
		}
	}
	// The same session while the newest compaction is still being written
	// (no error, no time.completed yet) is not reported.
	newest.Raw = []byte(`{"role":"assistant","parentID":"` + newest.Get("parentID").String() + `","mode":"compaction","agent":"compaction","summary":true,"time":{"created":1796227957840}}`)
	for _, f := range recordedFindings(s) {
		if f.Code == SF304 {
			t.Errorf("a compaction in progress is reported: %+v", f)
		}
	}
}

// A compaction OpenCode 1.18.33 was killed in (SIGKILL while the provider
// held the compaction request, TestKilledCompaction): its summary message
// has no time.completed, no error, no parts. OpenCode runs the compaction
// again before the next prompt, so it is not SF304's, and SF301 reports
// the summary at info only (closed, it would be a failed compaction).
func TestRecordedKilledCompaction(t *testing.T) {
	s := recordedSession(t, "killed")
	summary := s.Messages[len(s.Messages)-1]
	if got := opencode.StoppedCompaction(s); got != summary {
		t.Fatalf("StoppedCompaction = %v, want the newest message %s", got, summary.ID)
	}
	if opencode.FailedCompaction(s) != nil {
		t.Error("the killed compaction is read as a failed one")
	}
	found := false
	for _, f := range recordedFindings(s) {
		if f.Severity > Info {
			t.Errorf("%s %s: %s", f.Code, f.Severity, f.Message)
		}
		found = found || f.Code == SF301 && f.MessageID == summary.ID && f.Fix == ""
	}
	if !found {
		t.Error("SF301 does not report the killed summary at info")
	}
}

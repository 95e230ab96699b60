//go:build acceptance

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// TestRebuiltSessionRecordResumes: a session of a real OpenCode 1.1.65
// storage/ tree whose record file is gone. No real run leaves this state
// (OpenCode writes the record before the first message); the removal is the
// edit, standing for a record deleted by hand or quarantined by an older
// sessfix. `sessfix fix --yes` with its default flags rebuilds the record
// from the messages (SF203, rebuildSessionRecord) where 1.1.65 reads it,
// and a real `opencode run --session` on 1.1.65 then continues the session:
// the mock accepts its request.
func TestRebuiltSessionRecordResumes(t *testing.T) {
	parallel(t)
	_, c := onBase(t, opencodetest.V1_1)
	e := c.e
	record := filepath.Join(e.StorageDir(), "session", "global", c.session+".json")
	if err := os.Remove(record); err != nil {
		t.Fatalf("remove the session record: %v", err)
	}
	res := sessfix(t, e, "scan", "--format", "json")
	var doc scanDoc
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("scan JSON: %v\n%s", err, res)
	}
	found := false
	for _, f := range doc.Findings {
		found = found || f.Session == c.session && f.Code == "SF203"
	}
	if !found {
		t.Fatalf("scan does not report the missing record:\n%s", res)
	}
	if res := sessfix(t, e, "fix", "--yes"); res.ExitCode != 0 || !strings.Contains(res.Stdout+res.Stderr, "rebuild") {
		t.Fatalf("fix --yes:\n%s", res)
	}
	body, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("the rebuilt record is not where 1.1.65 reads it: %v", err)
	}
	t.Logf("rebuilt record:\n%s", body)
	if v := c.resume("Please continue"); v.State != "accepted" {
		t.Fatalf("opencode run --session after the fix: %+v", v)
	}
}

package fix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// rebuildClock is a day after the recorded 1.1.65 store was written.
var rebuildClock = time.UnixMilli(1795276815495).Add(24 * time.Hour)

// rebuildStore copies the recorded 1.1.65 store and edits it with edit
// (given the store and the tool-loop session's record file). It returns
// the copy, the pipeline, the session's id and its record's path.
func rebuildStore(t *testing.T, edit func(s *realstore.Store, record string)) (*realstore.Store, *Pipeline, string) {
	t.Helper()
	rs := realstore.Copy(t, ocrelease.V1_1)
	record := filepath.Join(rs.Path, "session", "global", rs.SessionID+".json")
	if _, err := os.Stat(record); err != nil {
		t.Fatal(err)
	}
	edit(rs, record)
	return rs, testPipelineAt(t, rebuildClock), record
}

// planOf plans the store's sessions and returns the outcome of session id.
func planOf(t *testing.T, p *Pipeline, path, id string) (store.Store, Outcome) {
	t.Helper()
	st := storetest.OpenOne(t, path)
	targets, err := p.Targets(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range collect(t, p.Plan, targets) {
		if o.ID == id {
			return st, o
		}
	}
	t.Fatalf("no plan for session %s", id)
	return nil, Outcome{}
}

// rewriteFiles replaces old with new in every message file of the session.
func rewriteMessages(t *testing.T, rs *realstore.Store, old, new string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(rs.Path, "message", rs.SessionID, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("message files: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(strings.ReplaceAll(string(b), old, new)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A session of the 1.1.65 storage tree whose record file is gone (the state
// a store is left in by a session record removed by hand, or quarantined by
// an older sessfix): SF203 is repaired by writing the record again from
// the messages, where OpenCode reads it (storage/session/global/ for a
// directory outside git), the session then scans clean, and undo removes
// the rebuilt record again, byte for byte.
func TestRebuildMissingSessionRecord(t *testing.T) {
	rs, p, record := rebuildStore(t, func(_ *realstore.Store, record string) {
		if err := os.Remove(record); err != nil {
			t.Fatal(err)
		}
	})
	before := storetest.State(t, rs.Path, store.ShapeStorage)
	st, o := planOf(t, p, rs.Path, rs.SessionID)
	if !o.Changes() || len(o.Plan.Fixed) != 1 || o.Plan.Fixed[0].Finding.Code != "SF203" || o.Plan.Fixed[0].Strategy != "rebuild" {
		t.Fatalf("plan %+v, want SF203 fixed by rebuild", o.Plan)
	}
	eds := o.Plan.Changes.Edits
	if len(eds) != 1 || eds[0].Op != store.OpAdd || eds[0].Kind != store.KindSession || eds[0].Mutation != "rebuildSessionRecord" {
		t.Fatalf("edits %+v, want one added session record", eds)
	}
	run, err := p.Apply(context.Background(), st, []Outcome{o})
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("the rebuilt record is not where opencode reads it: %v", err)
	}
	want := map[string]string{
		"id": rs.SessionID, "slug": "recovered", "version": "sessfix", "projectID": "global",
		"directory": "/tmp/opencodetest-2502875499/project", "title": `"Please run a command for me [[tool:bash echo hello from ba…`, // the first line, cut to 60 characters
		"time.created": "1795276809009", "time.updated": "1795276809878",
	}
	for key, v := range want {
		if got := gjson.GetBytes(body, key).String(); got != v {
			t.Errorf("rebuilt %s = %q, want %q", key, got, v)
		}
	}
	s := storetest.Load(t, storetest.OpenOne(t, rs.Path), rs.SessionID)
	if s.InfoMissing || s.Info == nil {
		t.Fatalf("the session still has no record")
	}
	if fs := scan.CheckSession(s, p.Scan); len(fs) != 0 {
		t.Errorf("after the rebuild: %+v, want no findings", fs)
	}
	if _, err := backup.Undo(context.Background(), p.Write.Backup, run, false); err != nil {
		t.Fatal(err)
	}
	if after := storetest.State(t, rs.Path, store.ShapeStorage); after != before {
		t.Fatalf("after undo:\n%s\nwant:\n%s", after, before)
	}
}

// Where the messages do not say with confidence which project and
// directory the session belongs to, nothing is written and the finding
// says why.
func TestRebuildSessionRecordNeedsConfidence(t *testing.T) {
	for _, c := range []struct {
		name, why string
		edit      func(t *testing.T, rs *realstore.Store)
	}{
		{"directories disagree", "its assistant messages disagree on path.cwd", func(t *testing.T, rs *realstore.Store) {
			f := filepath.Join(rs.Path, "message", rs.SessionID, "msg_1fed62645001RcAUDlvnjmmMH6.json")
			b, _ := os.ReadFile(f)
			if err := os.WriteFile(f, []byte(strings.Replace(string(b), `/project"`, `/other"`, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"no project has the worktree", "no project record of the store has its worktree /home/dev/repo", func(t *testing.T, rs *realstore.Store) {
			rewriteMessages(t, rs, `"root": "/"`, `"root": "/home/dev/repo"`)
		}},
		{"two projects have the worktree", "more than one project record has its worktree /home/dev/repo", func(t *testing.T, rs *realstore.Store) {
			rewriteMessages(t, rs, `"root": "/"`, `"root": "/home/dev/repo"`)
			for _, id := range []string{"a1", "b2"} {
				body := `{"id": "` + id + `", "worktree": "/home/dev/repo", "time": {"created": 1, "updated": 1}}`
				if err := os.WriteFile(filepath.Join(rs.Path, "project", id+".json"), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"no assistant records its directory", "no assistant message records path.cwd", func(t *testing.T, rs *realstore.Store) {
			rewriteMessages(t, rs, `"cwd":`, `"cwd0":`)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, p, record := rebuildStore(t, func(rs *realstore.Store, record string) {
				if err := os.Remove(record); err != nil {
					t.Fatal(err)
				}
				c.edit(t, rs)
			})
			_, o := planOf(t, p, rs.Path, rs.SessionID)
			var sf203 *Unfixed
			for i, u := range o.Plan.Unfixed {
				if u.Finding.Code == "SF203" && u.Finding.MessageID == "" {
					sf203 = &o.Plan.Unfixed[i]
				}
			}
			if sf203 == nil || sf203.Finding.Fix != "" || !strings.Contains(sf203.Finding.Message, "sessfix cannot rebuild it: "+c.why) {
				t.Fatalf("plan %+v, want SF203 unfixed because %s", o.Plan, c.why)
			}
			for _, e := range changesOf(o) {
				if e.Kind == store.KindSession {
					t.Errorf("a session record is written: %+v", e)
				}
			}
			if _, err := os.Stat(record); !os.IsNotExist(err) {
				t.Errorf("record file: %v, want none", err)
			}
		})
	}
}

// changesOf is the edits of an outcome's plan.
func changesOf(o Outcome) []store.Edit {
	if o.Plan == nil || o.Plan.Changes == nil {
		return nil
	}
	return o.Plan.Changes.Edits
}

// An unreadable session record (SF201) used to stay: quarantining it alone
// leaves the messages without a record (SF203), a worse store. The rebuilt
// record now takes its place in the same plan, and undo brings the
// unreadable file back byte for byte. Where no record can be rebuilt, the
// quarantine is still refused.
func TestQuarantinedSessionRecordIsRebuilt(t *testing.T) {
	const truncated = "{\n  \"id\": \"ses_"
	rs, p, record := rebuildStore(t, func(_ *realstore.Store, record string) {
		if err := os.WriteFile(record, []byte(truncated), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	before := storetest.State(t, rs.Path, store.ShapeStorage)
	st, o := planOf(t, p, rs.Path, rs.SessionID)
	if !o.Changes() || len(o.Plan.Fixed) != 1 || o.Plan.Fixed[0].Finding.Code != "SF201" || len(o.Plan.Unfixed) != 0 {
		t.Fatalf("plan %+v, want SF201 fixed and nothing left", o.Plan)
	}
	eds := o.Plan.Changes.Edits
	if len(eds) != 2 || eds[0].Op != store.OpQuarantine || eds[1].Mutation != "rebuildSessionRecord" {
		t.Fatalf("edits %+v, want the quarantine, then the rebuilt record", eds)
	}
	run, err := p.Apply(context.Background(), st, []Outcome{o})
	if err != nil {
		t.Fatal(err)
	}
	if body, err := os.ReadFile(record); err != nil || gjson.GetBytes(body, "projectID").Str != "global" {
		t.Fatalf("record after the fix: %s %v, want the rebuilt one", body, err)
	}
	s := storetest.Load(t, storetest.OpenOne(t, rs.Path), rs.SessionID)
	if fs := scan.CheckSession(s, p.Scan); len(fs) != 0 {
		t.Errorf("after the fix: %+v, want no findings", fs)
	}
	if _, err := backup.Undo(context.Background(), p.Write.Backup, run, false); err != nil {
		t.Fatal(err)
	}
	if after := storetest.State(t, rs.Path, store.ShapeStorage); after != before {
		t.Fatalf("after undo:\n%s\nwant:\n%s", after, before)
	}

	rs, p, record = rebuildStore(t, func(rs *realstore.Store, record string) {
		if err := os.WriteFile(record, []byte(truncated), 0o644); err != nil {
			t.Fatal(err)
		}
		rewriteMessages(t, rs, `"root": "/"`, `"root": "/home/dev/repo"`)
	})
	_, o = planOf(t, p, rs.Path, rs.SessionID)
	if o.Changes() || len(o.Plan.Unfixed) != 1 || !strings.Contains(o.Plan.Unfixed[0].Reason, "SF203") {
		t.Fatalf("plan %+v, want SF201 unfixed: the quarantine would leave SF203", o.Plan)
	}
	if b, _ := os.ReadFile(record); string(b) != truncated {
		t.Errorf("record changed: %q", b)
	}
}

// A second record of the same session under another project (SF201,
// "duplicate session record") is quarantined: the record read first stays,
// so the session keeps its record. The plan used to be refused as if the
// quarantine left the session without one (SF203).
func TestDuplicateSessionRecordIsQuarantined(t *testing.T) {
	var dup string
	rs, p, _ := rebuildStore(t, func(rs *realstore.Store, record string) {
		b, err := os.ReadFile(record)
		if err != nil {
			t.Fatal(err)
		}
		dup = filepath.Join(rs.Path, "session", "zzz", rs.SessionID+".json")
		if err := os.MkdirAll(filepath.Dir(dup), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dup, b, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	before := storetest.State(t, rs.Path, store.ShapeStorage)
	st, o := planOf(t, p, rs.Path, rs.SessionID)
	if !o.Changes() || len(o.Plan.Fixed) != 1 || o.Plan.Fixed[0].Finding.Code != "SF201" || len(o.Plan.Unfixed) != 0 {
		t.Fatalf("plan %+v, want SF201 fixed", o.Plan)
	}
	if eds := o.Plan.Changes.Edits; len(eds) != 1 || eds[0].Op != store.OpQuarantine || eds[0].Loc.Path != dup {
		t.Fatalf("edits %+v, want the duplicate quarantined alone", eds)
	}
	run, err := p.Apply(context.Background(), st, []Outcome{o})
	if err != nil {
		t.Fatal(err)
	}
	s := storetest.Load(t, storetest.OpenOne(t, rs.Path), rs.SessionID)
	if fs := scan.CheckSession(s, p.Scan); len(fs) != 0 || s.Info == nil {
		t.Errorf("after the fix: %+v (record %v), want no findings", fs, s.Info != nil)
	}
	if _, err := backup.Undo(context.Background(), p.Write.Backup, run, false); err != nil {
		t.Fatal(err)
	}
	if after := storetest.State(t, rs.Path, store.ShapeStorage); after != before {
		t.Fatalf("after undo:\n%s\nwant:\n%s", after, before)
	}
}

package watch_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
	"github.com/sessfix/sessfix/pkg/watch"
)

// copies returns n copies of a fixture, each with its own session id.
func copies(f *storetest.Fixture, n int) []*storetest.Fixture {
	var out []*storetest.Fixture
	old := []byte(f.ID)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("ses_%012x%s", 0x33c1f6000000+i, "SigtermCopyAbc")
		nw := []byte(id)
		c := &storetest.Fixture{ID: id, Title: fmt.Sprintf("copy %d", i), Info: bytes.ReplaceAll(f.Info, old, nw)}
		for _, m := range f.Messages {
			cm := storetest.Message{ID: m.ID, Body: bytes.ReplaceAll(m.Body, old, nw)}
			for _, p := range m.Parts {
				cm.Parts = append(cm.Parts, storetest.Part{ID: p.ID, Body: bytes.ReplaceAll(p.Body, old, nw)})
			}
			c.Messages = append(c.Messages, cm)
		}
		out = append(out, c)
	}
	return out
}

// TestSIGTERMLeavesOldOrNewState stops watch with SIGTERM at random points
// while it repairs many sessions of a JSON store (one repair writes several
// files), then checks every session: either all its files are what they
// were, or all the files its backup entry lists hold exactly what the
// journal says the repair left, and nothing else changed. Never a mix.
func TestSIGTERMLeavesOldOrNewState(t *testing.T) {
	t.Parallel()
	const sessions, rounds = 80, 4
	sessionsTotal := map[string]int{}
	for round := 0; round < rounds; round++ {
		fs := copies(fixture(t, "preflight-blank-text"), sessions)
		path := storetest.Materialize(t, store.ShapeSessions, t.TempDir(), fs...)
		old := time.Now().Add(-time.Hour)
		before := map[string]map[string]string{}
		for _, f := range fs {
			dir := filepath.Join(path, f.ID)
			filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
				if err == nil {
					os.Chtimes(p, old, old)
				}
				return err
			})
			before[f.ID] = hashFiles(t, dir)
		}
		state := t.TempDir()
		p := startWatch(t, state, "--settle", "1s", path)
		time.Sleep(time.Duration(rand.IntN(2500)) * time.Millisecond)
		if err := p.stop(syscall.SIGTERM); err != nil {
			t.Errorf("round %d: exit after SIGTERM: %v", round, err)
		}
		entries := journal(t, state)
		for _, f := range fs {
			dir := filepath.Join(path, f.ID)
			now := hashFiles(t, dir)
			e := entries[f.ID]
			switch {
			case equalMaps(now, before[f.ID]):
				if e != nil && e.State == backup.StateApplied {
					t.Errorf("round %d: %s: journal says applied, files are untouched", round, f.ID)
				}
				sessionsTotal["old"]++
			case e == nil:
				t.Errorf("round %d: %s changed without a backup entry", round, f.ID)
			case e.State != backup.StateApplied:
				t.Errorf("round %d: %s changed, its backup entry is %q", round, f.ID, e.State)
			default:
				checkAfter(t, round, dir, e, before[f.ID], now)
				sessionsTotal["new"]++
			}
		}
		if n := len(p.all(watch.Failed, "")); n != 0 {
			t.Errorf("round %d: %d failed events", round, n)
		}
	}
	t.Logf("sessions left in the old state: %d, in the new state: %d", sessionsTotal["old"], sessionsTotal["new"])
}

// checkAfter compares a session's files with its backup entry: listed
// files hold the after hash (or are gone), the others are unchanged.
func checkAfter(t *testing.T, round int, dir string, e *backup.SessionEntry, before, now map[string]string) {
	t.Helper()
	listed := map[string]bool{}
	for _, im := range e.Images {
		rel, err := filepath.Rel(dir, im.Path)
		if err != nil {
			t.Fatal(err)
		}
		listed[rel] = true
		got, exists := now[rel]
		switch {
		case !im.ExistsAfter && exists:
			t.Errorf("round %d: %s should be gone after the repair, it is there", round, im.Path)
		case im.ExistsAfter && got != im.SHA256After:
			t.Errorf("round %d: %s is neither before nor after state (mixed)", round, im.Path)
		}
	}
	for rel, h := range before {
		if !listed[rel] && now[rel] != h {
			t.Errorf("round %d: %s changed but the repair did not list it", round, filepath.Join(dir, rel))
		}
	}
	for rel := range now {
		if _, ok := before[rel]; !ok && !listed[rel] {
			t.Errorf("round %d: %s appeared but the repair did not list it", round, filepath.Join(dir, rel))
		}
	}
}

// journal reads every backup manifest under state, by session.
func journal(t *testing.T, state string) map[string]*backup.SessionEntry {
	t.Helper()
	out := map[string]*backup.SessionEntry{}
	ms, _ := filepath.Glob(filepath.Join(state, "backups", "*", "manifest.json"))
	for _, m := range ms {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var man backup.Manifest
		if err := json.Unmarshal(b, &man); err != nil {
			t.Fatal(err)
		}
		for _, e := range man.Sessions {
			if out[e.SessionID] != nil {
				t.Errorf("session %s repaired twice", e.SessionID)
			}
			out[e.SessionID] = e
		}
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

package fix

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// signatureError is the text OpenCode stores when the provider rejects the
// corrupted-signature scenario (docs/compatibility.md).
const signatureError = "messages.1.content.0: Invalid `signature` in `thinking` block"

// whitespaceError is the text OpenCode stores when the provider rejects a
// whitespace-only text block: it names no message.
const whitespaceError = "messages: text content blocks must contain non-whitespace text"

// recordTimes are the times a loaded store's files (and every record's
// Modified, which is the file time of a JSON record and time_updated of a
// SQLite row) may carry: as OpenCode left them, all before the failed
// attempt; fresh, as a copy, a restore or a checkout leaves them; or
// ahead of the clock.
func recordTimes(rs *realstore.Store) map[string]time.Time {
	return map[string]time.Time{
		"original": rs.Attempt.Add(-time.Minute),
		"copied":   rs.Attempt.Add(30 * time.Minute),
		"future":   rs.Attempt.Add(48 * time.Hour),
	}
}

// loadAt dates every file of the store and every loaded record at.
func loadAt(t *testing.T, rs *realstore.Store, at time.Time) *store.Session {
	t.Helper()
	storetest.SetTimes(t, rs.Dir, at)
	s := rs.Load(t)
	for _, m := range s.Messages {
		m.Modified = at
		for _, p := range m.Parts {
			p.Modified = at
		}
	}
	return s
}

func realOpts(rs *realstore.Store) Options {
	now := func() time.Time { return rs.Attempt.Add(time.Hour) }
	return Options{Now: now, Scan: &scan.Options{Now: now, Settle: time.Millisecond}}
}

// A session whose last attempt failed with a corrupted signature stays an
// error, whatever the times of its files say, until the repair is written;
// then it is history (info) whatever they say. scan and fix agree at every
// step.
func TestStoredSignatureErrorIgnoresFileTimes(t *testing.T) {
	for _, v := range realstore.Versions {
		t.Run(v, func(t *testing.T) {
			rs := realstore.Copy(t, v)
			bad := rs.CorruptSignature(t)
			rs.FailResume(t, signatureError)
			opts := realOpts(rs)
			var plan *SessionPlan
			for name, at := range recordTimes(rs) {
				s := loadAt(t, rs, at)
				fs := scan.CheckSession(s, opts.Scan)
				f := fs0(fs, "SF302")
				if f.Severity != scan.Error || f.Fix == "" || f.ErrorType != "invalid_signature" || f.MessageID != bad.MessageID {
					t.Fatalf("%s times: SF302 = %s %q (fix %q) on %s; want a fixable error on %s", name, f.Severity, f.Message, f.Fix, f.MessageID, bad.MessageID)
				}
				p, err := Plan(s, fs, opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Changes.Edits) != 1 || p.Changes.Edits[0].ID != bad.ID || p.Changes.Edits[0].Mutation != "stripThinkingParts" {
					t.Fatalf("%s times: plan\n%s\nwant the corrupted reasoning %s stripped", name, editSummary(p), bad.ID)
				}
				plan = p
			}
			st := storetest.OpenOne(t, rs.Path)
			w, err := shapes.OpenWriter(st.Info(), store.WriteOptions{Now: opts.Now})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.Apply(context.Background(), plan.Changes); err != nil {
				t.Fatal(err)
			}
			for name, at := range recordTimes(rs) {
				s := loadAt(t, rs, at)
				fs := scan.CheckSession(s, opts.Scan)
				f := fs0(fs, "SF302")
				if f.Severity != scan.Info || !strings.Contains(f.Message, "thinking has been removed since") {
					t.Errorf("%s times after the fix: SF302 = %s %q; want info saying the thinking is gone", name, f.Severity, f.Message)
				}
				p, err := Plan(s, fs, opts)
				if err != nil || !p.Empty() {
					t.Errorf("%s times after the fix: plan %v\n%s", name, err, editSummary(p))
				}
				if len(p.Notes) != 1 || !strings.HasSuffix(p.Notes[0], "; nothing to do") {
					t.Errorf("%s times after the fix: notes %q", name, p.Notes)
				}
			}
		})
	}
}

// The error OpenCode stores for a whitespace-only text block names no
// message: `fix --error` with it, and SF302 repaired on its own, repair the
// places the preflight finds that produce it, and say so.
func TestIndexlessErrorRepairsWhatCausesIt(t *testing.T) {
	for _, v := range realstore.Versions {
		t.Run(v, func(t *testing.T) {
			rs := realstore.Copy(t, v)
			blank := rs.WhitespaceText(t)
			rs.FailResume(t, whitespaceError)
			opts := realOpts(rs)
			s := rs.Load(t)
			fs := scan.CheckSession(s, opts.Scan)
			stored := fs0(fs, "SF302")
			want := "the error names no message; the preflight finds 1 place that causes it: message " + blank.MessageID + " part " + blank.ID + " (SF151)"
			if stored.Severity != scan.Error || stored.Fix == "" || !strings.HasSuffix(stored.Message, want) {
				t.Errorf("SF302 = %s %q (fix %q); want a fixable error ending %q", stored.Severity, stored.Message, stored.Fix, want)
			}
			pasted, err := PlanFromError(s, whitespaceError, opts)
			if err != nil {
				t.Fatal(err)
			}
			alone, err := Plan(s, []scan.Finding{stored}, opts) // fix --select SF302
			if err != nil {
				t.Fatal(err)
			}
			for name, p := range map[string]*SessionPlan{"fix --error": pasted, "fix --select SF302": alone} {
				if len(p.Changes.Edits) != 1 || p.Changes.Edits[0].ID != blank.ID || p.Changes.Edits[0].Mutation != "replaceEmptyTextParts" {
					t.Errorf("%s plans\n%s\nwant the placeholder in %s; unfixed %+v", name, editSummary(p), blank.ID, p.Unfixed)
				}
				if len(p.Notes) != 1 || p.Notes[0] != want {
					t.Errorf("%s notes %q, want %q", name, p.Notes, want)
				}
				if len(p.Unfixed) != 0 {
					t.Errorf("%s leaves %+v", name, p.Unfixed)
				}
				fixed, err := ApplyInMemory(s, p.Changes)
				if err != nil {
					t.Fatal(err)
				}
				if g := fs0(scan.CheckSession(fixed, opts.Scan), "SF302"); g.Severity != scan.Info {
					t.Errorf("%s: after the repair SF302 = %s %q, want info", name, g.Severity, g.Message)
				}
			}
		})
	}
}

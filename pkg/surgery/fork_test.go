package surgery

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

var forkNow = time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)

func TestForkTitle(t *testing.T) {
	for in, want := range map[string]string{
		"Fix the build":                     "Fix the build (fork #1)",
		"Fix the build (fork #1)":           "Fix the build (fork #2)",
		"Fix the build (fork #9)":           "Fix the build (fork #10)",
		"Fix the build (fork #x)":           "Fix the build (fork #x) (fork #1)",
		"(fork #1)":                         "(fork #1) (fork #1)",
		"a (fork #1) b":                     "a (fork #1) b (fork #1)",
		"":                                  " (fork #1)",
		"Fix the build (fork #1) (fork #3)": "Fix the build (fork #1) (fork #4)",
	} {
		if got := ForkTitle(in); got != want {
			t.Errorf("ForkTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPlanForkEveryShape checks a fork's change set on every shape: it only
// adds, its ids are fresh and in OpenCode's format and order, and each copy
// is its original's body byte for byte once the new ids are read back as
// the old ones.
func TestPlanForkEveryShape(t *testing.T) {
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			_, s := open(t, shape, conversation(`,"parentID":"ses_f0129cf5dffeh7amIIDPeKjRvT","share":{"url":"https://opncd.ai/s/x"}`))
			p, err := PlanFork(s, ForkOptions{Now: forkNow})
			if err != nil {
				t.Fatal(err)
			}
			if !store.ValidID(p.NewID, store.PrefixSession) || p.NewID == s.ID {
				t.Fatalf("new session id %q", p.NewID)
			}
			if p.Changes.SessionID != p.NewID || p.SessionID != s.ID {
				t.Errorf("change set for %s, plan for %s", p.Changes.SessionID, p.SessionID)
			}
			if err := p.Changes.Check(); err != nil {
				t.Errorf("the change set is malformed: %v", err)
			}
			back := map[string]string{p.NewID: s.ID}
			for _, m := range append(slices.Clone(p.Messages), p.Parts...) {
				back[m.To] = m.From
			}
			var order []string
			sessionAdds := 0
			for _, e := range p.Changes.Edits {
				if e.Op != store.OpAdd {
					t.Fatalf("a fork edit %s %s %s: a fork only adds", e.Op, e.Kind, e.ID)
				}
				if e.SessionID != p.NewID {
					t.Errorf("%s %s is added to session %s", e.Kind, e.ID, e.SessionID)
				}
				switch e.Kind {
				case store.KindSession:
					sessionAdds++
					continue
				case store.KindMessage:
					if e.Created != s.Message(back[e.ID]).Created {
						t.Errorf("message %s created %d, its original %d", e.ID, e.Created, s.Message(back[e.ID]).Created)
					}
				}
				if !store.ValidID(e.ID, store.PrefixFor(e.Kind)) {
					t.Errorf("%s id %q is not in OpenCode's format", e.Kind, e.ID)
				}
				if at, ok := store.IDTime(e.ID, forkNow); !ok || at.Sub(forkNow).Abs() > time.Millisecond {
					t.Errorf("%s id %s minted at %v, not now", e.Kind, e.ID, at)
				}
				order = append(order, e.ID)
			}
			if want := map[bool]int{true: 1, false: 0}[s.Info != nil]; sessionAdds != want {
				t.Errorf("%d session adds, want %d", sessionAdds, want)
			}
			for i := 1; i < len(order); i++ {
				if order[i][4:] <= order[i-1][4:] {
					t.Errorf("id %s does not sort after %s", order[i], order[i-1])
				}
			}
			if got := len(order); got != len(s.Messages)+s.PartCount() {
				t.Fatalf("%d records copied, want %d", got, len(s.Messages)+s.PartCount())
			}
			// Read every copy back with the old ids: it is its original.
			orig := map[string][]byte{}
			for _, m := range s.Messages {
				orig[m.ID] = m.Raw
				for _, q := range m.Parts {
					orig[q.ID] = q.Raw
				}
			}
			for _, e := range p.Changes.Edits {
				if e.Kind == store.KindSession {
					checkForkInfo(t, s, p, e.After)
					continue
				}
				if shape != store.ShapeSQLite {
					for k, want := range map[string]string{"id": e.ID, "sessionID": p.NewID, "messageID": e.MessageID} {
						if got := gjson.GetBytes(e.After, k).Str; got != want {
							t.Errorf("copy %s holds %s %q, want %q", e.ID, k, got, want)
						}
					}
				}
				got := string(e.After)
				for n, o := range back {
					got = strings.ReplaceAll(got, n, o)
				}
				if want := string(orig[back[e.ID]]); got != want {
					t.Errorf("copy %s of %s:\n%s\nwant\n%s", e.ID, back[e.ID], got, want)
				}
			}
			for _, m := range s.Messages {
				if m.Role == "assistant" {
					for _, e := range p.Changes.Edits {
						if e.ID != idOf(p, m.ID) {
							continue
						}
						if got, want := gjson.GetBytes(e.After, "parentID").Str, idOf(p, m.Get("parentID").Str); got != want {
							t.Errorf("copy of %s answers %s, want %s", m.ID, got, want)
						}
					}
				}
			}
		})
	}
}

func idOf(p *ForkPlan, from string) string {
	for _, m := range p.Messages {
		if m.From == from {
			return m.To
		}
	}
	return ""
}

// checkForkInfo checks the new session record: the new id, title and
// times, the totals of the copied messages, and none of the original's
// parent, share, revert and summary.
func checkForkInfo(t *testing.T, s *store.Session, p *ForkPlan, info []byte) {
	t.Helper()
	g := func(col, path string) gjson.Result {
		if columns(s) {
			return gjson.GetBytes(info, col)
		}
		return gjson.GetBytes(info, path)
	}
	if g("id", "id").Str != p.NewID || g("title", "title").Str != "a tool loop and a second turn (fork #1)" {
		t.Errorf("new session record %s", info)
	}
	if g("time_created", "time.created").Int() != forkNow.UnixMilli() || g("time_updated", "time.updated").Int() != forkNow.UnixMilli() {
		t.Errorf("new session times: %s", info)
	}
	for _, f := range []field{fParent, {column: "share_url", path: "share"}, fRevert} {
		if v := g(f.column, f.path); v.Exists() && v.Type != gjson.Null {
			t.Errorf("the fork keeps the original's %s: %s", f.path, v.Raw)
		}
	}
	if g("directory", "directory").Str != get(s, fDirectory).Str || g("project_id", "projectID").Str != get(s, fProject).Str {
		t.Errorf("the fork is not in the original's project: %s", info)
	}
	if v := g("cost", "cost"); v.Exists() != s.Info.Get("cost").Exists() {
		t.Errorf("the fork's record has cost %v, the original's %v", v.Exists(), !v.Exists())
	} else if got := v.Float(); v.Exists() && (got < 0.0299 || got > 0.0301) {
		t.Errorf("the fork's cost is %v, want the copied messages' 0.03", got)
	}
}

func TestPlanForkTo(t *testing.T) {
	_, s := open(t, store.ShapeStorage, conversation(""))
	p, err := PlanFork(s, ForkOptions{To: asst2[:14], Title: "retry the second turn", Now: forkNow})
	if err != nil {
		t.Fatal(err)
	}
	var from []string
	for _, m := range p.Messages {
		from = append(from, m.From)
	}
	if want := []string{user1, asst1, asst2}; !slices.Equal(from, want) {
		t.Errorf("copied %v, want %v", from, want)
	}
	if p.Title != "retry the second turn" {
		t.Errorf("title %q", p.Title)
	}
	info := p.Changes.Edits[0]
	if gjson.GetBytes(info.After, "title").Str != "retry the second turn" {
		t.Errorf("session record %s", info.After)
	}
	if gjson.GetBytes(info.After, "tokens.input").Int() != 200 {
		t.Errorf("the fork's tokens count the copied messages only: %s", info.After)
	}
}

func TestPlanForkRefuses(t *testing.T) {
	revert := `,"revert":{"messageID":"` + user2 + `"}`
	_, s := open(t, store.ShapeStorage, conversation(revert))
	var refused *RefusedError
	if _, err := PlanFork(s, ForkOptions{}); !errors.As(err, &refused) || !strings.Contains(err.Error(), "pending revert") {
		t.Errorf("a fork of the reverted messages: %v", err)
	}
	if _, err := PlanFork(s, ForkOptions{To: user2}); !errors.As(err, &refused) {
		t.Errorf("a fork up to the reverted message: %v", err)
	}
	p, err := PlanFork(s, ForkOptions{To: asst2})
	if err != nil {
		t.Fatalf("a fork before the revert: %v", err)
	}
	if r := gjson.GetBytes(p.Changes.Edits[0].After, "revert"); r.Exists() {
		t.Errorf("the fork keeps the revert: %s", r.Raw)
	}

	_, s = open(t, store.ShapeStorage, conversation(""))
	// Up to the tool call: its answer would be the copy's last message.
	if _, err := PlanFork(s, ForkOptions{To: user1}); err != nil {
		t.Errorf("a fork of the first prompt: %v", err)
	}
	if _, err := PlanFork(s, ForkOptions{To: "msg_nothere"}); err == nil {
		t.Error("a fork up to a message the session does not have was planned")
	}
	var amb *AmbiguousError
	if _, err := PlanFork(s, ForkOptions{To: "msg_1fed6"}); !errors.As(err, &amb) {
		t.Errorf("an ambiguous --to: %v", err)
	}
}

func TestPlanForkRewritesCompactionTail(t *testing.T) {
	f := conversation("")
	f.Messages[3].Parts = append(f.Messages[3].Parts, storetest.Part{ID: partID(user2, 2), Body: body(`{"type":"compaction","auto":true,"tail_start_id":%q}`, asst2)})
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage} {
		_, s := open(t, shape, f)
		p, err := PlanFork(s, ForkOptions{Now: forkNow})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range p.Changes.Edits {
			if tail := gjson.GetBytes(e.After, "tail_start_id"); tail.Exists() {
				found = true
				if tail.Str != idOf(p, asst2) {
					t.Errorf("%s: the copied compaction keeps its tail at %s, want the copy of %s (%s)", shape, tail.Str, asst2, idOf(p, asst2))
				}
			}
		}
		if !found {
			t.Errorf("%s: no copied compaction", shape)
		}
	}
}

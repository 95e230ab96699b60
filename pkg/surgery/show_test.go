package surgery

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func TestShowEveryShape(t *testing.T) {
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			_, s := open(t, shape, conversation(""))
			v := Show(s, ShowOptions{Sent: true})
			if v.ID != sesID || v.Directory != "/w" || v.Project != "global" || v.Revert != nil {
				t.Errorf("session record read as %+v", v)
			}
			var ids []string
			for _, m := range v.Messages {
				ids = append(ids, m.ID)
			}
			if want := []string{user1, asst1, asst2, user2, asst3}; !slices.Equal(ids, want) {
				t.Fatalf("messages %v, want %v", ids, want)
			}
			tool := v.Messages[1].Parts[2]
			if tool.Type != "tool" || tool.Tool != "bash" || tool.State != "completed" || tool.Size == 0 {
				t.Errorf("tool part described as %+v", tool)
			}
			if r := v.Messages[1].Parts[1]; r.State != "signed" || r.Size != len("I will run it.") {
				t.Errorf("reasoning described as %+v", r)
			}
			if m := v.Messages[0]; m.ProviderID != "anthropic" || m.Parts[0].Excerpt != "run a command" {
				t.Errorf("user message described as %+v", m)
			}
			// The request: the tool loop splits into assistant, user (tool
			// result), assistant; the next prompt comes last.
			r := v.Sent
			if r.Kind != sent.Anthropic || !r.Thinking || len(r.Messages) != 7 {
				t.Fatalf("request %+v", r)
			}
			if b := r.Messages[2].Blocks[0]; b.Type != "tool_result" || b.MessageID != asst1 || b.PartID != partID(asst1, 3) || b.ToolUseID != "toolu_01" {
				t.Errorf("messages.2.content.0 = %+v", b)
			}
			last := r.Messages[6]
			if !last.NextPrompt || last.Role != "user" || last.Blocks[0].MessageID != "" {
				t.Errorf("the next prompt is %+v", last)
			}
		})
	}
}

func TestShowRevert(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage} {
		t.Run(string(shape), func(t *testing.T) {
			rv := `,"revert":{"messageID":"` + user2 + `","snapshot":"abc"}`
			if shape == store.ShapeSQLite {
				// storetest writes the columns it knows; set the revert column
				// the way OpenCode does: JSON text.
				rv = ""
			}
			st, s := open(t, shape, conversation(rv))
			if shape == store.ShapeSQLite {
				s = withRevertColumn(t, st, `{"messageID":"`+user2+`","snapshot":"abc"}`)
			}
			v := Show(s, ShowOptions{Sent: true})
			if v.Revert == nil || v.Revert.MessageID != user2 || v.Revert.PartID != "" {
				t.Fatalf("revert read as %+v", v.Revert)
			}
			for _, m := range v.Messages {
				if want := m.ID == user2 || m.ID == asst3; m.Reverted != want {
					t.Errorf("message %s reverted = %v", m.ID, m.Reverted)
				}
			}
			// OpenCode deletes the reverted turn before it sends.
			if !v.Sent.RevertApplied {
				t.Error("the request keeps the reverted messages")
			}
			for _, pm := range v.Sent.Messages {
				if slices.Contains(pm.Sources, user2) || slices.Contains(pm.Sources, asst3) {
					t.Errorf("messages.%d is built from a reverted message: %v", pm.Index, pm.Sources)
				}
			}
		})
	}
}

func TestRevertedSetWithPart(t *testing.T) {
	_, s := open(t, store.ShapeExport, conversation(""))
	rs := revertedSet(s, &Revert{MessageID: asst2, PartID: partID(asst2, 3)})
	if rs.messages[asst2] || !rs.messages[user2] || !rs.messages[asst3] {
		t.Errorf("messages %v", rs.messages)
	}
	if rs.parts[partID(asst2, 2)] || !rs.parts[partID(asst2, 3)] || !rs.parts[partID(asst2, 4)] {
		t.Errorf("parts %v", rs.parts)
	}
	if rs := revertedSet(s, &Revert{MessageID: "msg_1fed00000001GoneGoneGone01"}); len(rs.messages)+len(rs.parts) != 0 {
		t.Errorf("a revert naming no message deletes %v", rs)
	}
}

func TestFind(t *testing.T) {
	st, _ := open(t, store.ShapeStorage, conversation(""))
	ctx := context.Background()
	for _, id := range []string{sesID, sesID[:10]} {
		f, err := Find(ctx, []store.Store{st}, id)
		if err != nil || f.Ref.ID != sesID {
			t.Errorf("Find(%q) = %+v, %v", id, f.Ref, err)
		}
	}
	var nf *NotFoundError
	if _, err := Find(ctx, []store.Store{st}, "ses_nope"); !errors.As(err, &nf) {
		t.Errorf("Find of an unknown id: %v", err)
	}
	other, _ := open(t, store.ShapeExport, &storetest.Fixture{ID: "ses_e0129cf5dfff0000000000000", Title: "other"})
	var amb *AmbiguousError
	if _, err := Find(ctx, []store.Store{st, other}, "ses_e0129cf5dff"); !errors.As(err, &amb) || len(amb.IDs) != 2 {
		t.Errorf("Find of a prefix of two ids: %v", err)
	}
}

func TestList(t *testing.T) {
	healthy, _ := open(t, store.ShapeSQLite, conversation(""))
	broken := conversation("")
	broken.ID, broken.Info = "ses_e0129cf5dffeBrokenBrokenBr", nil
	broken.Messages = broken.Messages[:1]
	broken.Messages[0].Parts[0].Body = body(`{"type":"text","text":"  "}`)
	bst, _ := open(t, store.ShapeExport, broken)
	l, err := List(context.Background(), []store.Store{healthy, bst}, ListOptions{Scan: &scan.Options{Settle: time.Nanosecond}})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Stores) != 2 || l.Failed() != 0 || len(l.Sessions) != 2 {
		t.Fatalf("listing %+v", l)
	}
	first, second := l.Sessions[0], l.Sessions[1]
	if first.ID != sesID || first.Messages != 5 || first.Parts != 14 || first.Health.State() != "clean" ||
		first.ModelID != "claude-sonnet-4-5" || !first.LastActivity.Equal(time.UnixMilli(t0+6500)) {
		t.Errorf("newest session %+v", first)
	}
	if second.Health.Errors == 0 || second.Health.State() != "errors" {
		t.Errorf("the blank prompt is not an error: %+v", second.Health)
	}
	// A finished session is never busy, however fresh; one whose newest
	// assistant message is unfinished is while it changed within the
	// settle window, whatever its findings.
	nobody := func(store.Info) store.Activity { return store.Activity{State: store.ActivityNone} }
	long := ListOptions{Scan: &scan.Options{Settle: 10 * 365 * 24 * time.Hour, Activity: nobody}}
	l, err = List(context.Background(), []store.Store{healthy}, long)
	if err != nil || l.Sessions[0].Health.State() != "clean" {
		t.Errorf("a finished session just written is %q (%v)", l.Sessions[0].Health.State(), err)
	}
	streaming := conversation("")
	if _, err := streaming.Reopen(); err != nil {
		t.Fatal(err)
	}
	sst, _ := open(t, store.ShapeSQLite, streaming)
	l, err = List(context.Background(), []store.Store{sst}, long)
	if err != nil || l.Sessions[0].Health.State() != "busy" {
		t.Errorf("a session OpenCode is writing is %q (%v)", l.Sessions[0].Health.State(), err)
	}
}

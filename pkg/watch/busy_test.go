package watch

import (
	"slices"
	"testing"
	"time"

	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// liveTurn is a session OpenCode is in the middle of: its newest assistant
// message is open, with a bash tool running, and nothing else is wrong.
func liveTurn(t *testing.T) *storetest.Fixture {
	return loadFixture(t, "sf105-abandoned-tool")
}

// withBlankPrompt is f with the text of its first (user) message blanked:
// damage of its own, before the turn in progress.
func withBlankPrompt(t *testing.T, f *storetest.Fixture) *storetest.Fixture {
	t.Helper()
	c := *f
	c.Messages = slices.Clone(f.Messages)
	m := &c.Messages[0]
	m.Parts = slices.Clone(m.Parts)
	body, err := sjson.SetBytes(m.Parts[0].Body, "text", "   ")
	if err != nil {
		t.Fatal(err)
	}
	m.Parts[0].Body = body
	return &c
}

// busyHarness watches f in a store OpenCode holds open, with an abandon
// window of a minute, and brings the session up as a change event would.
func busyHarness(t *testing.T, f *storetest.Fixture) *harness {
	t.Helper()
	h := newHarness(t, store.ShapeSessions, func(o *Options) { o.Abandon = time.Minute }, f)
	h.inUse = true
	h.w.mark(h.w.stores[0], f.ID)
	h.w.pending[key{0, f.ID}].due = h.clock.Now() // no initial-scan shortcut
	return h
}

// TestLiveTurnIsNoNews: OpenCode running a long tool, quiet for longer than
// the settle window with the store open, is what OpenCode does all day: the
// session is left alone without an event printed by default (a waiting
// event says why with --verbose), and is repaired once the abandon window
// has passed.
func TestLiveTurnIsNoNews(t *testing.T) {
	live := liveTurn(t)
	h := busyHarness(t, live)
	h.step(2 * time.Second)
	h.mu.Lock()
	for _, e := range h.events {
		if e.Kind.Matters() {
			t.Errorf("a healthy turn in progress was reported by default: %+v", e)
		}
	}
	h.mu.Unlock()
	wait := h.kinds(Waiting)
	if len(wait) != 1 || wait[0].Session != live.ID || len(wait[0].Rules) != 0 || wait[0].Message == "" {
		t.Fatalf("waiting events %+v, want one for %s, without rules", wait, live.ID)
	}
	h.step(50 * time.Second)
	if n := len(h.kinds(Waiting)); n != 1 {
		t.Errorf("the turn in progress was reported %d times for the same content", n)
	}
	if n := len(h.kinds(Repaired)); n != 0 {
		t.Fatal("repaired a turn in progress before the abandon window")
	}
	h.step(10 * time.Second)
	if rep := h.kinds(Repaired); len(rep) != 1 || !slices.Equal(rep[0].Rules, []string{"SF301"}) {
		t.Fatalf("repaired %+v once the abandon window passed, want the turn closed (SF301)", rep)
	}
}

// TestBusySessionWithDamageIsReported: a session in progress that has
// damage of its own is reported once per content as skipped-busy, with
// every rule that will be repaired once OpenCode is done with it, and is
// repaired once the abandon window has passed.
func TestBusySessionWithDamageIsReported(t *testing.T) {
	broken := withBlankPrompt(t, liveTurn(t))
	h := busyHarness(t, broken)
	h.step(2 * time.Second)
	busy := h.kinds(SkippedBusy)
	if len(busy) != 1 || busy[0].Session != broken.ID {
		t.Fatalf("skipped-busy events %+v", busy)
	}
	// SF151: the blank prompt, as the provider would refuse it.
	if want := []string{"SF105", "SF151", "SF301"}; !slices.Equal(busy[0].Rules, want) {
		t.Errorf("skipped-busy rules %v, want %v", busy[0].Rules, want)
	}
	if n := len(h.kinds(Waiting)); n != 0 {
		t.Errorf("%d waiting events besides skipped-busy", n)
	}
	h.step(50 * time.Second)
	if n := len(h.kinds(Repaired)); n != 0 {
		t.Fatalf("repaired a busy session before the abandon window")
	}
	if n := len(h.kinds(SkippedBusy)); n != 1 {
		t.Errorf("skipped-busy reported %d times for the same content", n)
	}
	h.step(10 * time.Second)
	if n := len(h.kinds(Repaired)); n != 1 {
		t.Fatalf("%d repairs once the abandon window passed, want 1", n)
	}
}

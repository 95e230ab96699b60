package fix

import (
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// Three messages whose text parts share one id (SF211): the copies after
// the first are re-keyed, each in its own message, each once, and the
// first keeps its id.
func TestPlanRekeysEveryDuplicatePartCopy(t *testing.T) {
	b := newSB(t, store.ShapeStorage)
	const shared = "prt_a00000000009AAAAAAAAAAAAAA"
	u := b.msg(msgU1, "user", `{"role":"user","time":{"created":1}}`)
	b.part(u, shared, `{"type":"text","text":"first"}`)
	a := b.msg(msgA1, "assistant", `{"role":"assistant","parentID":"`+msgU1+`","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"stop"}`)
	b.part(a, shared, `{"type":"text","text":"second"}`)
	u2 := b.msg(msgU2, "user", `{"role":"user","time":{"created":4}}`)
	b.part(u2, shared, `{"type":"text","text":"third"}`)
	for _, m := range b.s.Messages {
		m.Parts[0].Loc = store.Location{Path: "/store/part/" + m.ID + "/" + shared + ".json"}
	}
	b.complete()
	p, _ := planAndVerify(t, b.s, planOpts())
	if len(p.Changes.Edits) != 2 {
		t.Fatalf("want two re-keys, got\n%s", editSummary(p))
	}
	seen := map[string]bool{}
	for _, e := range p.Changes.Edits {
		if e.Op != store.OpRekey || e.ID != shared || e.Rule != "SF211" || e.MessageID == msgU1 || seen[e.MessageID] {
			t.Errorf("unexpected edit %+v", e)
		}
		seen[e.MessageID] = true
	}
	fixed, err := ApplyInMemory(b.s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, m := range fixed.Messages {
		id := m.Parts[0].ID
		if other, dup := ids[id]; dup {
			t.Errorf("part id %s still under %s and %s", id, other, m.ID)
		}
		ids[id] = m.ID
		if text := m.Parts[0].Get("text").String(); m.ID == msgU1 && (id != shared || text != "first") {
			t.Errorf("the first copy changed: %s %q", id, text)
		}
	}
}

package fix

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func scanOpts() *scan.Options {
	return &scan.Options{Now: func() time.Time { return testNow }}
}

func planOpts() Options {
	return Options{Now: func() time.Time { return testNow }, Scan: scanOpts()}
}

func codes(fs []scan.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return out
}

// planAndVerify plans, applies in memory, and checks that every fixed
// finding is gone, nothing new appeared, and a second plan is empty.
func planAndVerify(t *testing.T, s *store.Session, opts Options) (*SessionPlan, *store.Session) {
	t.Helper()
	before := scan.CheckSession(s, scanOpts())
	p, err := Plan(s, before, opts)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := ApplyInMemory(s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	after := scan.CheckSession(fixed, scanOpts())
	for _, r := range p.Fixed {
		if present(r.Finding, after) {
			t.Errorf("%s on %s still reported after the plan", r.Finding.Code, r.Finding.MessageID)
		}
	}
	if nf := newFindings(before, after); len(nf) > 0 {
		t.Errorf("new findings after the plan: %v", codes(nf))
	}
	again, err := Plan(fixed, after, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Empty() {
		t.Errorf("second plan is not empty: %+v", again.Changes.Edits)
	}
	return p, fixed
}

func editSummary(p *SessionPlan) string {
	var b strings.Builder
	for _, e := range p.Changes.Edits {
		fmt.Fprintf(&b, "%s %s %s %s [%s]\n", e.Op, e.Kind, e.ID, e.Mutation, e.Rule)
	}
	return b.String()
}

func TestPlanKilledAtTextStart(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeSessions, store.ShapeStorage, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			b, a := killedAtTextStart(t, shape)
			findings := scan.CheckSession(b.s, scanOpts())
			if len(findings) == 0 {
				t.Fatal("the killed session should have findings")
			}
			p, fixed := planAndVerify(t, b.s, planOpts())
			if p.Empty() {
				t.Fatalf("nothing planned for %v", codes(findings))
			}
			// The empty text part now holds the placeholder.
			fm := fixed.Message(a.ID)
			var text string
			for _, q := range fm.Parts {
				if q.Type == "text" {
					text = q.Get("text").String()
				}
			}
			if text != DefaultPlaceholder {
				t.Errorf("text part = %q, want the placeholder\n%s", text, editSummary(p))
			}
		})
	}
}

func thinkingAfterText(t *testing.T) (*sb, *store.Message) {
	b := newSB(t, store.ShapeSessions)
	u := b.msg(msgU1, "user", `{"role":"user","time":{"created":1}}`)
	b.part(u, prt1, `{"type":"text","text":"hi"}`)
	a := b.msg(msgA1, "assistant", `{"role":"assistant","parentID":"`+msgU1+`","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"stop"}`)
	b.part(a, prt2, `{"type":"step-start"}`)
	b.part(a, prt3, `{"type":"text","text":"answer"}`)
	b.part(a, prt4, `{"type":"reasoning","text":"thought",`+signedMeta+`}`)
	b.part(a, prt5, `{"type":"step-finish"}`)
	u2 := b.msg(msgU2, "user", `{"role":"user","time":{"created":4}}`)
	b.part(u2, prt6, `{"type":"text","text":"more"}`)
	b.complete()
	return b, a
}

func TestPlanThinkingNotFirstMovesSignedThinking(t *testing.T) {
	b, _ := thinkingAfterText(t)
	fs := scan.CheckSession(b.s, scanOpts())
	// The preflight reports the defect (SF153) and names the record rule
	// whose finding it replaces.
	if f := fs0(fs, "SF153"); f.MessageID != msgA1 || f.FixedBy != "SF103" || fs0(fs, "SF103").Code != "" {
		t.Fatalf("expected SF153 fixed by SF103, got %v", codes(fs))
	}
	p, _ := planAndVerify(t, b.s, planOpts())
	if len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Op != store.OpRekey || p.Changes.Edits[0].Rule != "SF153" {
		t.Fatalf("want one SF153 rekey, got\n%s", editSummary(p))
	}
	if p.Fixed[0].Strategy != "move" {
		t.Errorf("strategy %q, want move", p.Fixed[0].Strategy)
	}
}

// fs0 is the first finding with the code, or a zero Finding (empty Code).
func fs0(fs []scan.Finding, code string) scan.Finding {
	for _, f := range fs {
		if f.Code == code {
			return f
		}
	}
	return scan.Finding{}
}

func TestPlanStrategyChoice(t *testing.T) {
	b, _ := thinkingAfterText(t)
	opts := planOpts()
	opts.Strategies = map[string]string{"SF153": "strip"}
	p, _ := planAndVerify(t, b.s, opts)
	if len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Op != store.OpDelete || p.Changes.Edits[0].ID != prt4 {
		t.Fatalf("want the thinking part deleted, got\n%s", editSummary(p))
	}
	opts.Strategies = map[string]string{"SF103": "nonsense"}
	if _, err := Plan(b.s, nil, opts); err == nil || !strings.Contains(err.Error(), "unknown strategy") {
		t.Errorf("unknown strategy accepted: %v", err)
	}
	opts.Strategies = map[string]string{"SF204": "x"}
	if _, err := Plan(b.s, nil, opts); err == nil {
		t.Errorf("strategy for a report-only rule accepted")
	}
}

// preflightLike adds a preflight-like finding (placed first, as scan sorts
// message findings before their parts') when the last assistant message with
// a tool part does not start with thinking; strict also requires a signature.
func preflightLike(strict bool) func(s *store.Session) []scan.Finding {
	return func(s *store.Session) []scan.Finding {
		// The fake stands in for the preflight, so the real one is off.
		o := scanOpts()
		o.Ignore = []string{"SF15", "SF16"}
		fs := scan.CheckSession(s, o)
		m := lastToolMessage(s)
		if m == nil {
			return fs
		}
		first := opencode.FirstNonMeta(m)
		if first != nil && opencode.IsThinkingPart(first) && (!strict || opencode.IsSigned(first)) {
			return fs
		}
		pf := scan.Finding{Code: "SF150", MessageID: m.ID, SessionID: s.ID, ErrorType: string(opencode.ErrorThinkingBlockOrder),
			ProviderError: "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`"}
		return append([]scan.Finding{pf}, fs...)
	}
}

func lastToolMessage(s *store.Session) *store.Message {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != "assistant" || opencode.SkippedByOpenCode(m) {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == "tool" {
				return m
			}
		}
		return nil
	}
	return nil
}

// finalLoopUnsigned: the final tool-loop message has unsigned reasoning
// first, then a tool call.
func finalLoopUnsigned(t *testing.T) *sb {
	b := newSB(t, store.ShapeSessions)
	u := b.msg(msgU1, "user", `{"role":"user","time":{"created":1}}`)
	b.part(u, prt1, `{"type":"text","text":"run ls"}`)
	a := b.msg(msgA1, "assistant", `{"role":"assistant","parentID":"`+msgU1+`","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"tool-calls"}`)
	b.part(a, prt2, `{"type":"step-start"}`)
	b.part(a, prt3, `{"type":"reasoning","text":"partial"}`)
	b.part(a, prt4, `{"type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{},"output":"x","time":{"start":1,"end":2}}}`)
	return b.complete()
}

func strategiesUsed(p *SessionPlan) string {
	var out []string
	for _, r := range p.Fixed {
		out = append(out, r.Finding.Code+"="+r.Strategy)
	}
	return strings.Join(out, " ")
}

func TestPlanFallsBackWhenStripLeavesFinalToolLoopBroken(t *testing.T) {
	// SF107 strips the unsigned reasoning by default, but then the final
	// tool-loop message starts with a tool call, which the provider rejects:
	// the planner must exclude the message instead.
	b := finalLoopUnsigned(t)
	opts := planOpts()
	opts.Check = preflightLike(false)
	fs := opts.Check(b.s)
	if len(fs) != 1 || fs[0].Code != "SF107" {
		t.Fatalf("want only SF107 before the repair, got %v", codes(fs))
	}
	p, err := Plan(b.s, fs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := strategiesUsed(p); got != "SF107=exclude" {
		t.Errorf("strategies %q, want SF107=exclude\nunfixed: %+v\n%s", got, p.Unfixed, editSummary(p))
	}
	fixed, _ := ApplyInMemory(b.s, p.Changes)
	if excl := fixed.Message(msgA1); !sent.ExcludedBySessfix(excl) {
		t.Errorf("message not excluded:\n%s", excl.Raw)
	}
	if left := opts.Check(fixed); len(left) != 0 {
		t.Errorf("findings left: %v", codes(left))
	}
}

func TestPlanPreflightFindingFixesTheMessageOnce(t *testing.T) {
	b := finalLoopUnsigned(t)
	opts := planOpts()
	opts.Check = preflightLike(true)
	fs := opts.Check(b.s)
	p, err := Plan(b.s, fs, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The preflight finding comes first and excludes the message (it owns no
	// signed thinking to move); SF107 is then gone with it.
	if got := strategiesUsed(p); got != "SF150=exclude SF107=" {
		t.Errorf("strategies %q\n%s", got, editSummary(p))
	}
	if len(p.Changes.Edits) != 1 {
		t.Errorf("want one edit:\n%s", editSummary(p))
	}
}

func TestPlanReportOnlyAndUnknown(t *testing.T) {
	b, _ := thinkingAfterText(t)
	f := scan.Finding{Code: "SF204", MessageID: msgA1, SessionID: sesID}
	opts := planOpts()
	opts.Check = func(*store.Session) []scan.Finding { return []scan.Finding{f} }
	p, err := Plan(b.s, []scan.Finding{f}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Empty() || len(p.Unfixed) != 1 || !strings.Contains(p.Unfixed[0].Reason, "report only") {
		t.Errorf("report-only rule: %+v", p)
	}
}

func TestPlanPlaceholderValidated(t *testing.T) {
	b, _ := killedAtTextStart(t, store.ShapeSessions)
	opts := planOpts()
	opts.Placeholder = "  "
	if _, err := Plan(b.s, nil, opts); err == nil {
		t.Error("whitespace placeholder accepted")
	}
}

func TestCollapse(t *testing.T) {
	up1 := store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: prt1, Before: []byte("a"), After: []byte("b"), Rule: "SF104", Mutation: "m1"}
	up2 := store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: prt1, Before: []byte("b"), After: []byte("c"), Rule: "SF105", Mutation: "m2"}
	del := store.Edit{Op: store.OpDelete, Kind: store.KindPart, ID: prt1, Before: []byte("c"), Rule: "SF205"}
	add := store.Edit{Op: store.OpAdd, Kind: store.KindPart, ID: prt2, After: []byte("n")}
	addUp := store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: prt2, Before: []byte("n"), After: []byte("n2")}
	rk := store.Edit{Op: store.OpRekey, Kind: store.KindPart, ID: prt3, NewID: prt4, Before: []byte("r"), After: []byte("r2")}
	rkUp := store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: prt4, Before: []byte("r2"), After: []byte("r3")}

	out, sk := collapse([]store.Edit{up1, up2})
	if len(out) != 1 || string(out[0].Before) != "a" || string(out[0].After) != "c" || out[0].Rule != "SF104,SF105" || len(sk) != 0 {
		t.Errorf("updates merge: %+v", out)
	}
	out, sk = collapse([]store.Edit{up1, del})
	if len(out) != 1 || out[0].Op != store.OpDelete || string(out[0].Before) != "a" || len(sk) != 1 {
		t.Errorf("delete wins: %+v skipped %+v", out, sk)
	}
	out, _ = collapse([]store.Edit{add, addUp})
	if len(out) != 1 || out[0].Op != store.OpAdd || string(out[0].After) != "n2" {
		t.Errorf("add then update: %+v", out)
	}
	quarMsg := store.Edit{Op: store.OpQuarantine, Kind: store.KindMessage, ID: "msg_gone", Before: []byte("x"), Rule: "SF201"}
	quarPart := store.Edit{Op: store.OpQuarantine, Kind: store.KindPart, ID: prt1, MessageID: "msg_gone", Before: []byte("y"), Rule: "SF201"}
	out, sk = collapse([]store.Edit{quarMsg, quarPart})
	if len(out) != 1 || out[0].Kind != store.KindMessage || len(sk) != 1 || !strings.Contains(sk[0].Reason, "removed with its message") {
		t.Errorf("a part its message's removal takes along: %+v skipped %+v", out, sk)
	}
	out, _ = collapse([]store.Edit{rk, rkUp})
	if len(out) != 1 || out[0].Op != store.OpRekey || out[0].ID != prt3 || out[0].NewID != prt4 || string(out[0].Before) != "r" || string(out[0].After) != "r3" {
		t.Errorf("rekey then update: %+v", out)
	}
}

func TestApplyInMemoryRejectsStaleBefore(t *testing.T) {
	b, a := killedAtTextStart(t, store.ShapeSessions)
	ed := store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: a.Parts[2].ID, Before: []byte("{}"), After: []byte(`{"type":"text"}`)}
	if _, err := ApplyInMemory(b.s, &store.ChangeSet{Edits: []store.Edit{ed}}); err == nil {
		t.Error("stale Before accepted")
	}
	// The input session is never modified.
	good, _ := replaceEmptyTextParts(b.s, a, DefaultPlaceholder)
	raw := string(a.Parts[2].Raw)
	if _, err := ApplyInMemory(b.s, &store.ChangeSet{Edits: good}); err != nil {
		t.Fatal(err)
	}
	if string(a.Parts[2].Raw) != raw {
		t.Error("ApplyInMemory modified its input")
	}
}

// An image over the provider's limit whose finding carries no repair (a
// tool's image: only a user's pasted one is shrunk) is not repaired yet:
// fix plans nothing for it and says so, and `fix --error` says the same of
// the provider's texts when no pasted image causes them. Of a session
// whose next request sends no image at all, `fix --error` says that
// instead: the pasted error is likely another session's.
func TestPlanTooBigNotRepairedYet(t *testing.T) {
	b, _ := thinkingAfterText(t)
	f := scan.Finding{Code: "SF170", MessageID: msgA1, SessionID: sesID, Severity: scan.Error, ErrorType: string(opencode.ErrorImageTooLarge),
		ProviderError: "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 5895160 bytes > 5242880 bytes"}
	opts := planOpts()
	opts.Check = func(*store.Session) []scan.Finding { return []scan.Finding{f} }
	p, err := Plan(b.s, []scan.Finding{f}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Empty() || len(p.Unfixed) != 1 || !strings.Contains(p.Unfixed[0].Reason, "not repaired yet") {
		t.Errorf("SF170: %+v", p)
	}
	for _, text := range []string{f.ProviderError, "prompt is too long: 215000 tokens > 200000 maximum",
		"request contains 52 images, exceeding the maximum of 50 allowed per request"} {
		p, err := PlanFromError(b.s, text, planOpts())
		if err != nil {
			t.Fatal(err)
		}
		want := "the next request of this session sends no images: the error is likely another session's"
		if opencode.DetectErrorType(text) == opencode.ErrorContextOverflow {
			want = opencode.ContextNoCauseNote // a small history: nothing to prune
		}
		if !p.Empty() || len(p.Unfixed) != 1 || !strings.Contains(p.Unfixed[0].Reason, want) {
			t.Errorf("--error %q: %+v", text, p)
		}
	}
	// A session that sends one small image, within every limit: the
	// image errors name nothing sessfix repairs there.
	small := imageSession(t, store.ShapeStorage, storetest.Image{Mime: "image/png", Filename: "dot.png", Base64: storetest.NoisyPNG(t, 3, 4, 4)})
	for _, text := range []string{f.ProviderError, "request contains 52 images, exceeding the maximum of 50 allowed per request"} {
		p, err := PlanFromError(small, text, planOpts())
		if err != nil {
			t.Fatal(err)
		}
		if !p.Empty() || len(p.Unfixed) != 1 || !strings.Contains(p.Unfixed[0].Reason, opencode.NotRepairedYetNote) {
			t.Errorf("--error %q on a session with an image: %+v", text, p)
		}
	}
}

package fix

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// counted returns opts with a Check that counts the checks of the session
// (every rule, opts' clock and settle window, or check when set).
func counted(opts Options, check func(*store.Session) []scan.Finding, n *int) Options {
	if check == nil {
		v := opts.validation()
		check = func(s *store.Session) []scan.Finding { return scan.CheckSession(s, v) }
	}
	opts.Check = func(s *store.Session) []scan.Finding {
		*n++
		return check(s)
	}
	return opts
}

// planBoth plans s with joint verification and one repair at a time, and
// fails the test when the plans differ. It returns the joint plan and the
// number of checks each way took.
func planBoth(t *testing.T, s *store.Session, opts Options) (p *SessionPlan, joint, alone int) {
	t.Helper()
	jointFailed = func(id string, err error) { t.Errorf("joint verification failed session %s: %v", id, err) }
	defer func() { jointFailed = func(string, error) {} }()
	check := opts.Check
	jo := counted(opts, check, &joint)
	all := jo.Check(s)
	joint = 0
	p, err := PlanChecked(s, all, all, jo)
	ao := counted(opts, check, &alone)
	ao.oneAtATime = true
	q, qerr := PlanChecked(s, all, all, ao)
	if (err == nil) != (qerr == nil) || err != nil && err.Error() != qerr.Error() {
		t.Fatalf("joint verification: %v; one at a time: %v", err, qerr)
	}
	if err != nil {
		return nil, joint, alone
	}
	if a, b := planText(p), planText(q); a != b {
		t.Fatalf("joint verification plans differently from one repair at a time (%d findings):\n%s", len(all), lineDiff(a, b))
	}
	return p, joint, alone
}

// planText renders everything a plan decides, with the ids it mints
// numbered in order of appearance (they are random).
func planText(p *SessionPlan) string {
	var b strings.Builder
	for _, r := range p.Fixed {
		fmt.Fprintf(&b, "fixed %s %s %s by %q (%s, %d edits)\n", r.Finding.Code, r.Finding.MessageID, r.Finding.PartID, r.Strategy, r.Mutations, r.Edits)
	}
	for _, u := range p.Unfixed {
		fmt.Fprintf(&b, "unfixed %s %s %s: %s\n", u.Finding.Code, u.Finding.MessageID, u.Finding.PartID, u.Reason)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "note %s\n", n)
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "skipped %s %s %s: %s\n", s.Edit.Op, s.Edit.Kind, s.Edit.ID, s.Reason)
	}
	for _, e := range p.Changes.Edits {
		fmt.Fprintf(&b, "edit %s %s %s (message %s, new id %s) %s [%s] %s\n%s\n", e.Op, e.Kind, e.ID, e.MessageID, e.NewID, e.Mutation, e.Rule, e.Reason, e.After)
	}
	text := b.String()
	n := 0
	for _, e := range p.Changes.Edits {
		for _, id := range []string{e.NewID, map[bool]string{true: e.ID}[e.Op == store.OpAdd]} {
			if id != "" && strings.Contains(text, id) {
				n++
				text = strings.ReplaceAll(text, id, fmt.Sprintf("<new id %d>", n))
			}
		}
	}
	return text
}

// lineDiff shows the first lines where two texts differ.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		x, y := "", ""
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  joint:        %s\n  one at a time: %s", i+1, x, y)
		}
	}
	return "(same)"
}

// TestJointMatchesOneAtATimeOnFixtures: on every rule fixture, in every
// shape, joint verification plans exactly what checking one repair at a
// time plans.
func TestJointMatchesOneAtATimeOnFixtures(t *testing.T) {
	fixtureStores(t, func(t *testing.T, st store.Store, idle time.Duration) {
		for _, s := range loadReadable(t, st) {
			planBoth(t, s, clockFor(s, idle))
		}
	})
}

// TestJointMatchesOneAtATimeOnDamagedSessions: generated sessions with
// every injected defect, further damaged at random (blank text, unsigned,
// synthetic and misplaced thinking, running tools, dropped step markers and
// user messages, errors and stored provider errors, unfinished and empty
// messages, model switches, a history cut inside a tool loop), planned with
// the default strategies and with chosen ones: joint verification plans
// exactly what checking one repair at a time plans.
func TestJointMatchesOneAtATimeOnDamagedSessions(t *testing.T) {
	choices := []map[string]string{
		nil,
		{"SF105": "exclude", "SF104": "delete"},
		{"SF103": "strip", "SF107": "exclude", "SF101": "inject"},
		{"SF302": "exclude", "SF153": "exclude"},
	}
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage, store.ShapeSessions} {
		for seed := range seeds {
			t.Run(fmt.Sprintf("%s/%d", shape, seed), func(t *testing.T) {
				s := damagedSession(t, shape, uint64(seed))
				opts := clockFor(s, time.Hour)
				opts.Strategies = choices[seed%len(choices)]
				p, joint, alone := planBoth(t, s, opts)
				t.Logf("%d fixed, %d unfixed; %d checks joint, %d one at a time", len(p.Fixed), len(p.Unfixed), joint, alone)
			})
		}
	}
}

// damagedSession generates a session of 64 messages with every kind of
// injected defect and damages it further at random.
func damagedSession(t *testing.T, shape store.Shape, seed uint64) *store.Session {
	t.Helper()
	cfg := storegen.Config{Sessions: 1, Messages: 64, Parts: 5, ToolOutput: 64, DefectRate: 0.4, Seed: seed + 1}
	path, _, err := storegen.Generate(shape, t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ss := storetest.LoadAll(t, storetest.OpenOne(t, path))
	if len(ss) != 1 {
		t.Fatalf("generated %d sessions, want 1", len(ss))
	}
	s := ss[0]
	d := damager{t: t, s: s, rng: rand.New(rand.NewPCG(seed, 7))}
	d.run()
	return s
}

type damager struct {
	t   *testing.T
	s   *store.Session
	rng *rand.Rand
}

func (d *damager) set(r *store.Record, v any, keys ...string) []byte {
	raw, err := setJSON(r.Raw, v, keys...)
	if err != nil {
		d.t.Fatal(err)
	}
	return raw
}

func (d *damager) part(m *store.Message, i int, raw []byte) {
	p := m.Parts[i]
	rec := p.Record
	rec.Raw = raw
	np, err := store.NewPart(rec, m.ID, p.SessionID)
	if err != nil {
		d.t.Fatal(err)
	}
	m.Parts[i] = np
}

func (d *damager) message(i int, raw []byte) {
	m := d.s.Messages[i]
	rec := m.Record
	rec.Raw = raw
	nm, err := store.NewMessage(rec, m.SessionID)
	if err != nil {
		d.t.Fatal(err)
	}
	nm.Parts = m.Parts
	d.s.Messages[i] = nm
}

func (d *damager) partsOf(m *store.Message, typ string) []int {
	var out []int
	for i, p := range m.Parts {
		if p.Type == typ {
			out = append(out, i)
		}
	}
	return out
}

// Provider errors as OpenCode stores them (one with an index, one without).
var damageErrors = []string{
	"messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).",
	"messages: text content blocks must contain non-whitespace text",
	"messages.5.content.1: Invalid `signature` in `thinking` block",
}

func (d *damager) run() {
	s := d.s
	// A history cut inside a tool loop: the session ends with an assistant
	// step that called tools.
	if d.rng.IntN(3) == 0 {
		for i := len(s.Messages) - 1; i > len(s.Messages)/2; i-- {
			if s.Messages[i].Role == "assistant" && len(d.partsOf(s.Messages[i], "tool")) > 0 {
				s.Messages = s.Messages[:i+1]
				break
			}
		}
	}
	for i := 0; i < len(s.Messages); i++ {
		m := s.Messages[i]
		if d.rng.IntN(4) != 0 {
			continue
		}
		if m.Role == "user" {
			if d.rng.IntN(3) == 0 && i > 0 {
				// The turns around it merge.
				s.Messages = slices.Delete(s.Messages, i, i+1)
				i--
			}
			continue
		}
		switch d.rng.IntN(13) {
		case 0: // blank text
			for _, j := range d.partsOf(m, "text") {
				d.part(m, j, d.set(&m.Parts[j].Record, []string{"", "  "}[d.rng.IntN(2)], "text"))
			}
		case 1: // unsigned thinking
			for _, j := range d.partsOf(m, "reasoning") {
				d.part(m, j, d.set(&m.Parts[j].Record, json.RawMessage(`{}`), "metadata"))
			}
		case 2: // a tool left running
			for _, j := range d.partsOf(m, "tool") {
				d.part(m, j, d.set(&m.Parts[j].Record, "running", "state", "status"))
			}
		case 3: // no step markers: the message's steps merge
			m.Parts = slices.DeleteFunc(m.Parts, func(p *store.Part) bool { return p.Type == "step-start" })
		case 4: // thinking after the first content part
			r, c := d.partsOf(m, "reasoning"), slices.Concat(d.partsOf(m, "tool"), d.partsOf(m, "text"))
			if len(r) > 0 && len(c) > 0 {
				a, b := m.Parts[r[0]], m.Parts[c[0]]
				d.rekeyPart(m, r[0], b.ID)
				d.rekeyPart(m, c[0], a.ID)
				slices.SortFunc(m.Parts, func(x, y *store.Part) int { return strings.Compare(x.ID, y.ID) })
			}
		case 5: // aborted, or failed with a provider error
			e := `{"name":"MessageAbortedError","data":{"message":"aborted"}}`
			if d.rng.IntN(2) == 0 {
				text, _ := json.Marshal(damageErrors[d.rng.IntN(len(damageErrors))])
				e = `{"name":"APIError","data":{"message":` + string(text) + `,"isRetryable":false}}`
			}
			d.message(i, d.set(&m.Record, json.RawMessage(e), "error"))
		case 6: // never finished
			d.message(i, d.set(&m.Record, 0, "time", "completed"))
		case 7: // only its step marker left
			m.Parts = slices.DeleteFunc(m.Parts, func(p *store.Part) bool { return p.Type != "step-start" })
		case 8: // another model
			raw := d.set(&m.Record, "openai", "providerID")
			rec := m.Record
			rec.Raw = raw
			d.message(i, d.set(&rec, "gpt-5", "modelID"))
		case 9: // synthetic thinking
			for _, j := range d.partsOf(m, "reasoning") {
				d.part(m, j, d.set(&m.Parts[j].Record, true, "synthetic"))
			}
		case 10: // no parts at all
			m.Parts = nil
		case 11: // trailing whitespace
			for _, j := range d.partsOf(m, "text") {
				d.part(m, j, d.set(&m.Parts[j].Record, "done \n", "text"))
			}
		case 12: // a stored provider error on the last assistant message
			last := len(s.Messages) - 1
			for last > 0 && s.Messages[last].Role != "assistant" {
				last--
			}
			text, _ := json.Marshal(damageErrors[d.rng.IntN(len(damageErrors))])
			lm := s.Messages[last]
			d.message(last, d.set(&lm.Record, json.RawMessage(`{"name":"APIError","data":{"message":`+string(text)+`,"isRetryable":false}}`), "error"))
		}
	}
}

// rekeyPart gives part j of m another id (in its body too, for the JSON
// shapes).
func (d *damager) rekeyPart(m *store.Message, j int, id string) {
	p := m.Parts[j]
	rec := p.Record
	rec.ID = id
	if p.Get("id").Exists() {
		rec.Raw = d.set(&p.Record, id, "id")
	}
	np, err := store.NewPart(rec, m.ID, p.SessionID)
	if err != nil {
		d.t.Fatal(err)
	}
	m.Parts[j] = np
}

// tid is a valid OpenCode id of the prefix that sorts by n.
func tid(prefix string, n int) string { return fmt.Sprintf("%s_a%011xAAAAAAAAAAAAAA", prefix, n) }

// turns builds a session of user messages each followed by one assistant
// message, in the shape: asst(i) gives the i-th assistant message's fields
// and parts (each a JSON object; ids are added), with every key OpenCode's
// schema requires.
func turns(t *testing.T, n int, model string, asst func(i int) (fields string, parts []string)) *sb {
	b := newSB(t, store.ShapeSessions)
	id := 0
	next := func(prefix string) string { id++; return tid(prefix, id) }
	for i := range n {
		uid := next("msg")
		u := b.msg(uid, "user", fmt.Sprintf(`{"role":"user","time":{"created":%d},"model":{"providerID":"anthropic","modelID":%q}}`, 10*i+1, model))
		b.part(u, next("prt"), `{"type":"text","text":"go on"}`)
		fields, parts := asst(i)
		if fields == "" {
			fields = fmt.Sprintf(`{"role":"assistant","parentID":%q,"providerID":"anthropic","modelID":%q,"time":{"created":%d,"completed":%d},"finish":"stop"}`, uid, model, 10*i+2, 10*i+3)
		}
		a := b.msg(next("msg"), "assistant", fields)
		for _, p := range parts {
			b.part(a, next("prt"), p)
		}
	}
	return b.complete()
}

// fixedBy lists a plan's repairs as CODE@N=STRATEGY, N the last two hex
// digits of the message id (tid).
func fixedBy(p *SessionPlan) string {
	var out []string
	for _, r := range p.Fixed {
		id := r.Finding.MessageID
		out = append(out, r.Finding.Code+"@"+id[len(id)-16:len(id)-14]+"="+r.Strategy)
	}
	return strings.Join(out, " ")
}

// TestJointConflictingRepairsFallBackToOneAtATime: stripping the unsigned
// thinking of either of two messages is fine alone, but stripping both
// leaves no reasoning the model produced, so the session no longer counts as
// thinking and the last message's (synthetic) thinking becomes an error
// (SF106). Checked together the two repairs fail; the plan must be the one
// checking them one at a time gives: the first stripped, the second
// excluded instead.
func TestJointConflictingRepairsFallBackToOneAtATime(t *testing.T) {
	const model = "claude-2.1" // thinks only by the evidence in the session
	b := turns(t, 3, model, func(i int) (string, []string) {
		reasoning := `{"type":"reasoning","text":"hmm","time":{"start":1,"end":2}}`
		if i == 2 {
			reasoning = `{"type":"reasoning","text":"hmm","synthetic":true,` + signedMeta + `,"time":{"start":1,"end":2}}`
		}
		return "", []string{`{"type":"step-start"}`, reasoning, `{"type":"text","text":"done"}`, `{"type":"step-finish"}`}
	})
	opts := planOpts()
	if fs := opts.check(b.s); strings.Join(codes(fs), " ") != "SF107 SF107" {
		t.Fatalf("want SF107 on the first two messages, got %v", codes(fs))
	}
	p, _, _ := planBoth(t, b.s, opts)
	if got, want := fixedBy(p), "SF107@03=strip SF107@0a=exclude"; got != want {
		t.Errorf("repairs %s, want %s; unfixed %+v", got, want, p.Unfixed)
	}
}

// blankTexts is a session of n turns whose assistant message sends a
// whitespace-only text (SF151 on each); extra adds parts to the i-th.
func blankTexts(t *testing.T, n int, extra func(i int) []string) *sb {
	return turns(t, n, "claude-sonnet-4-5", func(i int) (string, []string) {
		parts := []string{`{"type":"step-start"}`, `{"type":"text","text":"  "}`}
		if extra != nil {
			parts = append(parts, extra(i)...)
		}
		return "", append(parts, `{"type":"step-finish"}`)
	})
}

// withFinding returns a check that adds f whenever when(s) holds.
func withFinding(f scan.Finding, when func(*store.Session) bool) func(*store.Session) []scan.Finding {
	return func(s *store.Session) []scan.Finding {
		fs := scan.CheckSession(s, scanOpts())
		if when(s) {
			f.SessionID = s.ID
			fs = append(fs, f)
		}
		return fs
	}
}

// has reports whether message msgID has a part for which is holds.
func has(s *store.Session, msgID string, is func(*store.Part) bool) bool {
	m := s.Message(msgID)
	return m != nil && slices.ContainsFunc(m.Parts, is)
}

func placeholder(p *store.Part) bool { return opencode.PartText(p) == DefaultPlaceholder }

// TestJointFindsConflictOutsideTheRepairs: the placeholder text is fine in
// either of two messages, but a finding elsewhere appears when both have
// it. Checked together the repairs fail; the plan is the one checking
// them one at a time gives: the second message, where no strategy passes,
// is left as it is.
func TestJointFindsConflictOutsideTheRepairs(t *testing.T) {
	b := blankTexts(t, 3, nil)
	u1, a1, a2, a3 := b.s.Messages[0].ID, b.s.Messages[1].ID, b.s.Messages[3].ID, b.s.Messages[5].ID
	both := func(s *store.Session) bool { return has(s, a1, placeholder) && has(s, a2, placeholder) }
	for _, conflict := range []scan.Finding{
		{Code: "SF204", MessageID: u1, Message: "both have it"},
		// On a message whose repair is checked with them: the joint check
		// cannot tell which repair brings it.
		{Code: "SF204", MessageID: a3, Message: "both have it"},
		// Without a message to hold it, the conflict is the session's.
		{Code: "SF203", Message: "both have it", Location: store.Location{Path: "/store"}},
	} {
		opts := planOpts()
		opts.Check = withFinding(conflict, both)
		p, _, _ := planBoth(t, b.s, opts)
		if got, want := fixedBy(p), "SF151@03=replace SF151@0f=replace"; got != want {
			t.Errorf("conflict on %q: repairs %s, want %s", conflict.MessageID, got, want)
		}
		if len(p.Unfixed) != 1 || p.Unfixed[0].Finding.MessageID != a2 || !strings.Contains(p.Unfixed[0].Reason, "replace would cause "+conflict.Code) {
			t.Errorf("conflict on %q: want the second message unfixed for the conflict, got %+v", conflict.MessageID, p.Unfixed)
		}
	}
}

// TestJointTakesBackLaterRepairs: the middle message also left a tool
// running, a second finding that waits for its message's first repair
// while the last message's repair is accepted. Its abort fails (a finding
// appears on the message), and so its next strategy, exclude, must be
// checked on the session with exactly the repairs before it: the last
// message's repair is taken back and decided again after it.
func TestJointTakesBackLaterRepairs(t *testing.T) {
	b := blankTexts(t, 3, func(i int) []string {
		if i == 1 {
			return []string{`{"type":"tool","callID":"c1","tool":"bash","state":{"status":"running","input":{},"time":{"start":1}}}`}
		}
		return nil
	})
	a2 := b.s.Messages[3].ID
	opts := planOpts()
	opts.Check = withFinding(scan.Finding{Code: "SF204", MessageID: a2, Message: "aborted here"},
		func(s *store.Session) bool {
			return has(s, a2, func(p *store.Part) bool { return p.Get("state.error").String() == ToolAbortedError })
		})
	p, joint, _ := planBoth(t, b.s, opts)
	if got, want := fixedBy(p), "SF151@03=replace SF151@09=replace SF151@10=replace"; got != want {
		t.Errorf("repairs %s, want %s", got, want)
	}
	if len(p.Unfixed) != 1 || p.Unfixed[0].Finding.Code != "SF105" {
		t.Errorf("want SF105 unfixed, got %+v", p.Unfixed)
	}
	// The joint check of the three first repairs; the check of the session
	// as it was before the abort; abort and exclude checked alone; the last
	// repair again.
	if joint != 5 {
		t.Errorf("%d checks, want 5", joint)
	}
}

// TestJointCreditsRepairsOfOneMessageInOrder: stripping the thinking of a
// message (chosen for its misplaced thinking) also removes its unsigned
// thinking: that finding is credited to the earlier repair, as one at a
// time credits it, never repaired twice; the other messages' repairs are
// checked in the same joint check.
func TestJointCreditsRepairsOfOneMessageInOrder(t *testing.T) {
	b := turns(t, 3, "claude-sonnet-4-5", func(i int) (string, []string) {
		if i == 1 {
			return "", []string{`{"type":"step-start"}`, `{"type":"text","text":"first"}`,
				`{"type":"reasoning","text":"late",` + signedMeta + `}`,
				`{"type":"reasoning","text":"unsigned"}`, `{"type":"step-finish"}`}
		}
		return "", []string{`{"type":"step-start"}`, `{"type":"reasoning","text":"ok",` + signedMeta + `}`,
			`{"type":"text","text":"  "}`, `{"type":"step-finish"}`}
	})
	opts := planOpts()
	opts.Strategies = map[string]string{"SF103": "strip"}
	p, joint, alone := planBoth(t, b.s, opts)
	if got, want := fixedBy(p), "SF151@03=replace SF153@0a=strip SF155@0a= SF107@0a= SF151@12=replace"; got != want {
		t.Errorf("repairs %s, want %s; unfixed %+v", got, want, p.Unfixed)
	}
	if joint != 1 || alone != 3 {
		t.Errorf("%d checks joint (want 1), %d one at a time (want 3)", joint, alone)
	}
}

// TestJointChecksIndependentRepairsTogether: the repairs of a generated
// session's defects, one per message, are checked with one check of the
// session, not one each.
func TestJointChecksIndependentRepairsTogether(t *testing.T) {
	path, stats, err := storegen.Generate(store.ShapeSQLite, t.TempDir(), storegen.Config{Sessions: 1, Messages: 200, Parts: 5, ToolOutput: 64, DefectRate: 0.3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := storetest.LoadAll(t, storetest.OpenOne(t, path))[0]
	p, joint, alone := planBoth(t, s, clockFor(s, time.Hour))
	if len(p.Fixed) < stats.DefectCount() || len(p.Unfixed) > 0 {
		t.Fatalf("%d fixed, %d unfixed, %d defects injected", len(p.Fixed), len(p.Unfixed), stats.DefectCount())
	}
	if joint != 1 || alone < len(p.Fixed) {
		t.Errorf("%d repairs: %d checks joint (want 1), %d one at a time", len(p.Fixed), joint, alone)
	}
}

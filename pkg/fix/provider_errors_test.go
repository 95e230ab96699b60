package fix

import (
	"context"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// partsWith returns the ids of the session's parts (before the failed
// attempt) for which has is true.
func partsWith(s *store.Session, has func(*store.Part) bool) map[string]bool {
	out := map[string]bool{}
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if has(p) {
				out[p.ID] = true
			}
		}
	}
	return out
}

func firstPart(t *testing.T, s *store.Session, typ string) (*store.Message, *store.Part) {
	t.Helper()
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.Type == typ {
				return m, p
			}
		}
	}
	t.Fatalf("session %s has no %s part", s.ID, typ)
	return nil, nil
}

// writePlan writes a plan to the store the way `sessfix fix` does.
func writePlan(t *testing.T, rs *realstore.Store, opts Options, p *SessionPlan) {
	t.Helper()
	st := storetest.OpenOne(t, rs.Path)
	w, err := shapes.OpenWriter(st.Info(), store.WriteOptions{Now: opts.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Apply(context.Background(), p.Changes); err != nil {
		t.Fatal(err)
	}
}

// Every provider family's error, stored on a failed attempt of a real
// 1.18.33 session the way OpenCode stores it, is SF302 with its type and a
// fix; fix (from the finding) and fix --error (from the text) plan the same
// repair, the one the lab proved (internal/opencodetest/OBSERVED.md); once
// it is written SF302 is history and nothing is planned.
func TestProviderErrorsRepair(t *testing.T) {
	type setup struct {
		dir, title string
		// breakIt breaks the session as the lab did and returns the error
		// text the provider answers, the type, the stored message and
		// part it maps to ("" when it names none), and the parts the
		// repair must touch with their mutation.
		breakIt func(t *testing.T, rs *realstore.Store, s *store.Session) (text string, typ opencode.ErrorType, msg, part string, want map[string]string)
	}
	cases := map[string]setup{
		"openai encrypted content of another account": {"1.18.33-openai-responses", "openai tool loop",
			func(t *testing.T, rs *realstore.Store, s *store.Session) (string, opencode.ErrorType, string, string, map[string]string) {
				m, p := firstPart(t, s, "reasoning")
				want := map[string]string{}
				for id := range partsWith(s, opencode.HasEncryptedReasoning) {
					want[id] = "dropEncryptedReasoning"
				}
				if len(want) < 2 {
					t.Fatalf("the tool loop should have two encrypted reasoning parts: %v", want)
				}
				id := p.Get("metadata.openai.itemId").String()
				return "The encrypted content for item " + id + " could not be verified.", opencode.ErrorEncryptedContentInvalid, m.ID, p.ID, want
			}},
		"openai store switched to true": {"1.18.33-openai-responses", "openai tool loop",
			func(t *testing.T, rs *realstore.Store, s *store.Session) (string, opencode.ErrorType, string, string, map[string]string) {
				m, p := firstPart(t, s, "reasoning")
				want := map[string]string{}
				for id := range partsWith(s, opencode.HasItemID) {
					want[id] = "dropItemIDs"
				}
				if len(want) < 4 {
					t.Fatalf("the tool loop should have reasoning, tool and text parts with item ids: %v", want)
				}
				id := p.Get("metadata.openai.itemId").String()
				return "Item with id '" + id + "' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
					opencode.ErrorItemNotPersisted, m.ID, p.ID, want
			}},
		"openai killed after the reasoning item": {"1.18.33-openai-responses", "openai tool loop",
			func(t *testing.T, rs *realstore.Store, s *store.Session) (string, opencode.ErrorType, string, string, map[string]string) {
				// The answer step's reasoning names the error; only its
				// message is repaired.
				var m *store.Message
				for _, x := range s.Messages {
					if x.Role == "assistant" {
						m = x
					}
				}
				var p *store.Part
				for _, q := range m.Parts {
					if q.Type == "reasoning" {
						p = q
					}
				}
				id := p.Get("metadata.openai.itemId").String()
				return "Item '" + id + "' of type 'reasoning' was provided without its required following item.",
					opencode.ErrorReasoningWithoutFollowing, m.ID, p.ID, map[string]string{p.ID: "dropEncryptedReasoning"}
			}},
		"kimi tool step without reasoning": {"1.18.33-openai-compatible", "kimi-custom tool loop",
			func(t *testing.T, rs *realstore.Store, s *store.Session) (string, opencode.ErrorType, string, string, map[string]string) {
				m, p := firstPart(t, s, "tool")
				for _, q := range m.Parts {
					if q.Type == "reasoning" {
						rs.Delete(t, m, q)
					}
				}
				// messages[2]: [system, user, the tool step, its tool result, …]
				return "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2",
					opencode.ErrorReasoningContentMissing, m.ID, p.ID, map[string]string{"new part of " + m.ID: "prependThinkingPart"}
			}},
		"gemini signatures of another account": {"1.18.33-google", "",
			func(t *testing.T, rs *realstore.Store, s *store.Session) (string, opencode.ErrorType, string, string, map[string]string) {
				want := map[string]string{}
				for id := range partsWith(s, opencode.HasThoughtSignature) {
					want[id] = "dropThoughtSignatures"
				}
				if len(want) == 0 {
					t.Fatal("the gemini tool loop has no signed call")
				}
				return "Corrupted thought signature.", opencode.ErrorThoughtSignatureCorrupted, "", "", want
			}},
		"bedrock signatures of another account": {"1.18.33-amazon-bedrock", "",
			func(t *testing.T, rs *realstore.Store, s *store.Session) (string, opencode.ErrorType, string, string, map[string]string) {
				m, p := firstPart(t, s, "reasoning")
				want := map[string]string{}
				for id := range partsWith(s, opencode.HasBedrockSignature) {
					want[id] = "stripThinkingParts"
				}
				if len(want) < 2 {
					t.Fatalf("the bedrock tool loop should have two signed reasoning parts: %v", want)
				}
				// As OpenCode stores a ConverseStream error.
				return "undefined: messages.1.content.0: Invalid `signature` in `thinking` block", opencode.ErrorInvalidSignature, m.ID, p.ID, want
			}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var rs *realstore.Store
			if c.title == "" {
				rs = realstore.Copy(t, c.dir)
			} else {
				rs = realstore.CopyTitled(t, c.dir, c.title)
			}
			text, typ, msg, part, want := c.breakIt(t, rs, rs.Load(t))
			rs.FailResume(t, text)
			opts := realOpts(rs)
			s := rs.Load(t)
			fs := scan.CheckSession(s, opts.Scan)
			f := fs0(fs, "SF302")
			if f.Severity != scan.Error || f.ErrorType != string(typ) || f.Fix != typ.DefaultFix() || f.ProviderError != text {
				t.Fatalf("SF302 = %s %s %q (fix %q); want a fixable %s error", f.Severity, f.ErrorType, f.Message, f.Fix, typ)
			}
			if msg != "" && !strings.Contains(f.Message, "(stored message "+msg+", part "+part+")") {
				t.Errorf("SF302 %q; want it to name message %s part %s", f.Message, msg, part)
			}
			d := scan.Diagnose(s, text, opts.Scan)
			if d.ErrorType != typ || d.MessageID != msg || d.PartID != part {
				t.Errorf("diagnose: %s %s/%s (%s); want %s %s/%s", d.ErrorType, d.MessageID, d.PartID, d.Describe(), typ, msg, part)
			}
			fromFinding, err := Plan(s, fs, opts)
			if err != nil {
				t.Fatal(err)
			}
			pasted, err := PlanFromError(s, text, opts)
			if err != nil {
				t.Fatal(err)
			}
			for how, p := range map[string]*SessionPlan{"fix": fromFinding, "fix --error": pasted} {
				got := map[string]string{}
				for _, ed := range p.Changes.Edits {
					if ed.Op == store.OpAdd {
						// A new part's id is minted at random.
						got["new part of "+ed.MessageID] = ed.Mutation
						continue
					}
					got[ed.ID] = ed.Mutation
				}
				if len(got) != len(want) {
					t.Errorf("%s plans\n%s\nwant %v; unfixed %+v", how, editSummary(p), want, p.Unfixed)
					continue
				}
				for id, mut := range want {
					if got[id] != mut {
						t.Errorf("%s: %s gets %q, want %q\n%s", how, id, got[id], mut, editSummary(p))
					}
				}
			}
			writePlan(t, rs, opts, fromFinding)
			s = rs.Load(t)
			fs = scan.CheckSession(s, opts.Scan)
			if g := fs0(fs, "SF302"); g.Severity != scan.Info || !strings.Contains(g.Message, "should no longer fail") {
				t.Errorf("after the fix SF302 = %s %q; want info saying it is history", g.Severity, g.Message)
			}
			for _, g := range fs {
				if g.Severity >= scan.Warning {
					t.Errorf("after the fix: %s %s %s", g.Code, g.Severity, g.Message)
				}
			}
			if p, err := Plan(s, fs, opts); err != nil || !p.Empty() {
				t.Errorf("after the fix: plan %v\n%s", err, editSummary(p))
			}
		})
	}
}

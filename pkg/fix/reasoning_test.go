package fix

import (
	"strings"
	"testing"
	"time"

	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// switchTo makes the session's next request go to provider/model, as
// `opencode run --model` leaves the session row.
func switchTo(t *testing.T, s *store.Session, provider, model string) {
	t.Helper()
	raw, err := sjson.SetBytes(append([]byte(nil), s.Info.Raw...), "model", map[string]string{"providerID": provider, "id": model})
	if err != nil {
		t.Fatal(err)
	}
	s.Info.Raw = raw
}

// callIDs are the callIDs of the session's tool parts.
func callIDs(s *store.Session) []string {
	var out []string
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.Type == "tool" {
				out = append(out, p.Get("callID").String())
			}
		}
	}
	return out
}

// TestReasoningRepair: every DeepSeek and Kimi step the thinking rule may
// refuse (a tool step without reasoning, a step of another model after a
// switch) gets reasoning of the current model: the plan passes, the
// request then sends a non-empty reasoning_content on every tool step and
// still holds every tool call and its output, and nothing is excluded.
func TestReasoningRepair(t *testing.T) {
	cases := []struct {
		name, dir, title string
		breakIt          func(t *testing.T, rs *realstore.Store, s *store.Session) *store.Session
		// adds and adopted are the reasoning parts added and the messages
		// marked as the current model's.
		adds, adopted int
	}{
		{name: "deepseek tool step without reasoning", dir: "1.18.33-openai-compatible", title: "deepseek tool loop", adds: 1,
			breakIt: func(t *testing.T, rs *realstore.Store, s *store.Session) *store.Session {
				m, _ := firstPart(t, s, "tool")
				for _, p := range m.Parts {
					if p.Type == "reasoning" {
						rs.Delete(t, m, p)
					}
				}
				return rs.Load(t)
			}},
		{name: "deepseek-chat, then deepseek-reasoner", dir: "1.18.33-openai-compatible", title: "deepseek-chat tool loop", adds: 1, adopted: 1,
			breakIt: func(t *testing.T, _ *realstore.Store, s *store.Session) *store.Session {
				switchTo(t, s, "deepseek", "deepseek-reasoner")
				return s
			}},
		// The Anthropic tool step has its (signed) thinking: once it is
		// the current model's, that goes as reasoning_content.
		{name: "anthropic, then deepseek-reasoner", dir: "1.18.33", adopted: 1,
			breakIt: func(t *testing.T, _ *realstore.Store, s *store.Session) *store.Session {
				switchTo(t, s, "deepseek", "deepseek-reasoner")
				return s
			}},
		{name: "kimi (not interleaved) tool step without reasoning", dir: "1.18.33-openai-compatible", title: "kimi-custom tool loop", adds: 1,
			breakIt: func(t *testing.T, rs *realstore.Store, s *store.Session) *store.Session {
				m, _ := firstPart(t, s, "tool")
				for _, p := range m.Parts {
					if p.Type == "reasoning" {
						rs.Delete(t, m, p)
					}
				}
				return rs.Load(t)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rs *realstore.Store
			if c.title == "" {
				rs = realstore.Copy(t, c.dir)
			} else {
				rs = realstore.CopyTitled(t, c.dir, c.title)
			}
			s := c.breakIt(t, rs, rs.Load(t))
			now := func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }
			opts := Options{Now: now, Scan: &scan.Options{Now: now, Settle: time.Millisecond}}
			fs := scan.CheckSession(s, opts.Scan)
			if f := fs0(fs, "SF163"); f.Code == "" || f.Fix != "prependThinkingPart" {
				t.Fatalf("SF163 = %+v; want a finding repaired by prependThinkingPart\n%v", f, codes(fs))
			}
			p, err := Plan(s, fs, opts)
			if err != nil {
				t.Fatal(err)
			}
			adds, adopted := 0, 0
			for _, ed := range p.Changes.Edits {
				switch ed.Mutation {
				case "prependThinkingPart":
					adds++
					if !strings.Contains(string(ed.After), `"text":"`+NotRecordedText+`"`) || !strings.Contains(string(ed.After), `"synthetic":true`) {
						t.Errorf("new part %s", ed.After)
					}
				case "adoptCurrentModel":
					adopted++
				default:
					t.Errorf("unexpected edit %s %s %s", ed.Op, ed.ID, ed.Mutation)
				}
			}
			if adds != c.adds || adopted != c.adopted {
				t.Errorf("%d reasoning parts added, %d messages adopted; want %d, %d\n%s", adds, adopted, c.adds, c.adopted, editSummary(p))
			}
			fixed, err := ApplyInMemory(s, p.Changes)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range scan.CheckSession(fixed, opts.Scan) {
				if f.Severity >= scan.Warning {
					t.Errorf("after the fix: %s %s %s", f.Code, f.Severity, f.Message)
				}
			}
			r := sent.Build(fixed, sent.Options{NextPrompt: true})
			calls, results := map[string]bool{}, map[string]bool{}
			for n, pm := range r.Messages {
				for _, b := range pm.Blocks {
					switch b.Type {
					case "tool_use":
						calls[b.ToolUseID] = true
						if rc, ok := pm.ReasoningContent(); !ok || strings.TrimSpace(rc) == "" {
							t.Errorf("messages[%d] calls a tool with reasoning_content %q (sent %v)", n, rc, ok)
						}
					case "tool_result":
						results[b.ToolUseID] = true
					}
				}
			}
			for _, id := range callIDs(s) {
				if !calls[id] || !results[id] {
					t.Errorf("tool call %s is no longer in the request (call %v, output %v)", id, calls[id], results[id])
				}
			}
		})
	}
}

// TestReasoningRepairLeavesHealthySessionsAlone: a DeepSeek tool loop whose
// every step has its reasoning plans nothing.
func TestReasoningRepairLeavesHealthySessionsAlone(t *testing.T) {
	rs := realstore.CopyTitled(t, "1.18.33-openai-compatible", "deepseek tool loop")
	s := rs.Load(t)
	opts := realOpts(rs)
	fs := scan.CheckSession(s, opts.Scan)
	p, err := Plan(s, fs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes.Edits) > 0 {
		t.Errorf("a healthy session gets edits:\n%s", editSummary(p))
	}
}

// TestReasoningRepairOnlyForReasoningContentAPIs: a session that failed on
// DeepSeek and then moved to Anthropic is not given unsigned reasoning
// marked as Anthropic's.
func TestReasoningRepairOnlyForReasoningContentAPIs(t *testing.T) {
	rs := realstore.CopyTitled(t, "1.18.33-openai-compatible", "deepseek-chat tool loop")
	s := rs.Load(t)
	switchTo(t, s, "anthropic", "claude-sonnet-4-5")
	m, _ := firstPart(t, s, "tool")
	if _, err := giveReasoning(s, m, testEnv()); err != errNotApplicable {
		t.Errorf("giveReasoning for an anthropic session: %v, want not applicable", err)
	}
	switchTo(t, s, "deepseek", "deepseek-reasoner")
	if eds, err := giveReasoning(s, m, testEnv()); err != nil || len(eds) != 2 {
		t.Errorf("giveReasoning for a deepseek-reasoner session: %d edits, %v; want the model adopted and a part", len(eds), err)
	}
}

package scan

import (
	"slices"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// Preflight builds the request a resume of the session sends (the history
// and the user's next prompt) and checks it against the provider rules;
// the rules about a final assistant message are checked on the history
// alone when OpenCode would send it without a new prompt (its last
// assistant turn is unfinished). A session that may still be streaming is
// not checked: its request is not final. The first violation is the error
// the provider answers a resume with.
func Preflight(s *store.Session, opts *Options) []Violation {
	c := &Context{Session: s, Opts: opts}
	if c.Opts == nil {
		c.Opts = &Options{}
	}
	return computePreflight(c)
}

func computePreflight(c *Context) []Violation {
	s := c.Session
	if len(s.Messages) == 0 {
		return nil
	}
	for _, m := range s.Messages {
		if Streaming(c, m) {
			return nil
		}
	}
	r := sent.Build(s, sent.Options{NextPrompt: true})
	var final *sent.Request
	if continuesWithoutPrompt(s) {
		if f := sent.Build(s, sent.Options{}); len(f.Messages) > 0 && f.Messages[len(f.Messages)-1].Role == "assistant" {
			final = f
		}
	}
	cc := c.shared()
	cc.reqs = append(cc.reqs[:0], r)
	if final != nil {
		cc.reqs = append(cc.reqs, final)
	}
	return CheckRequest(s, r, final)
}

// continuesWithoutPrompt reports whether OpenCode's loop would send the
// history as it is: its last message is an assistant turn without error
// that did not finish (no finish, or it stopped for tool calls).
func continuesWithoutPrompt(s *store.Session) bool {
	m := s.Messages[len(s.Messages)-1]
	if m.Role != "assistant" || opencode.ErrorName(m) != "" {
		return false
	}
	switch m.Get("finish").String() {
	case "", "tool-calls", "unknown":
		return true
	}
	return false
}

func (c *Context) preflight() []Violation {
	cc := c.shared()
	if !cc.preDone {
		cc.pre = computePreflight(c)
		cc.preDone = true
	}
	return cc.pre
}

// dropsMessage reports whether the requests a resume sends, as the
// preflight built them, carry nothing of the stored message: OpenCode's
// conversion (or the provider SDK) leaves every part of it out, so it cannot
// make the provider reject the history. It is false when the preflight built
// no request (a session that may still be streaming).
func (c *Context) dropsMessage(m *store.Message) bool {
	c.preflight()
	cc := c.shared()
	if len(cc.reqs) == 0 {
		return false
	}
	if cc.carried == nil {
		cc.carried = map[string]bool{}
		for _, r := range cc.reqs {
			r.Carried(cc.carried)
		}
	}
	return !cc.carried[m.ID]
}

// preflightRule makes r a preflight rule: it reports the session's
// violations that carry its code.
func preflightRule(r *Rule) *Rule {
	code := r.Code
	r.Check = func(c *Context) {
		for _, v := range c.preflight() {
			if v.Code != code {
				continue
			}
			m := c.Session.Message(v.MessageID)
			var p *store.Part
			if m != nil && v.PartID != "" {
				p = opencode.FindPart(c.Session, v.MessageID, v.PartID)
			}
			f := At(m, p)
			f.MessageID, f.PartID = v.MessageID, v.PartID
			f.Message = v.Message
			f.Severity = v.Severity
			f.ProviderError = v.ProviderError
			f.Index = v.Index
			f.ErrorType = string(opencode.DetectErrorType(v.ProviderError))
			f.Fix = v.Fix
			if v.Fix == "" {
				c.reportNoFix(f)
				continue
			}
			c.Report(f)
		}
	}
	return r
}

// sameDefect lists, for each preflight code, the record rules that report
// the same defect on the same message.
var sameDefect = map[string][]string{
	SF150: {SF101, SF102, SF107},
	SF151: {SF104, SF101},
	SF152: {SF103, SF107},
	SF153: {SF103},
	SF154: {SF107},
	SF155: {SF102},
	SF156: {SF106},
	SF157: {SF105},
	SF160: {SF104, SF101},
	SF161: {SF101, SF102, SF107},
	SF162: {SF105},
}

// anthropicRecordRules are the record rules that stand for a rule of
// Anthropic's Messages API and Bedrock (their provider error is
// Anthropic's): empty messages, thinking order, blank text, thinking in
// the final position, unsigned thinking.
var anthropicRecordRules = []string{SF101, SF102, SF103, SF104, SF106, SF107}

// deferToFamily leaves out the warnings and errors of anthropicRecordRules
// when the session's model is in a family whose rules the preflight checks
// on the request OpenCode sends it (Chat Completions, Responses, Gemini):
// those APIs have other rules (an empty text or a reasoning-only turn is
// accepted by them, or never sent), and the preflight reports what they
// reject. Info findings stay: they say what OpenCode never sends.
func deferToFamily(s *store.Session, fs []Finding) []Finding {
	p, m := sent.CurrentModel(s)
	switch sent.FamilyIn(s, p, m) {
	case sent.Chat, sent.Responses, sent.Google:
	default:
		return fs
	}
	out := fs[:0]
	for _, f := range fs {
		if f.Severity > Info && slices.Contains(anthropicRecordRules, f.Code) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// dedupePreflight reports each defect once: a record-rule finding on the
// same message as a preflight finding about the same defect is dropped,
// and the preflight finding names the record rule in FixedBy.
func dedupePreflight(fs []Finding) []Finding {
	drop := make([]bool, len(fs))
	for i := range fs {
		codes := sameDefect[fs[i].Code]
		if len(codes) == 0 || fs[i].MessageID == "" {
			continue
		}
		var by []string
		for j := range fs {
			g := fs[j]
			if j == i || drop[j] || g.SessionID != fs[i].SessionID || g.MessageID != fs[i].MessageID || !slices.Contains(codes, g.Code) {
				continue
			}
			drop[j] = true
			if !slices.Contains(by, g.Code) {
				by = append(by, g.Code)
			}
		}
		if len(by) > 0 {
			fs[i].FixedBy = strings.Join(by, ",")
		}
	}
	out := fs[:0]
	for i, f := range fs {
		if !drop[i] {
			out = append(out, f)
		}
	}
	return out
}

package scan

import (
	"sort"
	"strings"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// Rule is one check with a stable code. Codes are never reused.
type Rule struct {
	Code     string
	Name     string
	Severity Severity
	// Lower, when set, is the lower severity some of the rule's findings
	// have, and LowerWhen says which (the finding itself says why): rules,
	// explain and docs/rules.md show both, so the list and a scan agree.
	Lower     Severity
	LowerWhen string
	// Summary is one line, lowercase, no trailing period.
	Summary string
	// What, Why, ProviderError and FixDoc are the long docs shown by
	// `sessfix explain` and docs/rules.md.
	What          string
	Why           string
	ProviderError string
	FixDoc        string
	// Marks are lower-case phrases by which a pasted or stored error is
	// recognised as this rule's when no provider error class matches it
	// (opencode.DetectErrorType): the errors OpenCode raises itself, and a
	// report-only rule's provider text. diagnose and fix --error map such
	// an error to the session's findings of the rule (MarkedCauses).
	Marks []string
	// Fixable is true when `sessfix fix` repairs the rule's findings.
	Fixable bool
	// Fix names the default mutation(s), as in rules.md.
	Fix string
	// OpenCode2 is set on the rules about OpenCode 2 databases (SF4xx).
	// Only they check a session read from OpenCode 2's own tables
	// (store.OpenCode2.V2): the other rules know OpenCode 1.x's records
	// only, and check the 1.x copy of such a session instead, their
	// findings there lowered to info while the copy is frozen (see
	// CheckSession).
	OpenCode2 bool
	// Check inspects one session and reports through c.Report.
	Check func(c *Context)
	// StoreCheck inspects one database's health (the store-health rules,
	// SF5xx) and reports through c.Report; such a rule has no Check.
	StoreCheck func(c *StoreContext)
}

// SeverityText is the rule's severity as rules and explain print it:
// "error", or "error, warning for ..." when some findings are lower.
func (r *Rule) SeverityText() string {
	if r.Lower == 0 {
		return r.Severity.String()
	}
	return r.Severity.String() + "; " + r.Lower.String() + " for " + r.LowerWhen
}

// Context is what a rule's check sees: one session and the scan options.
type Context struct {
	Session *store.Session
	Opts    *Options
	rule    *Rule
	out     *[]Finding
	// cache holds what rules compute about the session and share: the
	// preflight's violations, the history OpenCode sends, whether it is in
	// use. One per CheckSession.
	cache *sessionCache
}

// sessionCache holds what several rules compute about the same session,
// each part built on first use and shared by every rule's Context within
// one CheckSession (rules only read the session, so nothing goes stale).
type sessionCache struct {
	preDone bool
	pre     []Violation     // the preflight's violations
	reqs    []*sent.Request // the requests the preflight checked; none while a session may stream
	carried map[string]bool // ids of the stored messages reqs carry (sent.Request.carried), nil until asked

	history map[string]bool // History(Session), nil until asked

	useDone bool
	use     opencode.Use // InUse

	openDone bool
	open     *store.Message // OpenMessage(Session), for Streaming

	schemaDone bool
	schema     []*opencode.RecordSchema // SchemaOf
}

// shared returns the session's cache, making it for a Context built alone.
func (c *Context) shared() *sessionCache {
	if c.cache == nil {
		c.cache = &sessionCache{}
	}
	return c.cache
}

// Now is the scan's clock.
func (c *Context) Now() time.Time { return c.Opts.now() }

// Report adds a finding for the current rule. Location defaults from the
// part, else the message, else the session record.
func (c *Context) Report(f Finding) {
	r := c.rule
	f.Code, f.Rule = r.Code, r.Name
	if f.Severity == 0 {
		f.Severity = r.Severity
	}
	// Info findings are report-only: they describe records OpenCode never
	// sends (an errored attempt and what is on it) or facts worth knowing,
	// and the failed attempt itself is left alone (rules.md).
	switch {
	case f.Severity == Info:
		f.Fix = ""
	case f.Fix == "" && r.Fixable:
		f.Fix = r.Fix
	}
	s := c.Session
	f.Store, f.StorePath, f.Shape, f.SessionID = s.Store, s.Store.Path, s.Store.Shape, s.ID
	*c.out = append(*c.out, f)
}

// At returns a finding located at a message (and part, when p is not nil).
func At(m *store.Message, p *store.Part) Finding {
	f := Finding{}
	if m != nil {
		f.MessageID = m.ID
		f.Location = m.Loc
	}
	if p != nil {
		f.PartID = p.ID
		if f.MessageID == "" {
			f.MessageID = p.MessageID
		}
		f.Location = p.Loc
	}
	return f
}

// Rules returns every registered rule in code order.
func Rules() []*Rule {
	out := append([]*Rule(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// runOrder returns the rules in the order a check runs them: code order,
// but SF302 after every other rule of OpenCode's 1.x records (it reads what
// they found: othersFound), before the OpenCode 2 rules.
func runOrder() []*Rule {
	var out, v2 []*Rule
	var sf302 *Rule
	for _, r := range Rules() {
		switch {
		case r.Code == SF302:
			sf302 = r
		case r.OpenCode2:
			v2 = append(v2, r)
		default:
			out = append(out, r)
		}
	}
	if sf302 != nil {
		out = append(out, sf302)
	}
	return append(out, v2...)
}

// Lookup returns the rule with the code (case-insensitive), or nil.
func Lookup(code string) *Rule {
	for _, r := range registry {
		if strings.EqualFold(r.Code, code) {
			return r
		}
	}
	return nil
}

// ErrorTitle names the error ProviderError holds, for the docs: the
// provider's, or for a store-health rule OpenCode's own.
func (r *Rule) ErrorTitle() string {
	if r.StoreCheck != nil {
		return "OpenCode error"
	}
	return "Provider error"
}

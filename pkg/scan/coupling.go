package scan

import (
	"sort"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// Coupling is what the findings about one message of a session may depend
// on besides that message's own records (its body and its parts): the
// session-wide facts the rules read, and the groups of messages the rules
// read together.
//
// Every rule keeps this contract: a finding that names a message depends
// only on the records of the messages in that message's group (Group) and on
// the facts two couplings compare (Same); a finding that names a part but no
// message (an unreadable part record) depends only on that record; a finding
// that names neither may depend on anything. The facts are:
//   - whether the session may be in use (the settle policy's verdict) and
//     its open message, and whether the preflight checks it;
//   - the store's request version, the current model, a missing session record;
//   - every message's id, role, parent, creation time, error, completion and
//     whether OpenCode skips it, in order;
//   - every part id used more than once, and the messages using it;
//   - the history OpenCode loads (the last compaction);
//   - the models that think in the session (ThinkingEnabled);
//   - the failed attempt (SF302) and, when its error names a messages.N index,
//     the request it answered;
//   - the requests the preflight checks: their model, conversion and thinking
//     mode, and each provider message's role and the stored messages it was
//     built from.
//
// Messages are in one group when a provider message of one of those
// requests is built from all of them (consecutive assistant steps, tool
// results followed by the user's message): the provider rules read such a
// message as a whole.
//
// pkg/fix relies on the contract to check repairs of messages in different
// groups together: when the session with all of them applied has the same
// coupling as before, the findings about each group are the ones a check of
// that group's repair alone would give. A rule that reads more than this
// (another message's content, a new session-wide fact) must add it here.
type Coupling struct {
	facts string
	group map[string]string // message id → the first message of its group; absent when alone
}

// SessionCoupling computes the coupling of a session as CheckSession with
// opts would see it (opts' settle window and clock; rule filters do not
// matter).
func SessionCoupling(s *store.Session, opts *Options) *Coupling {
	if opts == nil {
		opts = &Options{}
	}
	return couplingOf(&Context{Session: s, Opts: opts})
}

// CheckSessionCoupling is CheckSession that can also tell the session's
// coupling (SessionCoupling): coupling computes it when asked, from the
// requests the check built.
func CheckSessionCoupling(s *store.Session, opts *Options) (findings []Finding, coupling func() *Coupling) {
	out, c := checkSession(s, opts)
	return out, func() *Coupling { return couplingOf(c) }
}

// couplingOf computes the coupling of c's session, sharing what c's rules
// computed.
func couplingOf(c *Context) *Coupling {
	s := c.Session
	var b strings.Builder
	k := &Coupling{}
	fact := func(parts ...string) {
		for i, p := range parts {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(p)
		}
		b.WriteByte('\n')
	}
	yes := strconv.FormatBool
	prov, model := sent.CurrentModel(s)
	open := ""
	if m := opencode.OpenMessage(s); m != nil {
		open = m.ID
	}
	fact("session", string(sent.VersionOf(s)), prov, model, yes(s.InfoMissing), yes(InUse(c).InUse), open)

	hist := sent.HistoryOrder(s.Messages, sent.VersionOf(s))
	inHistory := make(map[string]bool, len(hist))
	for _, m := range hist {
		inHistory[m.ID] = true
	}
	thinks := map[string]bool{}
	for _, m := range s.Messages {
		completed := opencode.IsCompleted(m)
		errName := opencode.ErrorName(m)
		fact("message", m.ID, m.Role, m.Get("parentID").String(), strconv.FormatInt(m.Created, 10), errName,
			yes(completed), yes(opencode.SkippedByOpenCode(m)), yes(sent.ExcludedBySessfix(m)), yes(inHistory[m.ID]))
		if m.Role != "assistant" {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == "reasoning" && !opencode.IsSynthetic(p) {
				thinks[m.Get("providerID").String()+"/"+m.Get("modelID").String()] = true
				break
			}
		}
	}
	for _, m := range hist {
		fact("history", m.ID)
	}
	// SF211 reads the part ids of every message: a part id two messages
	// share, and which messages share it.
	owners := map[string][]string{}
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			owners[p.ID] = append(owners[p.ID], m.ID)
		}
	}
	shared := make([]string, 0)
	for id, ms := range owners {
		if len(ms) > 1 {
			shared = append(shared, id)
		}
	}
	sort.Strings(shared)
	for _, id := range shared {
		fact(append([]string{"part-id", id}, owners[id]...)...)
	}
	models := make([]string, 0, len(thinks))
	for pm := range thinks {
		models = append(models, pm)
	}
	sort.Strings(models)
	fact(append([]string{"thinking"}, models...)...)

	request := func(name string, r *sent.Request) {
		fact(name, string(r.Version), r.ProviderID, r.ModelID, string(r.Kind), yes(r.Thinking), yes(r.NextPrompt))
		for _, pm := range r.Messages {
			fact(append([]string{"  " + pm.Role}, pm.Sources...)...)
			k.join(pm.Sources)
		}
	}
	if failed := opencode.LastFailedAttempt(s); failed != nil {
		fact("failed", failed.ID)
		if opencode.ExtractIndex(failed.Get("error.data.message").String()) != "" {
			request("as-of-error", sent.Build(s, sent.Options{AsOfError: true, Until: failed.ID}))
		}
	}
	// The requests the preflight checks (none while the session may
	// stream): the one a resume sends, and the history alone when OpenCode
	// sends it without a new prompt.
	c.preflight()
	for i, r := range c.shared().reqs {
		request([]string{"request", "final"}[min(i, 1)], r)
	}
	k.facts = b.String()
	for id := range k.group {
		k.group[id] = k.root(id)
	}
	return k
}

// join puts messages into one group (union-find on message ids; the
// group's name is the root's id).
func (k *Coupling) join(ids []string) {
	if len(ids) < 2 {
		return
	}
	if k.group == nil {
		k.group = map[string]string{}
	}
	root := k.root(ids[0])
	for _, id := range ids[1:] {
		if r := k.root(id); r != root {
			k.group[r] = root
		}
	}
}

// Group names the group of a message: the same string for every message of
// the group, the message's own id when it is alone.
func (k *Coupling) Group(messageID string) string {
	if g, ok := k.group[messageID]; ok {
		return g
	}
	return messageID
}

// root follows a message's links to its group's root while groups are
// joined.
func (k *Coupling) root(id string) string {
	for {
		up, ok := k.group[id]
		if !ok || up == id {
			return id
		}
		id = up
	}
}

// Same reports whether two couplings have the same facts (and so the same
// groups).
func (k *Coupling) Same(o *Coupling) bool {
	return k != nil && o != nil && k.facts == o.facts
}

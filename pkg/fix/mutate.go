package fix

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// The mutations. Each is a pure function from a loaded session and its
// target (a message, a part, a record) to the edits that repair it. Nothing
// is written: the planner collects the edits, validates them in memory, and
// a store Writer applies them. Edits of existing records touch only the JSON
// paths they must; new records are in the store's own formatting.

// DefaultPlaceholder is the text written into empty text parts and injected
// text parts unless the user chooses another.
const DefaultPlaceholder = "[user interrupted]"

// continuingText is the text of a synthetic thinking part when no earlier
// thinking text exists to copy (the brief's wording).
const continuingText = "[Continuing from previous reasoning]"

// ToolAbortedError is the error OpenCode itself writes on tools it aborts.
const ToolAbortedError = "Tool execution aborted"

// ValidatePlaceholder rejects placeholder text providers would refuse: empty
// or whitespace-only text blocks are errors on Anthropic and Bedrock.
func ValidatePlaceholder(text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("placeholder %q is empty or whitespace-only, which providers reject; choose visible text such as %q", text, DefaultPlaceholder)
	}
	return nil
}

// env is what mutations need besides their target: the clock and the
// placeholder text.
type env struct {
	now         time.Time
	placeholder string
}

func (e env) ms() int64 { return e.now.UnixMilli() }

// idsInBody reports whether bodies of the store carry ids (every JSON shape) or
// not (SQLite data columns).
func idsInBody(s *store.Session) bool { return s.Store.Shape != store.ShapeSQLite }

// sessionLayout is the formatting new records of the session get: compact for
// SQLite, otherwise the formatting of an existing part or message body.
func sessionLayout(s *store.Session) layout {
	if s.Store.Shape == store.ShapeSQLite {
		return compactLayout
	}
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if l := detectLayout(p.Raw); l.pretty {
				return l
			}
		}
	}
	for _, m := range s.Messages {
		if l := detectLayout(m.Raw); l.pretty {
			return l
		}
	}
	return prettyLayout
}

func partEdit(op store.Op, m *store.Message, p *store.Part, mutation, reason string) store.Edit {
	return store.Edit{
		Op: op, Kind: store.KindPart, ID: p.ID,
		SessionID: m.SessionID, MessageID: m.ID,
		Loc: p.Loc, Before: p.Raw,
		Mutation: mutation, Reason: reason,
	}
}

func messageEdit(op store.Op, m *store.Message, mutation, reason string) store.Edit {
	return store.Edit{
		Op: op, Kind: store.KindMessage, ID: m.ID,
		SessionID: m.SessionID, Loc: m.Loc, Before: m.Raw,
		Mutation: mutation, Reason: reason,
	}
}

// newPart builds the body of a new part: ids first (JSON shapes), then the
// fields in the order given.
func newPart(s *store.Session, m *store.Message, id string, fields *object) []byte {
	o := obj()
	if idsInBody(s) {
		o.set("id", id).set("sessionID", m.SessionID).set("messageID", m.ID)
	}
	for i, k := range fields.keys {
		o.set(k, json.RawMessage(fields.vals[i]))
	}
	return sessionLayout(s).body(o)
}

func addPart(s *store.Session, m *store.Message, id string, fields *object, mutation, reason string, now time.Time) store.Edit {
	return store.Edit{
		Op: store.OpAdd, Kind: store.KindPart, ID: id,
		SessionID: m.SessionID, MessageID: m.ID,
		After:    newPart(s, m, id, fields),
		Created:  now.UnixMilli(),
		Mutation: mutation, Reason: reason,
	}
}

// prependThinkingPart adds a synthetic reasoning part that sorts after the
// message's leading meta parts and before its first content part. Its text
// and signature metadata are copied from the nearest earlier assistant
// thinking part with non-blank text, else it reads "[Continuing from
// previous reasoning]".
func prependThinkingPart(s *store.Session, m *store.Message, e env) ([]store.Edit, error) {
	at := firstContent(m)
	if at < 0 {
		at = len(m.Parts)
	}
	text, meta := continuingText, []byte(nil)
	if src := earlierThinking(s, m); src != nil {
		text = opencode.PartText(src)
		if md := src.Get("metadata"); md.IsObject() {
			meta = []byte(md.Raw)
		}
	}
	ed, err := addReasoning(s, m, at, text, meta, e, "synthetic thinking part placed before the first content part")
	if err != nil {
		return nil, err
	}
	return []store.Edit{ed}, nil
}

// addReasoning adds a synthetic reasoning part reading text (with
// metadata meta when not nil) at position at of m: its id sorts after
// m.Parts[at-1] and before m.Parts[at]. It is prependThinkingPart's part,
// for the whole message or for one step.
func addReasoning(s *store.Session, m *store.Message, at int, text string, meta []byte, e env, reason string) (store.Edit, error) {
	lo, hi := "", ""
	if at > 0 {
		lo = m.Parts[at-1].ID
	}
	if at < len(m.Parts) {
		hi = m.Parts[at].ID
	}
	id, err := store.MintBetween(store.PrefixPart, lo, hi, e.now)
	if err != nil {
		return store.Edit{}, fmt.Errorf("no part id fits where the reasoning goes in message %s: %w", m.ID, err)
	}
	// Keys in the order OpenCode writes reasoning parts.
	f := obj().set("type", "reasoning").set("text", text).set("synthetic", true)
	if meta != nil {
		f.set("metadata", json.RawMessage(compactJSON(meta)))
	}
	f.set("time", obj().set("start", e.ms()).set("end", e.ms()))
	return addPart(s, m, id, f, "prependThinkingPart", reason, e.now), nil
}

func compactJSON(raw []byte) []byte { return compactLayout.format(raw, "") }

// earlierThinking is the nearest thinking part with non-blank text in an
// assistant message before m.
func earlierThinking(s *store.Session, m *store.Message) *store.Part {
	i := msgIndex(s, m.ID)
	for j := i - 1; j >= 0; j-- {
		prev := s.Messages[j]
		if prev.Role != "assistant" {
			continue
		}
		for k := len(prev.Parts) - 1; k >= 0; k-- {
			p := prev.Parts[k]
			if opencode.IsThinkingPart(p) && strings.TrimSpace(opencode.PartText(p)) != "" {
				return p
			}
		}
	}
	return nil
}

// replaceEmptyTextParts gives every empty or whitespace-only text part of the
// message the placeholder text and "synthetic": true; nothing else changes.
func replaceEmptyTextParts(s *store.Session, m *store.Message, text string) ([]store.Edit, error) {
	if err := ValidatePlaceholder(text); err != nil {
		return nil, err
	}
	var out []store.Edit
	for _, p := range m.Parts {
		if !opencode.IsBlankText(p) {
			continue
		}
		after, err := setJSON(p.Raw, text, "text")
		if err == nil {
			after, err = setJSON(after, true, "synthetic")
		}
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", p.ID, err)
		}
		ed := partEdit(store.OpUpdate, m, p, "replaceEmptyTextParts", "placeholder text in an empty text part")
		ed.After = after
		out = append(out, ed)
	}
	return out, nil
}

// stripThinkingParts removes the message's thinking parts (all of them, or
// those keep rejects). The writer backs each one up before removing it.
func stripThinkingParts(s *store.Session, m *store.Message, which func(*store.Part) bool) ([]store.Edit, error) {
	var out []store.Edit
	for _, p := range m.Parts {
		if !opencode.IsThinkingPart(p) || (which != nil && !which(p)) {
			continue
		}
		out = append(out, partEdit(store.OpDelete, m, p, "stripThinkingParts", "thinking part removed"))
	}
	return out, nil
}

// injectTextPart adds a synthetic text part whose id sorts after every
// existing part of the message.
func injectTextPart(s *store.Session, m *store.Message, text string, e env) ([]store.Edit, error) {
	if err := ValidatePlaceholder(text); err != nil {
		return nil, err
	}
	lo := ""
	if n := len(m.Parts); n > 0 {
		lo = m.Parts[n-1].ID
	}
	id, err := store.MintBetween(store.PrefixPart, lo, "", e.now)
	if err != nil {
		return nil, fmt.Errorf("no part id fits after the last part of message %s: %w", m.ID, err)
	}
	f := obj().set("type", "text").set("text", text).set("synthetic", true)
	return []store.Edit{addPart(s, m, id, f, "injectTextPart", "synthetic text part after the last part", e.now)}, nil
}

// markToolAborted rewrites a pending or running tool to the shape OpenCode
// writes when it aborts a tool: status "error", error "Tool execution
// aborted", metadata.interrupted true and time.end; input and time.start are
// kept (time.start is set when the tool never started).
func markToolAborted(s *store.Session, m *store.Message, p *store.Part, e env) ([]store.Edit, error) {
	if !opencode.UnfinishedTool(p) {
		return nil, nil
	}
	after, err := abortShape(p, ToolAbortedError, e, nil)
	if err != nil {
		return nil, err
	}
	ed := partEdit(store.OpUpdate, m, p, "markToolAborted", "unfinished tool marked aborted")
	ed.After = after
	return []store.Edit{ed}, nil
}

// abortShape returns the tool part rewritten to the shape OpenCode writes
// when it aborts a tool: status "error", the error text, metadata.interrupted
// true (metadata made an object when it is not one), time.end, and
// time.start when the tool never started. more, when not nil, sets further
// keys through the same setter. It is markToolAborted's and markToolCutOff's
// shared shape.
func abortShape(p *store.Part, errText string, e env, more func(set func(v any, keys ...string))) ([]byte, error) {
	after := p.Raw
	var err error
	set := func(v any, keys ...string) {
		if err == nil {
			after, err = setJSON(after, v, keys...)
		}
	}
	set("error", "state", "status")
	set(errText, "state", "error")
	if md := p.Get("state.metadata"); md.Exists() && !md.IsObject() {
		set(obj().set("interrupted", true), "state", "metadata")
	} else {
		set(true, "state", "metadata", "interrupted")
	}
	if more != nil {
		more(set)
	}
	if !p.Get("state.time.start").Exists() {
		set(e.ms(), "state", "time", "start")
	}
	set(e.ms(), "state", "time", "end")
	if err != nil {
		return nil, fmt.Errorf("part %s: %w", p.ID, err)
	}
	return after, nil
}

// moveThinkingFirst re-keys the thinking parts that sort after the first
// content part of their step (OpenCode sends each step, from one step-start
// to the next, as its own assistant message) so they sort just before it,
// keeping their order. The parts themselves (text, signature) are unchanged
// but for their id.
func moveThinkingFirst(s *store.Session, m *store.Message, e env) ([]store.Edit, error) {
	var out []store.Edit
	for _, st := range opencode.StepRanges(m) {
		fc := -1
		for i := st[0]; i < st[1]; i++ {
			if opencode.IsContentPart(m.Parts[i]) {
				fc = i
				break
			}
		}
		if fc < 0 {
			continue
		}
		lo, hi := "", m.Parts[fc].ID
		if fc > 0 {
			lo = m.Parts[fc-1].ID
		}
		for _, p := range m.Parts[fc+1 : st[1]] {
			if !opencode.IsThinkingPart(p) {
				continue
			}
			id, err := store.MintBetween(store.PrefixPart, lo, hi, e.now)
			if err != nil {
				return nil, fmt.Errorf("no part id fits before the first content part of message %s: %w", m.ID, err)
			}
			ed, err := rekeyPart(m, p, id)
			if err != nil {
				return nil, err
			}
			ed.Mutation, ed.Reason = "moveThinkingFirst", "thinking part moved before the first content part"
			out = append(out, ed)
			lo = id
		}
	}
	return out, nil
}

func rekeyPart(m *store.Message, p *store.Part, id string) (store.Edit, error) {
	ed := partEdit(store.OpRekey, m, p, "rekey", "part given a valid id at the same position")
	ed.NewID = id
	ed.After = p.Raw
	if p.Get("id").Exists() {
		after, err := setJSON(p.Raw, id, "id")
		if err != nil {
			return ed, fmt.Errorf("part %s: %w", p.ID, err)
		}
		ed.After = after
	}
	return ed, nil
}

// markMessageAborted closes an assistant message left in progress the way an
// abort does: error MessageAbortedError and time.completed.
func markMessageAborted(s *store.Session, m *store.Message, e env) ([]store.Edit, error) {
	if m.Role != "assistant" {
		return nil, fmt.Errorf("message %s is a %s message; only assistant messages can be marked aborted", m.ID, m.Role)
	}
	errObj := obj().set("name", "MessageAbortedError").
		set("data", obj().set("message", "interrupted; marked aborted by sessfix"))
	return closeMessage(m, errObj, e, "markMessageAborted", "unfinished assistant message marked aborted")
}

// excludeMessage gives a broken assistant turn a non-abort error, so OpenCode
// stops sending it to the model but still shows it.
func excludeMessage(s *store.Session, m *store.Message, reason string, e env) ([]store.Edit, error) {
	if strings.TrimSpace(reason) == "" {
		return nil, fmt.Errorf("message %s: excluding a message needs a reason to write into it", m.ID)
	}
	if m.Role != "assistant" {
		return nil, fmt.Errorf("message %s is a %s message; only assistant messages can be excluded", m.ID, m.Role)
	}
	errObj := obj().set("name", "UnknownError").
		set("data", obj().set("message", sent.ExcludedPrefix+reason))
	return closeMessage(m, errObj, e, "excludeMessage", "assistant turn excluded from what opencode sends: "+reason)
}

func closeMessage(m *store.Message, errObj *object, e env, mutation, reason string) ([]store.Edit, error) {
	after, err := setJSON(m.Raw, errObj, "error")
	if err == nil && !m.Get("time.completed").Exists() {
		after, err = setJSON(after, e.ms(), "time", "completed")
	}
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", m.ID, err)
	}
	ed := messageEdit(store.OpUpdate, m, mutation, reason)
	ed.After = after
	return []store.Edit{ed}, nil
}

// deletePart removes one part (backed up first by the writer).
func deletePart(s *store.Session, m *store.Message, p *store.Part) ([]store.Edit, error) {
	return []store.Edit{partEdit(store.OpDelete, m, p, "deletePart", "part removed")}, nil
}

// quarantine moves an unreadable or orphaned record out of the store into the
// backup area.
func quarantine(s *store.Session, r *store.Record, messageID string) ([]store.Edit, error) {
	return []store.Edit{{
		Op: store.OpQuarantine, Kind: r.Kind, ID: r.ID,
		SessionID: s.ID, MessageID: messageID,
		Loc: r.Loc, Before: r.Raw,
		Mutation: "quarantine", Reason: "record moved into the backup area",
	}}, nil
}

// rekey gives a part or message with an invalid id a valid one that sorts at
// the same position among its siblings. Re-keying a message moves its parts
// with it; their bodies' messageID (JSON shapes) are rewritten by the part
// updates that follow the message's edit.
func rekey(s *store.Session, m *store.Message, p *store.Part, e env) ([]store.Edit, error) {
	if p != nil {
		i := -1
		for j, q := range m.Parts {
			if q.ID == p.ID {
				i = j
			}
		}
		lo, hi := "", ""
		if i > 0 {
			lo = m.Parts[i-1].ID
		}
		if i >= 0 && i+1 < len(m.Parts) {
			hi = m.Parts[i+1].ID
		}
		id, err := store.MintBetween(store.PrefixPart, lo, hi, e.now)
		if err != nil {
			return nil, fmt.Errorf("no valid part id fits where part %s sorts: %w", p.ID, err)
		}
		ed, err := rekeyPart(m, p, id)
		if err != nil {
			return nil, err
		}
		return []store.Edit{ed}, nil
	}
	i := msgIndex(s, m.ID)
	lo, hi := "", ""
	if i > 0 {
		lo = s.Messages[i-1].ID
	}
	if i >= 0 && i+1 < len(s.Messages) {
		hi = s.Messages[i+1].ID
	}
	now := e.now
	if m.Created > 0 {
		now = time.UnixMilli(m.Created)
	}
	id, err := store.MintBetween(store.PrefixMessage, lo, hi, now)
	if err != nil {
		return nil, fmt.Errorf("no valid message id fits where message %s sorts: %w", m.ID, err)
	}
	ed := messageEdit(store.OpRekey, m, "rekey", "message given a valid id at the same position")
	ed.NewID, ed.After = id, m.Raw
	if m.Get("id").Exists() {
		if ed.After, err = setJSON(m.Raw, id, "id"); err != nil {
			return nil, fmt.Errorf("message %s: %w", m.ID, err)
		}
	}
	out := []store.Edit{ed}
	for _, p := range m.Parts {
		if !p.Get("messageID").Exists() {
			continue
		}
		after, err := setJSON(p.Raw, id, "messageID")
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", p.ID, err)
		}
		pe := partEdit(store.OpUpdate, m, p, "rekey", "part body follows its message's new id")
		pe.MessageID, pe.After = id, after
		out = append(out, pe)
	}
	return out, nil
}

package sent

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/store"
)

// Version names one of OpenCode's request conversions.
type Version string

// The conversions sessfix models.
const (
	// V118 is OpenCode 1.2 and later, checked against 1.18.33: SQLite
	// stores, " " for empty text next to signed reasoning, reasoning of
	// another model sent as text, compaction with a kept tail.
	V118 Version = "1.18"
	// V11 is the JSON era (OpenCode 1.1.x, checked against 1.1.65 and used
	// for older stores): empty text and empty reasoning dropped for
	// Anthropic, reasoning of another model sent without its signature.
	V11 Version = "1.1"
)

// VersionOf picks the conversion for a session from its store: SQLite
// stores (the 1.x tables of an OpenCode 2 database too) are 1.2 or later;
// otherwise the session's recorded `version`
// decides when present, else the shape (storage/ and project/ trees are the
// JSON era, sessions/ trees and export files the current conversion).
func VersionOf(s *store.Session) Version {
	if s.Store.Shape == store.ShapeSQLite || s.Store.Shape == store.ShapeSQLite2 {
		return V118
	}
	if s.Info != nil {
		if v := s.Info.Get("version").String(); v != "" {
			if cv, ok := versionFor(v); ok {
				return cv
			}
		}
	}
	switch s.Store.Shape {
	case store.ShapeStorage, store.ShapeProject:
		return V11
	}
	return V118
}

func versionFor(v string) (Version, bool) {
	f := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(f) < 2 {
		return "", false
	}
	major, err1 := strconv.Atoi(f[0])
	minor, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return "", false
	}
	if major < 1 || (major == 1 && minor < 2) {
		return V11, true
	}
	return V118, true
}

// CurrentModel returns the provider and model the session's next request
// goes to: the session record's model when it names one (OpenCode 1.2+
// resumes a session with its row's model, observed on 1.18.33), else the
// last user message's model, else the last assistant message's providerID
// and modelID.
func CurrentModel(s *store.Session) (providerID, modelID string) {
	if p, id := SessionModel(s); p != "" && id != "" {
		return p, id
	}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != "user" {
			continue
		}
		p, id := m.Get("model.providerID").String(), m.Get("model.modelID").String()
		if p != "" || id != "" {
			return p, id
		}
	}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != "assistant" {
			continue
		}
		p, id := m.Get("providerID").String(), m.Get("modelID").String()
		if p != "" || id != "" {
			return p, id
		}
	}
	return "", ""
}

// PartText returns the text of a text or thinking part ("" when absent).
// Foreign thinking parts keep it in "thinking".
func PartText(p *store.Part) string {
	if p.Type == "thinking" {
		return p.Get("thinking").String()
	}
	return p.Get("text").String()
}

// ErrorName returns the message's error.name ("" when it has no error).
func ErrorName(m *store.Message) string {
	e := m.Get("error")
	if !e.Exists() || e.Type == 0 {
		return ""
	}
	if n := e.Get("name").String(); n != "" {
		return n
	}
	return "UnknownError"
}

// ExcludedPrefix starts the error message sessfix's excludeMessage writes
// on an assistant turn it closes.
const ExcludedPrefix = "excluded by sessfix: "

// ExcludedBySessfix reports an assistant message sessfix's excludeMessage
// closed (an UnknownError whose message starts with ExcludedPrefix).
func ExcludedBySessfix(m *store.Message) bool {
	return m.Get("error.name").String() == "UnknownError" &&
		strings.HasPrefix(m.Get("error.data.message").String(), ExcludedPrefix)
}

// SkippedByOpenCode reports whether OpenCode leaves the message out when it
// builds a request, whatever the provider: a message with no parts, and an
// assistant message with an error, unless the error is MessageAbortedError
// and the message has a part other than step-start and reasoning (the test
// OpenCode 1.18 applies).
func SkippedByOpenCode(m *store.Message) bool {
	if len(m.Parts) == 0 {
		return true
	}
	if m.Role != "assistant" {
		return false
	}
	name := ErrorName(m)
	if name == "" {
		return false
	}
	if name != "MessageAbortedError" {
		return true
	}
	for _, p := range m.Parts {
		if p.Type != "step-start" && p.Type != "reasoning" {
			return false
		}
	}
	return true
}

// HasAnthropicSignature reports whether p is a reasoning part with a
// metadata.anthropic.signature key that is not null: the exact test
// OpenCode 1.18 uses before it sends the message's empty text parts as " ".
func HasAnthropicSignature(p *store.Part) bool {
	if p.Type != "reasoning" {
		return false
	}
	v := p.Get("metadata.anthropic.signature")
	return v.Exists() && v.Raw != "null"
}

// IsSynthetic reports whether a repair tool (not the model) wrote the part.
func IsSynthetic(p *store.Part) bool { return p.Get("synthetic").Bool() }

// HistoryOrder returns the stored messages OpenCode loads as history, in
// the order it sends them: everything from the last completed compaction on
// (with 1.18's kept tail moved after the compaction and its summary).
func HistoryOrder(msgs []*store.Message, v Version) []*store.Message {
	completed := map[string]bool{}
	var rev []*store.Message // newest first
	tail := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		rev = append(rev, m)
		if v == V11 {
			if m.Role == "user" && completed[m.ID] && hasPartType(m, "compaction") {
				break
			}
			if m.Role == "assistant" && m.Get("summary").Bool() && m.Get("finish").String() != "" {
				completed[m.Get("parentID").String()] = true
			}
			continue
		}
		if tail != "" {
			if m.ID == tail {
				break
			}
			continue
		}
		if m.Role == "user" && completed[m.ID] {
			comp := partOfType(m, "compaction")
			if comp == nil {
				continue
			}
			tail = comp.Get("tail_start_id").String()
			if tail == "" || tail == m.ID {
				break
			}
			continue
		}
		if m.Role == "assistant" && m.Get("summary").Bool() && m.Get("finish").String() != "" && ErrorName(m) == "" {
			completed[m.Get("parentID").String()] = true
		}
	}
	out := make([]*store.Message, len(rev))
	for i, m := range rev {
		out[len(rev)-1-i] = m
	}
	if v == V11 {
		return out
	}
	// A compaction that kept a tail: the compaction prompt and its summary
	// are sent before the kept tail.
	w := -1
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == "user" && hasTailCompaction(out[i]) {
			w = i
			break
		}
	}
	if w < 0 {
		return out
	}
	tailID := partOfType(out[w], "compaction").Get("tail_start_id").String()
	j, t := -1, -1
	for i := w + 1; i < len(out); i++ {
		if out[i].Role == "assistant" && out[i].Get("summary").Bool() && out[i].Get("parentID").String() == out[w].ID {
			j = i
			break
		}
	}
	for i, m := range out {
		if tailID != "" && m.ID == tailID {
			t = i
			break
		}
	}
	if t >= 0 && t < w && j > w {
		re := append([]*store.Message{}, out[w:j+1]...)
		re = append(re, out[t:w]...)
		return append(re, out[j+1:]...)
	}
	return out
}

func hasTailCompaction(m *store.Message) bool {
	for _, p := range m.Parts {
		if p.Type == "compaction" && p.Get("tail_start_id").Exists() {
			return true
		}
	}
	return false
}

func partOfType(m *store.Message, t string) *store.Part {
	for _, p := range m.Parts {
		if p.Type == t {
			return p
		}
	}
	return nil
}

func hasPartType(m *store.Message, t string) bool { return partOfType(m, t) != nil }

// SessionModel is the provider and model id of the session record's model
// (SQLite: the model column, a JSON text {"id", "providerID", "variant"};
// exports: an object); empty when it has none.
func SessionModel(s *store.Session) (providerID, modelID string) {
	if s.Info == nil {
		return "", ""
	}
	model := s.Info.Get("model")
	if model.Type == gjson.String {
		model = gjson.Parse(model.Str)
	}
	providerID, modelID = model.Get("providerID").String(), model.Get("id").String()
	if modelID == "" {
		modelID = model.Get("modelID").String()
	}
	return providerID, modelID
}

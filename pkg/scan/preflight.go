package scan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/store"
)

// This file is the preflight's model of a request: the messages array a
// provider receives when OpenCode sends the session, each block traced back
// to the stored message and part it came from. The conversion itself is in
// preflight_convert.go, the checks in preflight_check.go. It is the one
// mapping from a provider's messages.N.content.M to stored records: SF302,
// `sessfix diagnose` and pkg/fix's error-driven recovery all use it.

// ConvVersion names one of OpenCode's request conversions.
type ConvVersion string

// The conversions sessfix models.
const (
	// Conv118 is OpenCode 1.2 and later, checked against 1.18.33: SQLite
	// stores, " " for empty text next to signed reasoning, reasoning of
	// another model sent as text, compaction with a kept tail.
	Conv118 ConvVersion = "1.18"
	// Conv11 is the JSON era (OpenCode 1.1.x, checked against 1.1.65 and
	// used for older stores): empty text and empty reasoning dropped for
	// Anthropic, reasoning of another model sent without its signature.
	Conv11 ConvVersion = "1.1"
)

// ProviderKind is the family of provider API a request goes to.
type ProviderKind string

// Provider kinds the preflight checks.
const (
	KindAnthropic ProviderKind = "anthropic" // Messages API (also Vertex)
	KindBedrock   ProviderKind = "bedrock"   // Bedrock Converse
	KindOpenAI    ProviderKind = "openai"    // OpenAI Chat Completions style tool pairing
	KindOther     ProviderKind = "other"     // no history rules checked
)

// ProviderKindOf returns the API family OpenCode talks to for a provider and
// model id.
func ProviderKindOf(providerID, modelID string) ProviderKind {
	p, m := strings.ToLower(providerID), strings.ToLower(modelID)
	switch {
	case strings.Contains(p, "bedrock"):
		return KindBedrock
	case strings.Contains(p, "anthropic"):
		return KindAnthropic
	case (p == "" || p == "opencode") && (m == "" || strings.Contains(m, "claude")):
		return KindAnthropic
	case strings.Contains(p, "openai") || p == "azure":
		return KindOpenAI
	}
	return KindOther
}

// RequestOptions say which request to build.
type RequestOptions struct {
	// ProviderID and ModelID are the model the request goes to; empty means
	// the session's current model (CurrentModel).
	ProviderID, ModelID string
	// Version picks the conversion; empty means RequestVersion(session).
	Version ConvVersion
	// Until stops before this stored message: the errored assistant message
	// of a failed attempt, whose request held only what came before it.
	Until string
	// AsOfError counts assistant messages that sessfix excluded as still
	// sent: an error stored before a repair indexes the history as it was.
	AsOfError bool
	// NextPrompt appends the user's next prompt, as a resume sends it: a
	// user text block that maps to no stored record (merged into a trailing
	// user message, as the provider conversion merges consecutive user
	// content).
	NextPrompt bool
}

// Block is one content block of a provider message.
type Block struct {
	// Type is the provider's block type: text, thinking, redacted_thinking,
	// tool_use, tool_result, image or document.
	Type string
	// Text is the text of a text block, or the thinking of a thinking block.
	Text string
	// Signature of a thinking block (the redacted data of a
	// redacted_thinking block).
	Signature string
	// ToolUseID is a tool_use block's id, or the id a tool_result answers.
	ToolUseID string
	// IsError marks a tool_result sent as an error.
	IsError bool
	// MessageID and PartID are the stored records the block came from;
	// both are empty for the next prompt.
	MessageID, PartID string
}

// ProviderMessage is one entry of the messages array (the system prompt is
// not counted).
type ProviderMessage struct {
	// Role is "user" or "assistant" ("tool" for OpenAI tool messages).
	Role   string
	Blocks []Block
	// Sources are the ids of the stored messages the entry was built from,
	// in order, each once (tool results count for the assistant message
	// that called the tools). Empty only for the next prompt.
	Sources []string
	// Dropped are blocks OpenCode converted and the provider SDK then left
	// out (reasoning without a signature or redacted data), in order.
	Dropped []Block
}

// Request is the messages array OpenCode sends for a session.
type Request struct {
	Version             ConvVersion
	ProviderID, ModelID string
	Kind                ProviderKind
	// Thinking is whether extended thinking is on for the request
	// (ThinkingEnabled for the request's model).
	Thinking bool
	Messages []ProviderMessage
	// NextPrompt is set when the last user content is the next prompt.
	NextPrompt bool
}

// carried adds to ids every stored message the request carries: a block of
// it came from the message, or an entry built from it has no blocks at all
// (an empty message the provider rejects).
func (r *Request) carried(ids map[string]bool) {
	for _, pm := range r.Messages {
		if len(pm.Blocks) == 0 {
			for _, src := range pm.Sources {
				ids[src] = true
			}
		}
		for _, b := range pm.Blocks {
			if b.MessageID != "" {
				ids[b.MessageID] = true
			}
		}
	}
}

// Locate maps a provider index to the stored record it came from:
// messages.n.content.m gives the message and part of that block; m < 0 asks
// for the message itself (messages.n), which maps only when the entry was
// built from exactly one stored message. ok is false when the index is out
// of range, names the next prompt, or combines several stored messages.
func (r *Request) Locate(n, m int) (msgID, partID string, ok bool) {
	if r == nil || n < 0 || n >= len(r.Messages) {
		return "", "", false
	}
	pm := r.Messages[n]
	if m < 0 {
		if len(pm.Sources) != 1 {
			return "", "", false
		}
		return pm.Sources[0], "", true
	}
	if m >= len(pm.Blocks) {
		return "", "", false
	}
	b := pm.Blocks[m]
	if b.MessageID == "" {
		return "", "", false
	}
	return b.MessageID, b.PartID, true
}

var indexRe = regexp.MustCompile(`^messages\.(\d+)(?:\.content\.(\d+))?`)

// ParseIndex splits "messages.N" or "messages.N.content.M" (anything after
// it is ignored); m is -1 when the index names no block.
func ParseIndex(index string) (n, m int, ok bool) {
	g := indexRe.FindStringSubmatch(index)
	if g == nil {
		return 0, 0, false
	}
	n, err := strconv.Atoi(g[1])
	if err != nil {
		return 0, 0, false
	}
	m = -1
	if g[2] != "" {
		if m, err = strconv.Atoi(g[2]); err != nil {
			return 0, 0, false
		}
	}
	return n, m, true
}

// LocateIndex maps an index as a provider prints it ("messages.3",
// "messages.3.content.0") to the stored message and part. A block index that
// names the next prompt or is past the entry's end falls back to nothing:
// it never guesses a neighbour. The error says why an index does not map.
func (r *Request) LocateIndex(index string) (msgID, partID string, err error) {
	n, m, ok := ParseIndex(index)
	if !ok {
		return "", "", fmt.Errorf("%q is not a messages.N index", index)
	}
	if n >= len(r.Messages) {
		return "", "", fmt.Errorf("messages.%d is outside the %s opencode sends for this session", n, plural.Count(len(r.Messages), "message", "messages"))
	}
	pm := r.Messages[n]
	if m >= 0 {
		if m >= len(pm.Blocks) {
			return "", "", fmt.Errorf("messages.%d has %s, so content.%d names none of them", n, plural.Count(len(pm.Blocks), "content block", "content blocks"), m)
		}
		if id, part, ok := r.Locate(n, m); ok {
			return id, part, nil
		}
		return "", "", fmt.Errorf("messages.%d.content.%d is the next prompt, not a stored record", n, m)
	}
	if id, _, ok := r.Locate(n, -1); ok {
		return id, "", nil
	}
	if len(pm.Sources) == 0 {
		return "", "", fmt.Errorf("messages.%d is the next prompt, not a stored record", n)
	}
	return "", "", fmt.Errorf("messages.%d combines stored messages %s, so it names none of them exactly", n, strings.Join(pm.Sources, ", "))
}

// RequestVersion picks the conversion for a session from its store: SQLite
// stores are 1.2 or later; otherwise the session's recorded `version` decides
// when present, else the shape (storage/ and project/ trees are the JSON
// era, sessions/ trees and export files the current conversion).
func RequestVersion(s *store.Session) ConvVersion {
	if s.Store.Shape == store.ShapeSQLite {
		return Conv118
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
		return Conv11
	}
	return Conv118
}

func versionFor(v string) (ConvVersion, bool) {
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
		return Conv11, true
	}
	return Conv118, true
}

// CurrentModel returns the provider and model the session's next request
// goes to: the last user message's model, else the last assistant message's
// providerID and modelID.
func CurrentModel(s *store.Session) (providerID, modelID string) {
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

// ExcludedPrefix starts the error message sessfix's excludeMessage writes
// on an assistant turn it closes.
const ExcludedPrefix = "excluded by sessfix: "

// ExcludedBySessfix reports an assistant message sessfix's excludeMessage
// closed (an UnknownError whose message starts with ExcludedPrefix).
func ExcludedBySessfix(m *store.Message) bool {
	return m.Get("error.name").String() == "UnknownError" &&
		strings.HasPrefix(m.Get("error.data.message").String(), ExcludedPrefix)
}

// SourceOf returns the stored message an entry was built from when it is
// exactly one ("" otherwise).
func (pm ProviderMessage) SourceOf() string {
	if len(pm.Sources) == 1 {
		return pm.Sources[0]
	}
	return ""
}

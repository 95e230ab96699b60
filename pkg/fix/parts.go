package fix

import (
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// Part classes, as rules.md defines them.

func isThinking(p *store.Part) bool {
	switch p.Type {
	case "reasoning", "thinking", "redacted_thinking":
		return true
	}
	return false
}

func isMeta(p *store.Part) bool {
	switch p.Type {
	case "step-start", "step-finish", "snapshot", "patch", "retry":
		return true
	}
	return false
}

func isContent(p *store.Part) bool {
	switch p.Type {
	case "text":
		return !p.Get("ignored").Bool() && strings.TrimSpace(p.Get("text").String()) != ""
	case "tool", "file", "subtask", "agent", "compaction", "tool_use", "tool_result":
		return true
	}
	return false
}

// isEmptyText reports a text part whose text is empty or whitespace-only.
func isEmptyText(p *store.Part) bool {
	return p.Type == "text" && strings.TrimSpace(p.Get("text").String()) == ""
}

// thinkingText is the reasoning text of a thinking part (OpenCode keeps it in
// "text"; foreign parts in "thinking").
func thinkingText(p *store.Part) string {
	if t := p.Get("text"); t.Exists() {
		return t.String()
	}
	return p.Get("thinking").String()
}

// isSigned reports a thinking part that carries what a provider needs to
// accept it back: a signature or redacted data (Anthropic, Bedrock), or the
// foreign shapes' own fields.
func isSigned(p *store.Part) bool {
	if !isThinking(p) {
		return false
	}
	for _, path := range []string{
		"metadata.anthropic.signature", "metadata.anthropic.redactedData",
		"metadata.bedrock.signature", "metadata.bedrock.redactedData",
		"signature", "data",
	} {
		if p.Get(path).String() != "" {
			return true
		}
	}
	return false
}

// hasSignedThinking reports whether the message owns a signed thinking part.
func hasSignedThinking(m *store.Message) bool {
	for _, p := range m.Parts {
		if isSigned(p) {
			return true
		}
	}
	return false
}

// firstContent is the index of the message's first content part, or -1.
func firstContent(m *store.Message) int {
	for i, p := range m.Parts {
		if isContent(p) {
			return i
		}
	}
	return -1
}

// unfinishedTool reports a tool part left pending or running.
func unfinishedTool(p *store.Part) bool {
	if p.Type != "tool" {
		return false
	}
	switch p.Get("state.status").String() {
	case "pending", "running":
		return true
	}
	return false
}

func findPart(s *store.Session, id string) (*store.Message, *store.Part) {
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.ID == id {
				return m, p
			}
		}
	}
	return nil, nil
}

func msgIndex(s *store.Session, id string) int {
	for i, m := range s.Messages {
		if m.ID == id {
			return i
		}
	}
	return -1
}

package scan

import (
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// This file is the one place that decides whether a model thinks.

// thinkingNameParts are substrings of model ids that enable extended
// thinking: the brief's list (thinking, claude-sonnet-4, claude-opus-4,
// claude-3) and the newer Claude families. Bedrock and Vertex ids contain
// the same names (anthropic.claude-sonnet-4-…, claude-opus-4-1@…).
var thinkingNameParts = []string{
	"thinking",
	"claude-sonnet-4", "claude-opus-4", "claude-3",
	"claude-haiku-4", "claude-4", "claude-sonnet-5", "claude-opus-5", "claude-haiku-5",
}

// ModelThinksByName reports whether a model id names a thinking model by the
// brief's rule: it contains "thinking" or ends with "-high", or contains a
// Claude family that thinks (claude-sonnet-4, claude-opus-4, claude-3, and
// the newer claude-haiku-4, claude-4 and claude-*-5 families).
func ModelThinksByName(modelID string) bool {
	id := strings.ToLower(modelID)
	if strings.HasSuffix(id, "-high") {
		return true
	}
	for _, s := range thinkingNameParts {
		if strings.Contains(id, s) {
			return true
		}
	}
	return false
}

// ThinkingEnabled reports whether the model thinks in this session. Evidence
// in the session wins over names: a reasoning part the model itself produced
// (OpenCode's own "reasoning" type, not marked synthetic by a repair tool) on
// an assistant message from that provider and model proves it thinks. Without
// evidence the name patterns of ModelThinksByName decide.
func ThinkingEnabled(s *store.Session, providerID, modelID string) bool {
	if ModelThinksByName(modelID) {
		return true
	}
	if s == nil {
		return false
	}
	for _, m := range s.Messages {
		if m.Role != "assistant" || m.Get("modelID").String() != modelID {
			continue
		}
		if providerID != "" && m.Get("providerID").String() != providerID {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == "reasoning" && !IsSynthetic(p) {
				return true
			}
		}
	}
	return false
}

// signatureProviders are provider ids whose reasoning must carry a signature
// (or redacted data) to be sent back: Anthropic's API and Bedrock, also
// reached through Vertex.
var signatureProviders = []string{"anthropic", "bedrock"}

// NeedsSignature reports whether the provider and model take thinking back
// only with its signature: an Anthropic or Bedrock provider id, or a Claude
// model.
func NeedsSignature(providerID, modelID string) bool {
	p := strings.ToLower(providerID)
	for _, s := range signatureProviders {
		if strings.Contains(p, s) {
			return true
		}
	}
	return strings.Contains(strings.ToLower(modelID), "claude")
}

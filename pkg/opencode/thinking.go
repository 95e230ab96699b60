package opencode

import (
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// Whether a model thinks is decided in one place, pkg/sent's models.go;
// these are the names scan's rules use.

// ModelThinksByName reports whether a model id names a thinking model; see
// sent.ModelThinksByName.
func ModelThinksByName(modelID string) bool { return sent.ModelThinksByName(modelID) }

// ThinkingEnabled reports whether the model thinks in this session; see
// sent.ThinkingEnabled.
func ThinkingEnabled(s *store.Session, providerID, modelID string) bool {
	return sent.ThinkingEnabled(s, providerID, modelID)
}

// ModelThinks reports whether the model thinks at all in this session; see
// sent.ModelThinks.
func ModelThinks(s *store.Session, providerID, modelID string) bool {
	return sent.ModelThinks(s, providerID, modelID)
}

// NeedsSignature reports whether the provider and model take thinking back
// only with its signature; see sent.NeedsSignature.
func NeedsSignature(providerID, modelID string) bool { return sent.NeedsSignature(providerID, modelID) }

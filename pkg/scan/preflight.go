package scan

import (
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// The preflight's request model is pkg/sent's: the history a provider
// receives when OpenCode sends the session, each block traced back to the
// stored message and part it came from. These names are the ones scan's
// rules, SF302 and recovery use for it; the checks are in
// preflight_check.go.

// ConvVersion names one of OpenCode's request conversions (sent.Version).
type ConvVersion = sent.Version

// The conversions sessfix models.
const (
	Conv118 = sent.V118
	Conv11  = sent.V11
)

// ProviderKind is the family of provider API a request goes to
// (sent.Family).
type ProviderKind = sent.Family

// Provider kinds the preflight checks.
const (
	KindAnthropic = sent.Anthropic
	KindBedrock   = sent.Bedrock
	KindChat      = sent.Chat
	KindResponses = sent.Responses
	KindGoogle    = sent.Google
	KindOther     = sent.Other
)

type (
	// RequestOptions say which request to build (sent.Options).
	RequestOptions = sent.Options
	// Block is one content block of a request entry (sent.Block).
	Block = sent.Block
	// ProviderMessage is one entry of a request's history (sent.Message).
	ProviderMessage = sent.Message
	// Request is the history OpenCode sends for a session (sent.Request).
	Request = sent.Request
)

// ProviderKindOf returns the API family OpenCode talks to for a provider and
// model id.
func ProviderKindOf(providerID, modelID string) ProviderKind {
	return sent.FamilyOf(providerID, modelID)
}

// BuildRequest builds the history OpenCode sends for the session to its
// current model (or the model in opts); see sent.Build.
func BuildRequest(s *store.Session, opts RequestOptions) *Request { return sent.Build(s, opts) }

// ParseIndex splits an index in any provider's form ("messages.N",
// "messages.N.content.M", "messages[N]", "input[N]", ...); m is -1 when the
// index names no block. n is the request entry the index names.
func ParseIndex(index string) (n, m int, ok bool) {
	ix, ok := sent.ParseIndex(index)
	if !ok {
		return 0, 0, false
	}
	n = ix.N
	if ix.Form == sent.FormPosition {
		n--
	}
	return n, ix.M, true
}

// RequestVersion picks the conversion for a session; see sent.VersionOf.
func RequestVersion(s *store.Session) ConvVersion { return sent.VersionOf(s) }

// CurrentModel returns the provider and model the session's next request
// goes to; see sent.CurrentModel.
func CurrentModel(s *store.Session) (providerID, modelID string) { return sent.CurrentModel(s) }

// ExcludedPrefix starts the error message sessfix's excludeMessage writes
// on an assistant turn it closes.
const ExcludedPrefix = sent.ExcludedPrefix

// ExcludedBySessfix reports an assistant message sessfix's excludeMessage
// closed.
func ExcludedBySessfix(m *store.Message) bool { return sent.ExcludedBySessfix(m) }

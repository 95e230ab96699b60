package sent

import (
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// This file is the one place that decides what a model is: which API family
// OpenCode talks to for it, whether it thinks, whether OpenCode sends its
// reasoning back interleaved. It stands in for the model data OpenCode
// compiles in (models.dev) and the user's opencode.json, neither of which a
// store records: the provider and model ids on the stored messages are all
// sessfix has.

// Family is the provider API a request goes to.
type Family string

// The families sessfix models.
const (
	Anthropic Family = "anthropic" // Messages API (also Vertex)
	Bedrock   Family = "bedrock"   // Bedrock Converse
	Chat      Family = "chat"      // OpenAI-compatible Chat Completions
	Responses Family = "responses" // OpenAI Responses API
	Google    Family = "google"    // Gemini generateContent
	Other     Family = "other"     // not modelled: no history rules checked
)

// chatNames are provider and model id parts of the OpenAI-compatible
// APIs sessfix models: the reasoning APIs (DeepSeek, Kimi/Moonshot) and
// Mistral's models (MistralNames), whose tool call ids it checks.
var chatNames = append([]string{"deepseek", "moonshot", "kimi"}, MistralNames...)

// MistralNames are the model id parts that name a Mistral model. Mistral's
// API takes only tool call ids of nine letters or digits.
var MistralNames = []string{"mistral", "magistral", "ministral", "devstral", "codestral", "pixtral", "mixtral"}

// openCodeMistralNames are the model id parts for which OpenCode 1.18.33
// rewrites tool call ids into Mistral's form (and the provider id
// "mistral"): "magistral" and "ministral" are not among them.
var openCodeMistralNames = []string{"mistral", "devstral", "codestral", "pixtral", "mixtral"}

// IsMistral reports whether the model is one of Mistral's (MistralNames,
// or the provider id "mistral").
func IsMistral(providerID, modelID string) bool {
	return providerID == "mistral" || containsAny(strings.ToLower(modelID), MistralNames)
}

// NormalizesCallIDs reports whether OpenCode 1.18.33 rewrites the tool
// call ids it sends the model into Mistral's form (MistralCallID): the
// provider id "mistral", or a model id that names mistral, devstral,
// codestral, pixtral or mixtral.
func NormalizesCallIDs(providerID, modelID string) bool {
	return providerID == "mistral" || containsAny(strings.ToLower(modelID), openCodeMistralNames)
}

// MistralCallID is OpenCode's rewrite of a tool call id for a model it
// knows as Mistral's: the letters and digits, the first nine, padded with
// zeros.
func MistralCallID(id string) string {
	b := make([]byte, 0, 9)
	for i := 0; i < len(id) && len(b) < 9; i++ {
		if c := id[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b = append(b, c)
		}
	}
	for len(b) < 9 {
		b = append(b, '0')
	}
	return string(b)
}

// ValidMistralCallID reports an id of Mistral's form: nine letters or
// digits.
func ValidMistralCallID(id string) bool {
	return len(id) == 9 && MistralCallID(id) == id
}

func containsAny(s string, parts []string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// FamilyOf returns the API family OpenCode talks to for a provider and
// model id: `*bedrock*` providers Bedrock Converse; `*anthropic*` ones
// (anthropic, google-vertex-anthropic) and Claude on OpenCode's own
// provider the Messages API; `openai` and `azure` (OpenCode's @ai-sdk/openai)
// the Responses API; `google*` providers Gemini; DeepSeek, Moonshot and Kimi
// providers or models Chat Completions. Claude on GitHub Copilot
// (`github-copilot*`) is the Messages API too: OpenCode 1.18.33 gives a
// Copilot model whose entry in Copilot's model list names the
// /v1/messages endpoint the @ai-sdk/anthropic package at Copilot's /v1, so
// its thinking travels with metadata.anthropic.signature and Copilot's
// errors use the Messages API's indexes (OpenCode 1.1 sent every Copilot
// model through its Chat Completions package instead: see newConverter).
//
// OpenCode's own provider (`opencode`, OpenCode Zen) has a package per
// model in OpenCode 1.18.33's catalogue: its `claude-*` models go through
// @ai-sdk/anthropic, `gpt-*` through @ai-sdk/openai (the Responses API, at
// Zen's /v1/responses), `gemini-*` through @ai-sdk/google, so they are the
// families of the providers whose models they are. Its grok and muse-spark
// models also use @ai-sdk/openai, and some Qwen and MiniMax ones
// @ai-sdk/anthropic, but the APIs behind them (xAI's, Alibaba's, MiniMax's)
// have their own rules and limits: they stay Other.
//
// Everything else is Other: the names do not tell the package OpenCode
// uses for it (FamilyIn reads it from the user's OpenCode config).
func FamilyOf(providerID, modelID string) Family {
	p, m := strings.ToLower(providerID), strings.ToLower(modelID)
	switch {
	case strings.Contains(p, "bedrock"):
		return Bedrock
	case strings.Contains(p, "anthropic"):
		return Anthropic
	case IsCopilot(p) && strings.Contains(m, "claude"):
		return Anthropic
	case (p == "" || p == "opencode") && (m == "" || strings.Contains(m, "claude")):
		return Anthropic
	case p == "openai" || p == "azure" || p == "opencode" && strings.HasPrefix(m, "gpt-"):
		return Responses
	case p == "opencode" && strings.HasPrefix(m, "gemini-"):
		return Google
	case strings.HasPrefix(p, "google"):
		return Google
	}
	for _, n := range chatNames {
		if strings.Contains(p, n) || strings.Contains(m, n) {
			return Chat
		}
	}
	return Other
}

// FamilyIn is FamilyOf for a model of session s, which also reads what
// the user's OpenCode config and models catalogue say (s.Packages): a
// model FamilyOf has no family for whose package is
// @ai-sdk/openai-compatible is Chat, since OpenCode talks Chat Completions
// to it. Such are the providers users add for their own servers (vLLM,
// Ollama, LM Studio, llama.cpp: OpenCode's default package for a model the
// config defines) and the catalogue's OpenAI-compatible hosts. OpenCode
// Zen's models (provider "opencode") keep FamilyOf's answer: the
// catalogue gives Zen that package and each model its own. So does a
// Claude model behind such a provider (a LiteLLM-style proxy): the API
// that judges the history is Anthropic's, whose rules the record rules
// check for a model of no family. Other packages add no family: sessfix
// does not model their requests.
func FamilyIn(s *store.Session, providerID, modelID string) Family {
	f := FamilyOf(providerID, modelID)
	if f != Other || s == nil || s.Packages == nil || providerID == "" || strings.EqualFold(providerID, "opencode") ||
		strings.Contains(strings.ToLower(modelID), "claude") {
		return f
	}
	if s.Packages.Package(providerID, modelID) == "@ai-sdk/openai-compatible" {
		return Chat
	}
	return f
}

// reasoningContentNames are the provider and model id parts of the APIs
// that refuse a tool call step sent without its reasoning_content:
// DeepSeek's and Kimi's (Moonshot's).
var reasoningContentNames = []string{"deepseek", "moonshot", "kimi"}

// RequiresReasoningContent reports whether the model's API refuses a tool
// call step in thinking mode sent without reasoning_content (DeepSeek,
// Kimi). Other Chat Completions servers (Mistral's, vLLM, Ollama) do not
// check it.
func RequiresReasoningContent(providerID, modelID string) bool {
	p, m := strings.ToLower(providerID), strings.ToLower(modelID)
	return containsAny(p, reasoningContentNames) || containsAny(m, reasoningContentNames)
}

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

// ThinkingEnabled reports whether the model thinks in this session's
// requests, as far as the session shows. Evidence in the session wins over
// names:
//   - a reasoning part the model itself produced (OpenCode's own "reasoning"
//     type, not marked synthetic by a repair tool) on an assistant message
//     from that provider and model proves it thinks;
//   - for a Claude model, the newest turn that model answered proves it does
//     not when the turn's first step finished without one (ThinkingOffShown):
//     OpenCode 1.18.33 turns thinking on only with a variant or a model
//     option, and Claude with thinking on starts every turn with a thinking
//     block, which OpenCode stores.
//
// Without evidence the name patterns of ModelThinksByName decide.
func ThinkingEnabled(s *store.Session, providerID, modelID string) bool {
	if ModelThinksByName(modelID) {
		return !ThinkingOffShown(s, providerID, modelID)
	}
	return ModelThinks(s, providerID, modelID)
}

// ModelThinks reports whether the model thinks at all in this session: its
// name says so (ModelThinksByName), or a reasoning part it produced itself
// is stored. Unlike ThinkingEnabled it does not ask whether thinking was
// on for the newest turn: thinking kept from a turn that had it on is the
// model's own.
func ModelThinks(s *store.Session, providerID, modelID string) bool {
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
		if ownReasoning(m) {
			return true
		}
	}
	return false
}

// ownReasoning reports whether m holds a reasoning part its model produced.
func ownReasoning(m *store.Message) bool {
	for _, p := range m.Parts {
		if p.Type == "reasoning" && !IsSynthetic(p) {
			return true
		}
	}
	return false
}

// ThinkingOffShown reports whether the session shows that a Claude model
// answered its newest turn with thinking off: the first assistant message
// of that provider and model after the newest user message it answered
// finished (time.completed, no error) with a text or tool part and no
// reasoning part of its own. Only a turn's first step counts: the later
// steps of a tool loop carry no new thinking even with thinking on. A
// compaction summary does not count, nor does a model that is not Claude
// (other providers may keep their reasoning to themselves).
func ThinkingOffShown(s *store.Session, providerID, modelID string) bool {
	if s == nil || !strings.Contains(strings.ToLower(modelID), "claude") {
		return false
	}
	first := false // the next assistant message starts a turn
	var newest *store.Message
	for _, m := range s.Messages {
		switch m.Role {
		case "user":
			first = true
			continue
		case "assistant":
		default:
			continue
		}
		starts := first
		first = false
		if !starts || m.Get("modelID").String() != modelID || m.Get("summary").Bool() {
			continue
		}
		if providerID != "" && m.Get("providerID").String() != providerID {
			continue
		}
		newest = m
	}
	if newest == nil || ownReasoning(newest) {
		return false
	}
	if !newest.Get("time.completed").Exists() || newest.Get("error").Exists() {
		return false
	}
	for _, p := range newest.Parts {
		if p.Type == "text" || p.Type == "tool" {
			return true
		}
	}
	return false
}

// chatThinks reports whether a Chat Completions model answers in thinking
// mode: it thinks by ThinkingEnabled, or its id names DeepSeek's reasoner
// or R1.
func chatThinks(s *store.Session, providerID, modelID string) bool {
	m := strings.ToLower(modelID)
	return ThinkingEnabled(s, providerID, modelID) || strings.Contains(m, "reasoner") || strings.Contains(m, "-r1")
}

// catalogueInterleaved are the providers whose every model OpenCode's
// compiled-in catalogue marks `interleaved: {field: "reasoning_content"}`
// (1.18.33: deepseek, moonshotai).
var catalogueInterleaved = []string{"deepseek", "moonshotai"}

// catalogueHosts are providers of the catalogue that list DeepSeek and Kimi
// models without `interleaved` (and OpenRouter, whose package sends
// reasoning its own way).
var catalogueHosts = []string{"nano-gpt", "requesty", "io-net", "wafer.ai", "openrouter"}

// Interleaved reports whether OpenCode 1.18.33 sends every assistant
// message of the model with `reasoning_content` (`""` when it has no
// reasoning): the model data's `interleaved: {field}`. It is the catalogue's
// setting for deepseek and moonshotai, and OpenCode's own default for a model
// the catalogue does not have whose id contains "deepseek". A custom
// provider's other models (kimi/kimi-k2-thinking) and the hosts that list
// the models without it are not interleaved. A user's opencode.json can say
// otherwise; sessfix cannot see it.
func Interleaved(providerID, modelID string) bool {
	p, m := strings.ToLower(providerID), strings.ToLower(modelID)
	for _, c := range catalogueInterleaved {
		if p == c {
			return true
		}
	}
	for _, h := range catalogueHosts {
		if p == h {
			return false
		}
	}
	return strings.Contains(m, "deepseek")
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

// IsCopilot reports a GitHub Copilot provider id (github-copilot, and the
// github-copilot-enterprise of OpenCode 1.1).
func IsCopilot(providerID string) bool {
	return strings.HasPrefix(strings.ToLower(providerID), "github-copilot")
}

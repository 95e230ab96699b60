package opencodetest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
)

// Family is a provider API family: how OpenCode talks to a provider and
// which mock answers it.
type Family string

// Families.
const (
	// Anthropic is the Messages API (@ai-sdk/anthropic), answered by
	// internal/opencodetest/mockanthropic.
	Anthropic Family = "anthropic"
	// ChatCompletions is OpenAI-compatible Chat Completions with
	// reasoning_content (@ai-sdk/openai-compatible: DeepSeek, Kimi),
	// answered by internal/opencodetest/mockopenai.
	ChatCompletions Family = "chat-completions"
	// Responses is the OpenAI Responses API (@ai-sdk/openai, the openai
	// provider), answered by internal/opencodetest/mockopenai.
	Responses Family = "responses"
	// Gemini is the Gemini API (@ai-sdk/google, the google provider),
	// answered by internal/opencodetest/mockgemini.
	Gemini Family = "gemini"
	// Bedrock is Bedrock's Converse API (@ai-sdk/amazon-bedrock, the
	// amazon-bedrock provider), answered by internal/opencodetest/mockbedrock.
	Bedrock Family = "bedrock"
)

// Provider is how the harness configures one OpenCode provider id: the
// entry it writes under "provider" in opencode.json, with options.baseURL at
// the family's mock.
type Provider struct {
	// ID is the provider id (opencode.json key, providerID in stored
	// messages, the part before "/" in a model).
	ID     string
	Family Family
	// Dialect is the mockopenai dialect the provider's baseURL points at
	// (empty for Anthropic).
	Dialect mockopenai.Dialect
	// APIKey is the key written into options.apiKey; the mock treats it as
	// the account (Options.APIKeys overrides it).
	APIKey string
	// Models are the model ids the harness runs with this provider, the
	// default first.
	Models []string
	// NPM and Name make a custom provider (one OpenCode's catalogue does
	// not have): users write them for providers they add themselves.
	NPM, Name string
	// Declare are model declarations written into the entry's "models", the
	// way users declare models OpenCode's catalogue does not list.
	Declare map[string]map[string]any
	// ModelFamilies are the models whose family is not the provider's
	// (OpenCode Zen's catalogue names a package per model): ProviderOf
	// gives such a model's provider that family, so that the entry's
	// baseURL points at that family's mock.
	ModelFamilies map[string]Family
}

// Model ids the harness is known to work with, one per provider.
const (
	// DeepSeekModel is in OpenCode 1.18.33's catalogue (deepseek provider,
	// @ai-sdk/openai-compatible, interleaved reasoning_content).
	DeepSeekModel = "deepseek/deepseek-v4-pro"
	// DeepSeekReasoner and DeepSeekChat are the classic DeepSeek API model
	// ids, not in 1.18.33's catalogue: the harness declares them the way
	// users do.
	DeepSeekReasoner = "deepseek/deepseek-reasoner"
	DeepSeekChat     = "deepseek/deepseek-chat"
	// KimiModel is in 1.18.33's catalogue (moonshotai provider,
	// @ai-sdk/openai-compatible, interleaved reasoning_content).
	KimiModel = "moonshotai/kimi-k2.6"
	// KimiCustomModel is Kimi through a provider the user adds
	// (npm @ai-sdk/openai-compatible, a model the catalogue does not know
	// for it, so no interleaved setting), the shape of many third-party
	// hosts' Kimi and DeepSeek entries.
	KimiCustomModel = "kimi/kimi-k2-thinking"
	// MagistralModel is a Mistral model through an OpenAI-compatible
	// provider the user adds (npm @ai-sdk/openai-compatible). OpenCode
	// 1.18.33 does not know "magistral" as Mistral's, so it sends the
	// stored tool call ids as they are; the mock applies Mistral's rule on
	// them (mockopenai.MistralFamily).
	MagistralModel = "mistralcompat/magistral-medium-latest"
	// DevstralModel is the same provider's devstral model, whose tool call
	// ids OpenCode rewrites into Mistral's form.
	DevstralModel = "mistralcompat/devstral-medium-latest"
	// VLLMModel is a vision model served by vLLM, through a provider the
	// user adds (npm @ai-sdk/openai-compatible, Chat Completions), declared
	// to take images.
	VLLMModel = "vllm/qwen2.5-vl-7b-instruct"
	// OpenAIModel is in 1.18.33's catalogue (openai provider,
	// @ai-sdk/openai, Responses API, reasoning effort medium with
	// summaries and encrypted content, store false).
	OpenAIModel = "openai/gpt-5.2"
	// OpenAICodexModel is a codex model of the same provider.
	OpenAICodexModel = "openai/gpt-5.3-codex-spark"
	// ZenOpenAIModel is a GPT model of OpenCode's own provider (OpenCode
	// Zen): 1.18.33's catalogue gives the provider @ai-sdk/openai-compatible
	// but its GPT models @ai-sdk/openai, so OpenCode talks the Responses API
	// to it, as to the openai provider.
	ZenOpenAIModel = "opencode/gpt-5.2"
	// ZenGoogleModel is a Gemini model of OpenCode Zen, which 1.18.33's
	// catalogue sends through @ai-sdk/google.
	ZenGoogleModel = "opencode/gemini-3-flash"
	// GoogleModel is a Gemini 3 model in 1.18.33's catalogue (google
	// provider, @ai-sdk/google); OpenCode turns thinking on for it by
	// itself (thinkingConfig {includeThoughts: true, thinkingLevel: "high"}).
	GoogleModel = "google/gemini-3-flash-preview"
	// BedrockModel is Claude with reasoning in 1.18.33's catalogue
	// (amazon-bedrock provider, @ai-sdk/amazon-bedrock, Converse API). In
	// region us-east-1 OpenCode sends it as the inference profile "us.<id>".
	// The harness turns reasoning on with the model's reasoningConfig
	// option (Options.ThinkingBudget), which 1.18.33 does not by itself.
	BedrockModel = "amazon-bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0"
)

// Providers are the providers the harness can configure, by id.
var Providers = map[string]Provider{
	"anthropic": {ID: "anthropic", Family: Anthropic, APIKey: "sk-ant-mock-key", Models: []string{"claude-sonnet-4-5"}},
	"deepseek": {
		ID: "deepseek", Family: ChatCompletions, Dialect: mockopenai.DeepSeek, APIKey: "sk-mock-deepseek",
		Models: []string{"deepseek-v4-pro", "deepseek-flash", "deepseek-reasoner", "deepseek-chat"},
		Declare: map[string]map[string]any{
			"deepseek-reasoner": {"name": "DeepSeek Reasoner", "reasoning": true, "tool_call": true,
				"limit": map[string]any{"context": 128000, "output": 64000}},
			"deepseek-chat": {"name": "DeepSeek Chat", "tool_call": true,
				"limit": map[string]any{"context": 128000, "output": 8000}},
		},
	},
	"moonshotai": {ID: "moonshotai", Family: ChatCompletions, Dialect: mockopenai.Moonshot, APIKey: "sk-mock-moonshot",
		Models: []string{"kimi-k2.6"}},
	"kimi": {
		ID: "kimi", Family: ChatCompletions, Dialect: mockopenai.Moonshot, APIKey: "sk-mock-kimi",
		NPM: "@ai-sdk/openai-compatible", Name: "Kimi", Models: []string{"kimi-k2-thinking"},
		Declare: map[string]map[string]any{
			"kimi-k2-thinking": {"name": "Kimi K2 Thinking", "reasoning": true, "tool_call": true,
				"limit": map[string]any{"context": 262144, "output": 32000}},
		},
	},
	"mistralcompat": {
		ID: "mistralcompat", Family: ChatCompletions, Dialect: mockopenai.OpenAI, APIKey: "sk-mock-mistral",
		NPM: "@ai-sdk/openai-compatible", Name: "Mistral (OpenAI-compatible)", Models: []string{"magistral-medium-latest", "devstral-medium-latest"},
		Declare: map[string]map[string]any{
			"magistral-medium-latest": {"name": "Magistral Medium", "tool_call": true,
				"limit": map[string]any{"context": 128000, "output": 32000}},
			"devstral-medium-latest": {"name": "Devstral Medium", "tool_call": true,
				"limit": map[string]any{"context": 128000, "output": 32000}},
		},
	},
	// A vision model served by vLLM that the user adds (npm
	// @ai-sdk/openai-compatible), declared to take images.
	"vllm": {
		ID: "vllm", Family: ChatCompletions, Dialect: mockopenai.OpenAI, APIKey: "sk-mock-vllm",
		NPM: "@ai-sdk/openai-compatible", Name: "vLLM", Models: []string{"qwen2.5-vl-7b-instruct"},
		Declare: map[string]map[string]any{
			"qwen2.5-vl-7b-instruct": {"name": "Qwen2.5 VL 7B", "tool_call": true, "attachment": true,
				"modalities": map[string]any{"input": []string{"text", "image"}, "output": []string{"text"}},
				"limit":      map[string]any{"context": 128000, "output": 8000}},
		},
	},
	"openai": {ID: "openai", Family: Responses, Dialect: mockopenai.OpenAI, APIKey: "sk-mock-openai",
		Models: []string{"gpt-5.2", "gpt-5.3-codex-spark"}},
	// OpenCode's own provider (Zen): a GPT model, which OpenCode sends
	// through @ai-sdk/openai (baseURL at the OpenAI mock), and a Gemini
	// model, which it sends through @ai-sdk/google (at the Gemini mock).
	"opencode": {ID: "opencode", Family: Responses, Dialect: mockopenai.OpenAI, APIKey: "sk-mock-zen",
		Models: []string{"gpt-5.2", "gemini-3-flash"}, ModelFamilies: map[string]Family{"gemini-3-flash": Gemini}},
	"google": {ID: "google", Family: Gemini, APIKey: "mock-gemini-key", Models: []string{"gemini-3-flash-preview"}},
	// The amazon-bedrock APIKey is a Bedrock API key, given to OpenCode as
	// AWS_BEARER_TOKEN_BEDROCK (see Env.Environ).
	"amazon-bedrock": {ID: "amazon-bedrock", Family: Bedrock, APIKey: "mock-bedrock-api-key",
		Models: []string{"anthropic.claude-sonnet-4-5-20250929-v1:0"}},
}

// ProviderOf returns the provider of a "provider/model" id, with the
// model's family (Provider.ModelFamilies).
func ProviderOf(model string) (Provider, error) {
	id, modelID, ok := strings.Cut(model, "/")
	if !ok {
		return Provider{}, fmt.Errorf("model %q is not provider/model", model)
	}
	p, ok := Providers[id]
	if !ok {
		var known []string
		for k := range Providers {
			known = append(known, k)
		}
		sort.Strings(known)
		return Provider{}, fmt.Errorf("model %q: the harness does not configure provider %q (it knows %s)", model, id, strings.Join(known, ", "))
	}
	if f, ok := p.ModelFamilies[modelID]; ok {
		p.Family = f
	}
	return p, nil
}

// FamilyOf returns the family of a "provider/model" id.
func FamilyOf(model string) (Family, error) {
	p, err := ProviderOf(model)
	return p.Family, err
}

package opencodetest

import "strings"

// googleBedrockEntry fills the opencode.json entry of a provider of the
// Gemini or Bedrock family.
//
// google: options.baseURL at Env.Gemini (…/v1beta) and options.apiKey.
// Thinking needs no config.
//
// amazon-bedrock: options.endpoint at Env.Bedrock (OpenCode makes it the
// SDK's baseURL) and region us-east-1; the key goes to OpenCode as
// AWS_BEARER_TOKEN_BEDROCK (Env.Environ), because 1.18.33 ignores a
// bearerToken option and then asks for SigV4 credentials. Every Claude
// model the harness runs gets reasoningConfig {type: enabled, budgetTokens:
// Options.ThinkingBudget} (16000 by default; a negative budget leaves
// reasoning off, as 1.18.33 does by itself).
func (e *Env) googleBedrockEntry(p Provider, key string, opts Options, entry, models map[string]any) {
	if p.Family == Gemini {
		entry["options"] = map[string]any{"baseURL": e.Gemini.BaseURL(), "apiKey": key}
		return
	}
	entry["options"] = map[string]any{"endpoint": e.Bedrock.URL(), "region": "us-east-1"}
	budget := opts.ThinkingBudget
	if budget == 0 {
		budget = 16000
	}
	if budget < 0 {
		return
	}
	for _, m := range p.Models {
		if strings.Contains(m, "anthropic.") {
			models[m] = map[string]any{"options": map[string]any{
				"reasoningConfig": map[string]any{"type": "enabled", "budgetTokens": budget},
			}}
		}
	}
}

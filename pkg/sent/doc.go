// Package sent is sessfix's model of what OpenCode sends: for a stored
// session, the request history OpenCode 1.18.33 (or 1.1.x, for the JSON-era
// stores) builds for a provider family, each entry and block traced back to
// the stored message and part it came from.
//
// Build runs OpenCode's stages (history since the last compaction, its
// toModelMessages, the AI SDK's split of steps, ProviderTransform's
// normalisation, the provider package's conversion) for the family the
// model belongs to (FamilyOf):
//
//   - Anthropic: the Messages API (also Vertex); messages.N.content.M.
//   - Bedrock: Converse, grouped like Anthropic, with its blank-text rule.
//   - Chat: OpenAI-compatible Chat Completions (DeepSeek, Kimi/Moonshot):
//     messages[N] with the system prompt at 0, one entry per assistant step
//     and per tool result, reasoning_content as the model data decides
//     (Interleaved).
//   - Responses: the OpenAI Responses API (the openai provider); input[N]
//     with the developer message at 0, reasoning items with their encrypted
//     content and item ids.
//   - Google: Gemini's contents[N], calls with their thoughtSignature.
//
// Request.LocateIndex maps an index as any of these providers prints it
// back to storage; it is the one such mapping in sessfix (pkg/scan's
// preflight rules, SF302, `sessfix diagnose` and pkg/fix's error-driven
// recovery use it). Request.Index prints an index the way the family does.
//
// The package only reads sessions: it imports pkg/store and nothing above
// it. What decides whether a model thinks or interleaves reasoning (the
// model data OpenCode compiles in) is in models.go.
package sent

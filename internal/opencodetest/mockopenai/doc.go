// Package mockopenai is a local mock of the OpenAI-shaped APIs OpenCode
// talks to through its bundled @ai-sdk/openai-compatible and @ai-sdk/openai
// packages, for tests that drive real OpenCode binaries offline:
//
//   - POST <base>/chat/completions: OpenAI Chat Completions as the
//     OpenAI-compatible reasoning providers stream it (DeepSeek,
//     Kimi/Moonshot): reasoning_content deltas, then content or tool_calls;
//   - POST <base>/responses: the OpenAI Responses API's streaming event
//     sequence with reasoning items (rs_…), messages (msg_…) and function
//     calls (fc_…, call ids call_…), reasoning summaries and encrypted
//     reasoning content.
//
// One Server serves several providers, told apart by the first path segment
// (see Dialect and Server.BaseURL): /deepseek/v1, /moonshot/v1 and /openai/v1.
// The dialect decides the rules and the exact error texts and bodies.
//
// Every request is validated before it is answered, by code in this package
// that is independent of sessfix's own checks (it imports nothing from pkg/).
// The rules and error texts are those of shared/docs/provider-rules.md:
//
//   - Chat Completions (every dialect): an assistant message with tool_calls
//     is followed by a tool message for each call id, and a tool message
//     answers a preceding tool call.
//   - DeepSeek and Moonshot with thinking on (ThinkingOn): an assistant
//     message that made tool calls carries reasoning_content. How far the
//     rule reaches is not settled, so it is a switch (Reading,
//     Server.SetReading): ReadingLenient, the default, checks the messages
//     after the last user message and accepts ""; ReadingStrict checks
//     every turn and counts "" as missing. Config.ReasoningScope and
//     Config.RejectEmptyReasoning set the two halves separately.
//   - Responses: item ids are non-empty; a reasoning item is followed by the
//     item it produced and an output item issued after a reasoning item comes
//     with it; items referenced by id (item_reference, or reasoning without
//     encrypted content) were stored (store: true) by the same account;
//     encrypted reasoning content verifies for the account (the API key) and
//     model it was issued to; every function_call has its
//     function_call_output and every output its call.
//
// A request that breaks a rule is answered with the provider's status (400,
// or 404 for items not found) and its JSON error body. Accepted requests are
// answered with a stream chosen by a Script (DefaultScript understands
// prompt markers such as "[[tool:bash echo hi]]").
//
// Encrypted reasoning content is "mockenc1." + base64url(JSON payload naming
// the item id, account and model) + "." + base64url(HMAC-SHA256 of the
// payload under the server's secret): content from another account, another
// model or another server (secret) does not verify, the way the real API
// refuses reasoning replayed to another organisation or model.
//
// Every request is recorded with its verdict (Server.Requests). Streams can be
// slowed down (EventDelay) and held at a Stage (Server.Pause), so a client can
// be killed at a deterministic point of a stream.
package mockopenai

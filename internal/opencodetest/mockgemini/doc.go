// Package mockgemini is a local mock of the Google Gemini API
// (generativelanguage.googleapis.com, v1beta) for tests that drive real
// OpenCode binaries offline.
//
// A Server listens on 127.0.0.1 only. It answers POST
// /v1beta/models/{model}:streamGenerateContent?alt=sse (what OpenCode's
// bundled @ai-sdk/google calls when the google provider's baseURL is
// Server.BaseURL()) with server-sent events shaped like the real API: one
// GenerateContentResponse per event, thought summaries as parts with
// "thought": true, function calls as functionCall parts, and a final chunk
// with finishReason and usageMetadata. :generateContent is answered with
// one JSON document.
//
// Every request is validated before it is answered, by code in this package
// that is independent of sessfix's own checks (it imports nothing from
// pkg/). The rules and error texts are the real API's (see validate.go and
// shared/docs/provider-rules.md); a request that breaks one is answered with
// HTTP 400 and the real error body
// {"error":{"code":400,"message":"...","status":"INVALID_ARGUMENT"}}.
//
// Thought signatures are issued by the mock and bound to the model and the
// server's secret: a signature from another model or another secret (think
// of another account), or any other string, is "Corrupted thought
// signature." For Gemini 3 models the first functionCall part of every model
// step in the current turn must carry a signature; Google's documented
// placeholders "skip_thought_signature_validator" and
// "context_engineering_is_the_way_to_go" are accepted wherever a signature
// is, as Google accepts them.
//
// Every request is recorded with its verdict (Server.Requests). Tests choose
// the answers with a Script (DefaultScript understands prompt markers such as
// "[[tool:bash echo hi]]"; several markers make parallel calls), slow the
// stream down with EventDelay, and hold a stream at a chosen Stage with
// Server.Pause, which makes kills of the client happen at deterministic
// points.
package mockgemini

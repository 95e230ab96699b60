// Package mockanthropic is a local mock of the Anthropic Messages API for tests
// that drive real OpenCode binaries offline.
//
// A Server listens on 127.0.0.1 only. It answers POST /v1/messages (the path
// OpenCode's bundled @ai-sdk/anthropic calls when the provider's baseURL is
// Server.BaseURL()) with server-sent events shaped like the real API:
// message_start, content blocks (a thinking block carrying a signature_delta,
// text, tool_use with input_json_delta), message_delta and message_stop.
//
// Every request is validated before it is answered, by code in this package
// that is independent of sessfix's own checks (it imports nothing from pkg/).
// The rules and the error texts are the ones the real API applies (see
// shared/docs/provider-rules.md and validate.go); a request that breaks one is
// answered with HTTP 400 and the real error body
// {"type":"error","error":{"type":"invalid_request_error","message":"..."}}.
// A request body over the Messages API's 32 MB size limit is answered
// first, with HTTP 413 and {"type":"error","error":{"type":
// "request_too_large","message":"Request exceeds the maximum allowed number
// of bytes. ..."}} (RequestBytesMax).
//
// Thinking signatures are HMAC-SHA256 of the thinking text under the server's
// secret, so a thinking block whose text or signature was altered, or that
// was signed by someone else, is rejected with "Invalid `signature` in
// `thinking` block", like the real API does.
//
// Every request is recorded with its verdict (Server.Requests). Tests choose
// the answers with a Script (DefaultScript understands prompt markers such as
// "[[tool:bash echo hi]]"), slow the stream down with EventDelay, and stop a
// stream at a chosen Stage with Server.Pause, which makes kills of the client
// happen at deterministic points.
package mockanthropic

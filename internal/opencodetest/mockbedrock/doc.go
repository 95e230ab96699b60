// Package mockbedrock is a local mock of Amazon Bedrock Runtime's Converse
// API for tests that drive real OpenCode binaries offline.
//
// A Server listens on 127.0.0.1 only. It answers POST
// /model/{modelId}/converse-stream, what OpenCode's bundled
// @ai-sdk/amazon-bedrock calls when the amazon-bedrock provider's endpoint
// option is Server.URL(), with an AWS event stream
// (application/vnd.amazon.eventstream: binary frames with :event-type
// headers and CRC checks, encoded with the AWS SDK's eventstream package):
// messageStart, contentBlockStart/Delta/Stop for reasoning (text, then
// signature), text and toolUse blocks, messageStop and metadata.
// /model/{modelId}/converse is answered with one JSON document.
//
// Requests must authenticate the way OpenCode does: "Authorization: Bearer
// <Bedrock API key>" (AWS_BEARER_TOKEN_BEDROCK or the provider's
// bearerToken option) or an AWS SigV4 Authorization header (access keys
// from the environment); Config.BearerToken and Config.AccessKeyID pin the
// accepted ones.
//
// Every request is validated before it is answered, by code in this package
// and internal/opencodetest/mockanthropic, independent of sessfix's own checks (nothing
// from pkg/ is imported). Converse's own rules come first, with Bedrock's
// error texts (blank text blocks, empty messages, error tool results
// without content, toolConfig missing while the history has tool blocks,
// role order); for Claude models the request is then checked, as Bedrock
// hands it to Claude, against Anthropic's rules on thinking, signatures
// and tool pairing. A request that breaks a rule is answered with HTTP
// 400, x-amzn-ErrorType: ValidationException and {"message": "..."}.
//
// Reasoning signatures use mockanthropic's scheme under this server's
// secret, so reasoning that is edited, signed by the Anthropic API or by
// another account is refused like Bedrock refuses it.
//
// Every request is recorded with its verdict (Server.Requests). Tests choose
// the answers with a Script (DefaultScript understands prompt markers such as
// "[[tool:bash echo hi]]"), slow the stream down with EventDelay, and hold a
// stream at a chosen Stage with Server.Pause, which makes kills of the
// client happen at deterministic points.
package mockbedrock

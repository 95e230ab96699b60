package scan

import (
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
)

var ruleSF104 = &Rule{
	Code:     SF104,
	Name:     "empty-text-part",
	Severity: Error,
	Summary:  "a text part is sent empty or whitespace-only",
	What: "A text part that reaches the provider as blank text: text that is whitespace-only (spaces, newlines), " +
		"which no OpenCode version removes; or text that is empty (\"\") in an assistant message that also owns " +
		"a reasoning part with an Anthropic signature, which OpenCode 1.2 and later send as a single space " +
		"(OpenCode 1.1 leaves it out, and SF155 reports the thinking the message then ends with). OpenCode " +
		"1.18 writes exactly this shape when it is stopped as a text block starts: signed reasoning plus text " +
		"\"\". Other empty text parts are not reported: OpenCode leaves \"\" out for Anthropic and Bedrock, and " +
		"ignored parts and messages OpenCode never sends do not matter.",
	Why:           "Anthropic and Bedrock reject whitespace-only text blocks, so the session fails on every retry.",
	ProviderError: "messages: text content blocks must contain non-whitespace text",
	FixDoc: "`replaceEmptyTextParts` sets each empty or whitespace-only text part of the message to the " +
		"placeholder (default `[user interrupted]`) and marks it synthetic; nothing else changes.",
	Fixable: true,
	Fix:     "replaceEmptyTextParts",
	Check:   checkEmptyTextPart,
}

func checkEmptyTextPart(c *Context) {
	v := newSentView(c)
	// OpenCode 1.1 leaves empty text out instead of sending " ".
	version := sent.VersionOf(c.Session)
	for _, m := range c.Session.Messages {
		if !v.sent(m) || Streaming(c, m) {
			continue
		}
		signed := false
		for _, p := range m.Parts {
			if opencode.HasAnthropicSignature(p) {
				signed = true
			}
		}
		for _, p := range m.Parts {
			if p.Type != "text" || p.Get("ignored").Bool() || !opencode.IsBlankText(p) {
				continue
			}
			f := At(m, p)
			switch text := opencode.PartText(p); {
			case text != "":
				f.Message = "text part is whitespace-only"
			case m.Role == "assistant" && signed && version != sent.V11:
				f.Message = "text part is empty next to signed thinking; opencode sends it as a single space"
			default:
				continue
			}
			f.ProviderError = "text content blocks must contain non-whitespace text"
			c.Report(f)
		}
	}
}

package opencode

import "testing"

func TestDetectErrorType(t *testing.T) {
	cases := []struct {
		text string
		want ErrorType
	}{
		// The docs link in this error mentions tool_use and tool_result:
		// thinking must win over the tool pattern.
		{"messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).", ErrorThinkingBlockOrder},
		{"messages.1.content.1: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found text.", ErrorThinkingBlockOrder},
		{"messages.5: The final block in an assistant message cannot be `thinking`.", ErrorThinkingBlockOrder},
		{"When thinking is disabled, an assistant message in the final position cannot contain thinking", ErrorThinkingDisabledViolation},
		{"messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A", ErrorToolResultMissing},
		{"messages.4: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01B", ErrorToolResultMissing},
		{"messages.1: all messages must have non-empty content except for the optional final assistant message", ErrorEmptyContent},
		{"messages: text content blocks must be non-empty", ErrorEmptyContent},
		{"messages: text content blocks must contain non-whitespace text", ErrorEmptyContent},
		{"The text field in the ContentBlock object at messages.3.content.0 is blank. Add text to the text field, and try again.", ErrorEmptyContent},
		{"The content field in the Message object at messages.2 is empty. Add a ContentBlock object to the content field and try again.", ErrorEmptyContent},
		{"messages.7.content.0: Invalid `signature` in `thinking` block", ErrorInvalidSignature},
		{"messages.1.content.0.thinking.signature: Field required", ErrorInvalidSignature},
		{"messages.1.content.0.redacted_thinking.data: Field required", ErrorInvalidSignature},
		{"messages.9.content.0: thinking blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.", ErrorThinkingModified},
		{"This model does not support assistant message prefill. The conversation must end with a user message.", ErrorPrefillUnsupported},
		// DeepSeek and Kimi (OpenAI-compatible, thinking mode), as the APIs
		// print them and as OpenCode stores them.
		{"The `reasoning_content` in the thinking mode must be passed back to the API.", ErrorReasoningContentMissing},
		{"Error from provider (DeepSeek): The `reasoning_content` in the thinking mode must be passed back to the API.", ErrorReasoningContentMissing},
		{"Missing `reasoning_content` field in the assistant message at message index 4. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls", ErrorReasoningContentMissing},
		{"thinking is enabled but reasoning_content is missing in assistant tool call message at index 2", ErrorReasoningContentMissing},
		// OpenAI Responses.
		{"Item 'rs_68a1f0c2d4e8' of type 'reasoning' was provided without its required following item.", ErrorReasoningWithoutFollowing},
		{"Item 'msg_68a1f0c2' of type 'message' was provided without its required 'reasoning' item: 'rs_68a1f0c1'.", ErrorReasoningItemMissing},
		{"The encrypted content for item rs_68a1f0c2d4e8 could not be verified.", ErrorEncryptedContentInvalid},
		{"reasoning encrypted_content was not issued to this caller", ErrorEncryptedContentInvalid},
		// OpenCode Zen / Console as OpenCode stores it (OpenCode issues #48773, #49116).
		{"Error from provider (Console): Upstream request failed: [invalid_request_error] reasoning `encrypted_content` was not issued to this caller", ErrorEncryptedContentInvalid},
		// xAI (Wei-Shaw/sub2api#4535).
		{"Could not decrypt the provided encrypted_content. Ensure the value is the unmodified encrypted_content from a previous response.", ErrorEncryptedContentInvalid},
		// A tool call the output limit cut off (OpenCode issue #36766).
		{"Invalid JSON input for openai-responses tool call patch", ErrorToolInputTruncated},
		// Mistral, as the API prints it and as OpenCode 1.18.33 stores it
		// from an OpenAI-compatible provider (OBSERVED.md).
		{"Tool call id was call_PTLP8xhu3uwZk4l3nlnrrJha but must be a-z, A-Z, 0-9, with a length of 9.", ErrorToolCallIDInvalid},
		{"Bad Request: Tool call id was toolu_015A28zpZRXSYnqFEFmRyDA4Ws but must be a-z, A-Z, 0-9, with a length of 9.", ErrorToolCallIDInvalid},
		{"Item with id 'rs_68a1f0c2d4e8' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", ErrorItemNotPersisted},
		{"Item with id 'msg_68a1f0c2' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", ErrorItemNotPersisted},
		{"Invalid 'input[3].id': ''. Expected an ID that contains letters, numbers, underscores, or dashes, but this value contained additional characters.", ErrorInvalidItemID},
		{"No tool output found for function call call_Qx7.", ErrorToolResultMissing},
		{"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_Qx7", ErrorToolResultMissing},
		// Gemini.
		{"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:bash` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", ErrorThoughtSignatureMissing},
		{"Corrupted thought signature.", ErrorThoughtSignatureCorrupted},
		{"* GenerateContentRequest.contents[3].parts: contents.parts must not be empty.\n", ErrorEmptyContent},
		{"Please ensure that function response turn comes immediately after a function call turn.", ErrorTurnOrder},
		// Bedrock, as OpenCode stores a ConverseStream error.
		{"undefined: The text field in the ContentBlock object at messages.1.content.1 is blank. Add text to the text field, and try again.", ErrorEmptyContent},
		{"undefined: messages.1: The final block in an assistant message cannot be `thinking`.", ErrorThinkingBlockOrder},
		{"undefined: messages.1.content.0: Invalid `signature` in `thinking` block", ErrorInvalidSignature},
		// A history that begins with an assistant message.
		{`messages: first message must use the "user" role`, ErrorFirstMessageNotUser},
		{"undefined: A conversation must start with a user message. Try again with a conversation that starts with a user message.", ErrorFirstMessageNotUser},
		// A history too big to send.
		{"undefined: The model returned the following errors: messages.3.content.1.image.source.base64: image exceeds 5 MB maximum: 5895160 bytes > 5242880 bytes", ErrorImageTooLarge},
		{"messages.40.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels", ErrorImageDimensions},
		{"request contains 52 images, exceeding the maximum of 50 allowed per request", ErrorTooManyImages},
		// Claude on Bedrock Converse (aws/aws-sdk-js-v3#6785; the
		// accelerated-intelligent-document-processing-on-aws #778 and #998
		// reports), the Messages API's own count texts
		// (anthropics/claude-code#24541), Gemini's request size (users'
		// reports of generateContent's INVALID_ARGUMENT).
		{"ValidationException: The model returned the following errors: messages.0.content.2.image.source.bytes: image exceeds 5 MB maximum: 7167852 bytes > 5242880 bytes", ErrorImageTooLarge},
		{"image exceed max allowed size for many-image requests: 2000 pixels", ErrorImageDimensions},
		{"too many images and documents: 120 + 0 > 100", ErrorTooManyImages},
		{"Too much media: 0 document pages + 107 images > 100", ErrorTooManyImages},
		{"At most 5 image(s) may be provided in one request.", ErrorTooManyImages},
		{"Too many images in request: 11 images provided, but the model supports a maximum of 10 images.", ErrorTooManyImages},
		{"Please use fewer than 3600 images in your request to models/gemini-1.5-flash", ErrorTooManyImages},
		{"Image count 5 exceeds limit 4 per request.", ErrorTooManyImages},
		{"Request payload size exceeds the limit: 20971520 bytes.", ErrorRequestTooLarge},
		// A 413 as users quote it (anomalyco/opencode#12060, 2026-02: the
		// Messages API's request_too_large with a shorter message than its
		// errors page shows, and OpenAI's Cloudflare 413 page).
		{`{"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`, ErrorRequestTooLarge},
		{"Request exceeds the maximum size", ErrorRequestTooLarge},
		{"<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>cloudflare</center></body></html>", ErrorRequestTooLarge},
		{"Payload Too Large", ErrorRequestTooLarge},
		// The Messages API's page limit, as users quote it
		// (anthropics/claude-code#5707, badlogic/lemmy#40).
		{`400 {"type":"error","error":{"type":"invalid_request_error","message":"A maximum of 100 PDF pages may be provided."}}`, ErrorPDFPages},
		// A text file with a .pdf name (anthropics/claude-code#5174, #19577).
		{"messages.2.content.0.pdf.source.base64.data: The PDF specified was not valid.", ErrorInvalidPDF},
		{"The image data you provided does not represent a valid image. Please check your input and try again with one of the supported image formats.", ErrorInvalidImage},
		// Tool call ids the Messages API refuses (anomalyco/opencode#1279).
		{"AI_APICallError: messages.1.content.2: `tool_use` ids must be unique", ErrorToolUseIDInvalid},
		{"messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", ErrorToolUseIDInvalid},
		// An image of 0 bytes (anthropics/claude-code#36712).
		{"messages.57.content.2.image.source.base64: image cannot be empty", ErrorInvalidImage},
		// OpenAI's answer to data that is no image, today's wording and
		// the older one (CosmosShadow/gptpdf#6), as OpenCode stores them.
		{TextOpenAIInvalidImage, ErrorInvalidImage},
		// Gemini's, as OpenCode stores it and as a proxy words it.
		{TextGeminiInvalidImage, ErrorInvalidImage},
		{`HTTP 400: {"error":{"message":"Provided image is not valid."}}`, ErrorInvalidImage},
		{"Unable to process input image. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", ErrorInvalidImage},
		{`{"error":{"message":"You uploaded an unsupported image. Please make sure your image is below 20 MB in size and is of one the following formats: ['png', 'jpeg', 'gif', 'webp'].","type":"invalid_request_error","param":null,"code":"sanitizer_server_error"}}`, ErrorInvalidImage},
		// Anthropic's answer to an image whose type it takes but which it
		// cannot read (anthropics/claude-code#2519, #15941).
		{`{"type":"error","error":{"type":"invalid_request_error","message":"Could not process image"}}`, ErrorInvalidImage},
		// xAI's (NousResearch/hermes-agent#69078).
		{"Invalid PNG image", ErrorInvalidImage},
		{"Invalid JPEG image", ErrorInvalidImage},
		{"base64 string of provided image cannot be decoded", ErrorInvalidImage},
		{"prompt is too long: 215000 tokens > 200000 maximum", ErrorContextOverflow},
		// The input and max_tokens over the window (Anthropic), which
		// OpenCode 1.18.33 stores as an APIError (SF304).
		{"input length and `max_tokens` exceed context limit: 187000 + 32000 > 200000, decrease input length or `max_tokens` and try again", ErrorContextOverflow},
		// The texts OpenCode 1.18.33 itself treats as an overflow.
		{"Prompt too long for this model", ErrorContextOverflow},
		{"context overflow", ErrorContextOverflow},
		{"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. (context_length_exceeded)", ErrorContextOverflow},
		// OpenAI, Chat Completions and the Responses API's stream error
		// (chathub-dev/chathub#126, anomalyco/opencode#6071); Gemini
		// (google-gemini/gemini-cli#4118).
		{"This model's maximum context length is 4097 tokens. However, your messages resulted in 4619 tokens. Please reduce the length of the messages.", ErrorContextOverflow},
		{`{"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}`, ErrorContextOverflow},
		{"Your input exceeds the context window of this model. Please adjust your input and try again.", ErrorContextOverflow},
		{"The input token count (132478) exceeds the maximum number of tokens allowed (131072).", ErrorContextOverflow},
		{`{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`, ErrorContextOverflow},
		{"Overloaded", ErrorNone},
		{"rate_limit_error: Number of request tokens has exceeded your per-minute rate limit", ErrorNone},
		{"", ErrorNone},
	}
	for _, c := range cases {
		if got := DetectErrorType(c.text); got != c.want {
			t.Errorf("DetectErrorType(%.60q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestExtractIndex(t *testing.T) {
	cases := []struct {
		text  string
		n     int
		ok    bool
		index string
	}{
		{"messages.3.content.0.type: Expected `thinking`", 3, true, "messages.3.content.0"},
		{"The content field in the Message object at messages.12 is empty", 12, true, "messages.12"},
		{"see messages.4.content.1 and messages.6", 4, true, "messages.4.content.1"},
		{"messages: text content blocks must be non-empty", 0, false, ""},
		{"undefined: messages.1: The final block in an assistant message cannot be `thinking`.", 1, true, "messages.1"},
		{"Missing `reasoning_content` field in the assistant message at message index 4. For more information", 0, false, "messages[4]"},
		{"thinking is enabled but reasoning_content is missing in assistant tool call message at index 2", 0, false, "messages[2]"},
		{"Invalid parameter: 'messages[5].tool_calls'", 0, false, "messages[5]"},
		{"Invalid 'input[3].id': ''. Expected an ID", 0, false, "input[3]"},
		{"* GenerateContentRequest.contents[3].parts: contents.parts must not be empty.", 0, false, "contents[3]"},
		{"function call `default_api:bash` , position 2. Please refer", 0, false, "position 2"},
	}
	for _, c := range cases {
		n, ok := ExtractMessageIndex(c.text)
		if n != c.n || ok != c.ok {
			t.Errorf("ExtractMessageIndex(%q) = %d, %v; want %d, %v", c.text, n, ok, c.n, c.ok)
		}
		if got := ExtractIndex(c.text); got != c.index {
			t.Errorf("ExtractIndex(%q) = %q, want %q", c.text, got, c.index)
		}
	}
}

func TestExtractItemID(t *testing.T) {
	cases := map[string]string{
		"Item 'rs_68a1f0c2d4e8' of type 'reasoning' was provided without its required following item.":               "rs_68a1f0c2d4e8",
		"The encrypted content for item rs_0a1b could not be verified.":                                              "rs_0a1b",
		"Item 'msg_9f' of type 'message' was provided without its required 'reasoning' item: 'rs_1'.":                "msg_9f",
		"No tool call found for function call output with call_id call_Qx7-a.":                                       "call_Qx7-a",
		"messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A":            "toolu_01A",
		"Item with id 'rs_…' not found.":                                                                             "",
		"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'": "",
	}
	for text, want := range cases {
		if got := ExtractItemID(text); got != want {
			t.Errorf("ExtractItemID(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestErrorTypeFixes(t *testing.T) {
	noFix := map[ErrorType]bool{ErrorThinkingModified: true, ErrorPrefillUnsupported: true,
		ErrorReasoningItemMissing: true, ErrorInvalidItemID: true, ErrorThoughtSignatureMissing: true, ErrorTurnOrder: true,
		ErrorFirstMessageNotUser: true,
		ErrorImageTooLarge:       true, ErrorImageDimensions: true, ErrorTooManyImages: true, ErrorInvalidImage: true, ErrorRequestTooLarge: true, ErrorPDFPages: true, ErrorInvalidPDF: true, ErrorPDFUnprocessable: true, ErrorContextOverflow: true}
	for _, typ := range ErrorTypes() {
		if fix := typ.DefaultFix(); noFix[typ] != (fix == "") {
			t.Errorf("%s: DefaultFix %q", typ, fix)
		}
		// Every type's example is a text of that type.
		if got := DetectErrorType(typ.Example()); got != typ {
			t.Errorf("%s: its example %q classifies as %q", typ, typ.Example(), got)
		}
	}
}

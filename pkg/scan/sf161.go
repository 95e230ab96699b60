package scan

var ruleSF161 = preflightRule(&Rule{
	Code:          SF161,
	Name:          "bedrock-empty-content",
	Severity:      Error,
	Summary:       "a message sent to bedrock has no content",
	What:          "On an Amazon Bedrock provider, a message of the request has no content block, for example an assistant step whose only reasoning has no Bedrock signature and is dropped.",
	Why:           "The Converse API rejects the request on every retry.",
	ProviderError: "The content field in the Message object at messages.N is empty. Add a ContentBlock object to the content field and try again.",
	FixDoc:        "`injectTextPart` gives the stored message a synthetic text part.",
	Fixable:       true,
	Fix:           "injectTextPart",
})

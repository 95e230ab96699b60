package scan

// The rules of a history too big to send (SF170–SF179). An image a user
// pasted or attached, or a tool returned, that is over the size or
// dimension limit is shrunk (shrinkImage, which keeps the picture); the
// others are found but not repaired yet: pruning old tool results and
// placeholders wait.

const shrinkImageDoc = "`shrinkImage`, for an image a user pasted or attached (a `file` part) or a tool returned (an image attachment of a completed tool part, " +
	"such as the `read` tool's): sessfix decodes it (PNG, JPEG, GIF, WebP), " +
	"scales it down so that both sides are within the limit that applies (8000 px, 2000 px in a request of more than 20 images) and re-encodes it " +
	"until its base64 is at most 4 MiB, 1 MiB under the 5 MB limit: a PNG (or a GIF or WebP, written as PNG) stays PNG when that fits, else it becomes a JPEG " +
	"at decreasing quality, then smaller still. The part's (or the attachment's) `mime` and the `data:` URL's type follow the new format; its filename is kept. " +
	"The image is decoded only when repairing, one at a time. Data that does not decode is not repaired: the finding stays."

const notRepairedYetDoc = "Not repaired yet: sessfix reports the image and the provider's error, and `fix` plans nothing for it. " +
	"Until it can shrink the image, remove it yourself (delete the message in OpenCode, or revert to before it) or start a new session."

func init() {
	registerPreflight(&Rule{
		Code:     "SF170",
		Name:     "image-over-size-limit",
		Severity: Error,
		Summary:  "an image the request sends is over the provider's size limit",
		What: "On an Anthropic provider, an image the request sends (a user's pasted or attached image: a `file` part whose `url` is a `data:` URL; " +
			"or an image attachment of a completed tool result, such as the `read` tool on a PNG) has more than 5 MB (5,242,880 bytes) of base64 data. " +
			"OpenCode re-sends the whole history on every prompt, so every later prompt fails. " +
			"A tool result whose `state.time.compacted` is set is sent as `[Old tool result content cleared]` without its images and is not counted. " +
			"The index is the image block (`messages.N.content.M`), or for a tool result's image the block inside its content (`messages.N.content.M.content.K`; " +
			"the API's error names it `messages.N.content.M.tool_result.content.K`).",
		Why:           "The provider rejects the request on every retry: the session is dead until the image leaves the history.",
		ProviderError: "messages.N.content.M.image.source.base64: image exceeds 5 MB maximum: 5895160 bytes > 5242880 bytes",
		FixDoc:        shrinkImageDoc,
		Fixable:       true,
		Fix:           "shrinkImage",
	})
	registerPreflight(&Rule{
		Code:     "SF171",
		Name:     "image-over-dimension-limit",
		Severity: Error,
		Summary:  "an image the request sends is wider or taller than the provider allows",
		What: "On an Anthropic provider, an image the request sends (a user `file` part or a tool result's image attachment) is more than 8000 px wide or tall, " +
			"or more than 2000 px when the request holds more than 20 images. The size is read from the image's header (PNG, JPEG, GIF, WebP); " +
			"the image is never decoded whole.",
		Why:           "The provider rejects the request on every retry; with many images, one screenshot over 2000 px kills the session.",
		ProviderError: "messages.N.content.M.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels",
		FixDoc:        shrinkImageDoc,
		Fixable:       true,
		Fix:           "shrinkImage",
	})
	registerPreflight(&Rule{
		Code:     "SF172",
		Name:     "too-many-images",
		Severity: Error,
		Summary:  "the request sends more images than the provider allows",
		What: "On an Anthropic provider, the request holds more images than the API takes: 100 for a model with a 200k-token context window, 600 for the others " +
			"(a warning between the two: sessfix does not know the model's window), 50 on OpenCode Console (provider `opencode`). " +
			"User `file` parts and the image attachments of tool results not compacted are counted. The finding points at the first image over the limit.",
		Why:           "The provider rejects the request on every retry.",
		ProviderError: "request contains 52 images, exceeding the maximum of 50 allowed per request",
		FixDoc:        notRepairedYetDoc,
	})
	registerPreflight(&Rule{
		Code:          "SF173",
		Name:          "invalid-image-data",
		Severity:      Error,
		Summary:       "an image the request sends is not an image of a supported type",
		What:          "On an Anthropic provider, an image part (a user `file` part, or a tool result's image attachment) whose mime type is PNG, JPEG, GIF or WebP holds base64 data that does not start like any of the four, or is not base64. Other image types (SVG, BMP) get another error, not checked.",
		Why:           "The provider rejects the request on every retry.",
		ProviderError: textInvalidImage,
		FixDoc:        notRepairedYetDoc,
	})
}

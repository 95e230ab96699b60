package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// The rules of a history too big to send (SF170–SF189). An image a user
// pasted or attached, or a tool returned, that is over the size or
// dimension limit is shrunk (shrinkImage, which keeps the picture); too
// many images are pruned from old tool results (markToolCompacted); image
// data that is no image, or an image over a limit that does not decode, is
// replaced by a text saying what was removed (replaceMedia).

const shrinkImageDoc = "`shrinkImage`, for an image a user pasted or attached (a `file` part) or a tool returned (an image attachment of a completed tool part, " +
	"such as the `read` tool's): sessfix decodes it (PNG, JPEG, GIF, WebP), " +
	"scales it down so that both sides are within the limit that applies (8000 px, 2000 px in a request of more than 20 images) and re-encodes it " +
	"until its base64 is at most 4 MiB, 1 MiB under the 5 MB limit: a PNG (or a GIF or WebP, written as PNG) stays PNG when that fits, else it becomes a JPEG " +
	"at decreasing quality, then smaller still. The part's (or the attachment's) `mime` and the `data:` URL's type follow the new format; its filename is kept. " +
	"The image is decoded only when repairing, one at a time. An image that does not decode gets the placeholder instead (`replaceMedia`, below)."

const replaceMediaDoc = "`replaceMedia`, the last resort, for media the provider cannot take and no other repair keeps (image data that is no image; PDF data that is no PDF; an image over a limit that does not decode): " +
	"sessfix replaces it by a text saying what was removed, `[sessfix removed the image shot.png (image/png, 1.2 KB): its data is not a PNG, JPEG, GIF or WebP image; the original is in sessfix's backup]`. " +
	"A user's `file` part becomes a synthetic `text` part with the same id, so it keeps its place in the message (every provider family takes a text part in a user message); " +
	"a tool result's attachment leaves `state.attachments` and the text is appended to the tool's `state.output`, which every family sends as the result's text. " +
	"The rest of the message stays; the media stay in the backup run, and `sessfix undo` puts them back."

var ruleSF170 = preflightRule(&Rule{
	Code:     SF170,
	Name:     "image-over-size-limit",
	Severity: Error,
	Summary:  "an image the request sends is over the provider's size limit",
	What: "On an Anthropic provider (also Claude on Bedrock), an image the request sends (a user's pasted or attached image: a `file` part whose `url` is a `data:` URL; " +
		"or an image attachment of a completed tool result, such as the `read` tool on a PNG) has more than 5 MB (5,242,880 bytes) of base64 data; " +
		"on OpenAI (provider `openai`) an image is more than 20 MB (20,000,000 bytes), the limit OpenAI documents without its error text (the finding then has no `provider_error`). " +
		"OpenCode re-sends the whole history on every prompt, so every later prompt fails. " +
		"A tool result whose `state.time.compacted` is set is sent as `[Old tool result content cleared]` without its images and is not counted. " +
		"The index is the image block (`messages.N.content.M`), or for a tool result's image the block inside its content (`messages.N.content.M.content.K`; " +
		"the API's error names it `messages.N.content.M.tool_result.content.K`).",
	Why:           "The provider rejects the request on every retry: the session is dead until the image leaves the history.",
	ProviderError: "messages.N.content.M.image.source.base64: image exceeds 5 MB maximum: 5895160 bytes > 5242880 bytes",
	FixDoc:        shrinkImageDoc + "\n\n" + replaceMediaDoc,
	Fixable:       true,
	Fix:           "shrinkImage",
})

var ruleSF171 = preflightRule(&Rule{
	Code:     SF171,
	Name:     "image-over-dimension-limit",
	Severity: Error,
	Summary:  "an image the request sends is wider or taller than the provider allows",
	What: "On an Anthropic provider (also Claude on Bedrock), an image the request sends (a user `file` part or a tool result's image attachment) is more than 8000 px wide or tall, " +
		"or more than 2000 px when the request holds more than 20 images. The size is read from the image's header (PNG, JPEG, GIF, WebP); " +
		"the image is never decoded whole. OpenAI scales images of any size itself: no side is checked for it.",
	Why:           "The provider rejects the request on every retry; with many images, one screenshot over 2000 px kills the session.",
	ProviderError: "messages.N.content.M.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels",
	FixDoc:        shrinkImageDoc + "\n\n" + replaceMediaDoc,
	Fixable:       true,
	Fix:           "shrinkImage",
})

var ruleSF172 = preflightRule(&Rule{
	Code:     SF172,
	Name:     "too-many-images",
	Severity: Error,
	Summary:  "the request sends more images (and documents) than the provider allows",
	What: "On an Anthropic provider, the request holds more images and documents (PDFs) together than the API takes: 100 for a model with a 200k-token context window, 600 for the others " +
		"(a warning between the two: sessfix does not know the model's window; the same for Claude on Bedrock), and the API answers `too many images and documents: 104 + 1 > 100` " +
		"(images + documents > limit, as users quote it; an older wording, `Too much media: 0 document pages + 103 images > 100`, is recognised too). " +
		"50 images on OpenCode Console (provider `opencode`, documents not counted), which answers `request contains 52 images, exceeding the maximum of 50 allowed per request`, " +
		"whatever the model: Claude, GPT, Gemini, and the Zen models sessfix has no family for (users met it on muse-spark through Zen Go, anomalyco/opencode#47487), " +
		"whose other limits are not checked; " +
		"500 on OpenAI (provider `openai`; OpenAI documents the limit, not its error text, so the finding has no `provider_error`). " +
		"For a provider whose count sessfix does not know (Gemini, Azure, the OpenAI-compatible servers users run, such as vLLM), or whose refusal printed a lower limit " +
		"than the known one (Claude on Bedrock refused over 20 in 2025), the limit its own refusal printed, " +
		"once the session's last attempt was refused for it, with that text: vLLM's `At most 5 image(s) may be provided in one request.`, and, as users quote them, " +
		"`Too many images in request: 11 images provided, but the model supports a maximum of 10 images.`, `Too many images in request. Max is 10.`, " +
		"`too many images in the message, max allowed is 16`, `Image count 5 exceeds limit 4 per request.`, Gemini's `Please use fewer than 3600 images in your request to models/…` (at most one less), " +
		"Bedrock's `too many images and documents: 21 + 0 > 20`. " +
		"User `file` parts and the attachments of tool results not compacted are counted. The finding points at the first image over the limit.",
	Why:           "The provider rejects the request on every retry.",
	ProviderError: "too many images and documents: 104 + 1 > 100",
	FixDoc: "`markToolCompacted`, OpenCode's own prune: sessfix marks the oldest completed tool results whose images (or documents, where the limit counts them) the request sends compacted " +
		"(`state.time.compacted`, which OpenCode itself sets when it prunes), one after the other, until the request holds no more images (and documents, where they count) than the limit. " +
		"OpenCode then sends each as `[Old tool result content cleared]` without its images; the model no longer sees those images, the rest of the session stays. " +
		"Images users attached are not touched: when pruning every tool result is not enough, nothing is changed and the finding stays.",
	Fixable: true,
	Fix:     "markToolCompacted",
})

var ruleSF176 = preflightRule(&Rule{
	Code:     SF176,
	Name:     "images-over-request-total",
	Severity: Error,
	Summary:  "the images the request sends are over the provider's limit on all of them together",
	What: "On OpenAI (provider `openai`), the images a request sends hold more than 50 MB (50,000,000 bytes) together, the limit OpenAI documents " +
		"(\"Images and vision\": up to 50 MB of image bytes per request) without its error text, so the finding has no `provider_error`. " +
		"User `file` parts and the image attachments of tool results not compacted are counted, by their bytes (read from the base64's length, none decoded). " +
		"The limit is divided evenly among the request's images: there is one finding for each image over its share, at that image.",
	Why: "The provider rejects the request on every retry: the session is dead until the images are smaller.",
	FixDoc: "The same `shrinkImage` as SF170, to the image's share of the limit: sessfix re-encodes an image over its share until its base64 is at most four fifths of the share's base64 size (and 4 MiB at most, as for SF170), " +
		"one image at a time in the order the request sends them, each against the session as the repairs before it left it: once the images fit together, the ones after are kept whole. " +
		"Images under their share are not touched, and every picture stays.\n\n" + replaceMediaDoc,
	Fixable: true,
	Fix:     "shrinkImage",
})

var ruleSF173 = preflightRule(&Rule{
	Code:     SF173,
	Name:     "invalid-image-data",
	Severity: Error,
	Summary:  "an image the request sends is not an image of a supported type",
	What: "On an Anthropic provider (also Claude on Bedrock and OpenCode Console), on OpenAI (provider `openai`) or on Gemini (`google` providers), " +
		"an image part (a user `file` part, or a tool result's image attachment) " +
		"whose mime type is PNG, JPEG, GIF or WebP holds base64 data that does not start like any of the four, or is not base64, " +
		"or starts like one but whose header (its type and size) does not decode: a file cut short before its header ends, or damaged. " +
		"Other image types (SVG, BMP) get another error, not checked. " +
		"OpenAI answers `" + opencode.TextOpenAIInvalidImage + "` (as users quote it; an older wording that also names the 20 MB limit, " +
		"`You uploaded an unsupported image. Please make sure your image is below 20 MB in size and is of one the following formats: …`, is recognised too); " +
		"Gemini answers `" + opencode.TextGeminiInvalidImage + "` (400 INVALID_ARGUMENT); its `Unable to process input image. Please retry…` is recognised too. " +
		"Anthropic's answer is the provider error below. None of these texts names the image: a stored error is mapped to the images the preflight finds " +
		"(when it finds none, SF302 says so and advises a retry, then `show --sent` and `drop`). " +
		"An image with no data at all (a file of 0 bytes: an attached or read screenshot that was not written yet) gets another answer from Anthropic, which names it: " +
		"`messages.N.content.M.image.source.base64: image cannot be empty` (as users quote it, anthropics/claude-code#36712).",
	Why:           "The provider rejects the request on every retry.",
	ProviderError: textInvalidImage,
	FixDoc:        replaceMediaDoc,
	Fixable:       true,
	Fix:           "replaceMedia",
})

const textInvalidImage = opencode.TextInvalidImage

// imageIndex is where the provider's error points: the image block, or
// the image inside a tool result's content; for a family that indexes
// entries only (Responses' input[N]), the entry.
func imageIndex(r *sent.Request, im opencode.Image) string {
	if r.Kind != sent.Anthropic && r.Kind != sent.Bedrock {
		return r.Index(im.N, im.M)
	}
	if im.Nested < 0 {
		return idx(im.N, im.M)
	}
	return fmt.Sprintf("%s.content.%d", idx(im.N, im.M), im.Nested)
}

// imageErrorPath is the path the API's error prints: the image block, or
// the image inside a tool result's content, named through the tool_result
// ("messages.N.content.M.tool_result.content.K", as users quote the live
// API).
func imageErrorPath(im opencode.Image) string {
	if im.Nested < 0 {
		return idx(im.N, im.M)
	}
	return fmt.Sprintf("%s.tool_result.content.%d", idx(im.N, im.M), im.Nested)
}

func imageWhat(im opencode.Image) string {
	if im.Tool {
		return "an image a tool returned"
	}
	return "an image the user attached"
}

// checkImages checks the images of a request against its provider
// family's limits (opencode.ImageLimitOf: Anthropic, OpenCode Console,
// Claude on Bedrock, OpenAI): the number of images, each image's base64
// size, data that is no image, and each side (for Anthropic 8000 px, 2000
// px in a request of more than 20 images). Headers are read from a prefix
// of the base64; no image is decoded whole. files are the request's files
// (opencode.RequestFiles), asked for only where documents count.
func checkImages(s *store.Session, r *sent.Request, files func() []opencode.File) []Violation {
	lim, ok := opencode.ImageLimitOf(r)
	lim, ok = opencode.WithStoredCount(s, lim, ok)
	if !ok {
		return nil
	}
	ims := opencode.RequestImages(s, r)
	if len(ims) == 0 {
		return nil
	}
	var out []Violation
	// Over CountWarn a warning (the model's limit is not known), over
	// CountMax an error. Where the limit counts documents too, the images
	// after the documents' share are the ones over it.
	docs := 0
	if lim.Documents {
		docs = opencode.Documents(files())
	}
	media := len(ims) + docs
	limit, sev, note := lim.CountWarn, Warning, " of a model with a 200k-token context window (models with a larger window take 600)"
	switch {
	case lim.CountWarn == lim.CountMax:
		sev, note = Error, ""
	case media > lim.CountMax:
		limit, sev, note = lim.CountMax, Error, ""
	}
	if limit > 0 && media > limit {
		im := ims[max(0, min(limit-docs, len(ims)-1))]
		what := fmt.Sprintf("%d images", len(ims))
		if docs > 0 {
			what += fmt.Sprintf(" and %d documents", docs)
		}
		v := Violation{
			Code: SF172, N: im.N, M: -1, Index: r.Index(im.N, -1), MessageID: im.MessageID, PartID: im.PartID, Severity: sev, Fix: "markToolCompacted",
			Message:       fmt.Sprintf("the request sends %s, over %s's limit of %d%s; this is the first image over it", what, lim.CountProvider(), limit, note),
			ProviderError: lim.CountText(len(ims), docs, limit),
		}
		out = append(out, v)
	}
	if share := lim.Share(ims); share > 0 {
		total := opencode.TotalBytes(ims)
		for _, im := range ims {
			if n := opencode.DecodedLen(im.Data); n > share {
				out = append(out, Violation{Code: SF176, N: im.N, M: im.M, Index: imageIndex(r, im), MessageID: im.MessageID, PartID: im.PartID, Fix: "shrinkImage",
					Message: fmt.Sprintf("the request's %d images hold %d bytes, over %s's limit of %d bytes of images a request; %s is %d bytes, over its even share of %d",
						len(ims), total, lim.Provider, lim.TotalBytesMax, imageWhat(im), n, share)})
			}
		}
	}
	side := lim.Side(len(ims))
	many := lim.ManyImages > 0 && len(ims) > lim.ManyImages
	for _, im := range ims {
		base := Violation{N: im.N, M: im.M, Index: imageIndex(r, im), MessageID: im.MessageID, PartID: im.PartID}
		if n := len(im.Data); lim.Over(im.Data) {
			v := base
			v.Code, v.Fix = SF170, "shrinkImage"
			if lim.KnownText() {
				v.ProviderError = lim.Prefix + fmt.Sprintf("%s.%s: image exceeds %s maximum: %d bytes > %d bytes", imageErrorPath(im), lim.Path, lim.SizeText(), n, lim.Base64Max)
				v.Message = fmt.Sprintf("%s is %d bytes of base64, over %s's %s limit", imageWhat(im), n, lim.Provider, lim.SizeText())
			} else {
				v.Message = fmt.Sprintf("%s is %d bytes (%d of base64), over %s's limit of %d bytes an image", imageWhat(im), opencode.DecodedLen(im.Data), n, lim.Provider, lim.BytesMax)
			}
			out = append(out, v)
		}
		w, h, ok, known := opencode.ImageHeader(im.Data)
		switch {
		case !ok && opencode.SupportedImage(im.Mime):
			if lim.InvalidText == "" {
				continue // the provider's answer to data that is no image is not known
			}
			v := base
			v.Code, v.Fix, v.ProviderError = SF173, "replaceMedia", lim.Prefix+lim.InvalidText
			v.Message = imageWhat(im) + " holds data that " + opencode.NoImageData(im.Data)
			if im.Data == "" {
				v.Message = imageWhat(im) + " holds no data (a file of 0 bytes)"
				if lim.KnownText() {
					v.ProviderError = lim.Prefix + imageErrorPath(im) + "." + lim.Path + ": " + opencode.TextEmptyImage
				}
			}
			out = append(out, v)
		case known && side > 0 && (w > side || h > side):
			v := base
			v.Code, v.Fix = SF171, "shrinkImage"
			if many {
				v.ProviderError = lim.Prefix + imageErrorPath(im) + "." + lim.Path + fmt.Sprintf(".data: At least one of the image dimensions exceed max allowed size for many-image requests: %d pixels", side)
				v.Message = fmt.Sprintf("%s is %d×%d px, over %s's %d px limit of a request with more than %d images (it has %d)", imageWhat(im), w, h, lim.Provider, side, lim.ManyImages, len(ims))
			} else {
				v.ProviderError = lim.Prefix + imageErrorPath(im) + "." + lim.Path + fmt.Sprintf(".data: At least one of the image dimensions exceed max allowed size: %d pixels", side)
				v.Message = fmt.Sprintf("%s is %d×%d px, over %s's %d px limit", imageWhat(im), w, h, lim.Provider, side)
			}
			out = append(out, v)
		}
	}
	return out
}

package opencode

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // header decoder for image.DecodeConfig
	"image/jpeg"  // and its header decoder for image.DecodeConfig
	"image/png"   // and its header decoder for image.DecodeConfig
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// FindPart returns the stored part, or nil.
func FindPart(s *store.Session, msgID, partID string) *store.Part {
	if s == nil {
		return nil
	}
	return partOf(s.Message(msgID), partID)
}

// partFinder returns FindPart for many lookups in one session: the
// messages are found through a map made on first use, where FindPart
// searches them from the start each time (once per block of a request
// would be quadratic in the session's length).
func partFinder(s *store.Session) func(msgID, partID string) *store.Part {
	var byID map[string]*store.Message
	return func(msgID, partID string) *store.Part {
		if s == nil {
			return nil
		}
		if byID == nil {
			byID = make(map[string]*store.Message, len(s.Messages))
			for _, m := range s.Messages {
				if _, dup := byID[m.ID]; !dup {
					byID[m.ID] = m // the first, as Session.Message finds it
				}
			}
		}
		return partOf(byID[msgID], partID)
	}
}

// partOf returns the part of m (nil: none) with the id, or nil.
func partOf(m *store.Message, partID string) *store.Part {
	if m == nil {
		return nil
	}
	for _, p := range m.Parts {
		if p.ID == partID {
			return p
		}
	}
	return nil
}

// The media limits of Anthropic's Messages API (docs/preflight.md says
// where each comes from and which are not verified).
const (
	// AnthropicImageBase64Max is the limit on an image's base64 string,
	// as the API's error prints it ("5895160 bytes > 5242880 bytes").
	AnthropicImageBase64Max = 5 << 20
	AnthropicImageSideMax   = 8000
	// Over ManyImages images in a request, each side is at most
	// ManyImagesSideMax.
	ManyImages        = 20
	ManyImagesSideMax = 2000
	// AnthropicImagesMax is the number of images a request may hold for
	// a model with a 200k-token context window; the others take up to
	// AnthropicLargeImagesMax. sessfix has no context sizes, so between
	// the two it warns. OpenCode Console (provider "opencode") answers
	// over ConsoleImagesMax.
	AnthropicImagesMax      = 100
	AnthropicLargeImagesMax = 600
	ConsoleImagesMax        = 50
	// headerPrefix is how much base64 is decoded to read an image's
	// header: enough for a JPEG's EXIF segments before its frame header.
	headerPrefix = 128 << 10
)

// headerBufs hold the decoded prefixes ImageHeader reads.
var headerBufs = sync.Pool{New: func() any {
	b := make([]byte, base64.StdEncoding.DecodedLen(headerPrefix))
	return &b
}}

// Image is one image a request sends: where it is in the request and
// in the store, and its base64 data (a slice of the stored JSON, never
// copied or decoded whole).
type Image struct {
	N, M              int // the provider message and block
	Nested            int // the image's place inside a tool result, -1 for a user file
	MessageID, PartID string
	Data              string
	Mime              string
	Tool              bool
}

// DataImages returns the base64 payloads of the images a part holds: a
// user's file part's data: URL, or the image attachments (data: URLs) of a
// tool part's state.
func DataImages(p *store.Part) []string {
	if p.Get("type").String() == "file" {
		if data, ok := Base64Data(p.Get("url").String()); ok {
			return []string{data}
		}
		return nil
	}
	var out []string
	for _, a := range p.Get("state.attachments").Array() {
		if data, ok := Base64Data(a.Get("url").String()); ok && strings.HasPrefix(a.Get("mime").String(), "image/") {
			out = append(out, data)
		}
	}
	return out
}

// SupportedImage reports the image types Anthropic takes; data under
// another image type gets another error, not checked here.
func SupportedImage(mime string) bool {
	switch strings.ToLower(mime) {
	case "image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp":
		return true
	}
	return false
}

// RequestImages lists the images of an Anthropic request in order: user
// file parts with an image mime type and a data: URL, and the image
// attachments of the tool results. OpenCode 1.18.33 (read from its
// binary) sends a completed tool's attachments inside its tool_result for
// @ai-sdk/anthropic, as content after the text output, and none once the
// result is compacted (state.time.compacted).
func RequestImages(s *store.Session, r *sent.Request) []Image {
	var out []Image
	findPart := partFinder(s)
	for n, pm := range r.Messages {
		for m, b := range pm.Blocks {
			switch b.Type {
			case "image":
				p := findPart(b.MessageID, b.PartID)
				if p == nil {
					continue
				}
				if data, ok := Base64Data(p.Get("url").String()); ok {
					out = append(out, Image{N: n, M: m, Nested: -1, MessageID: b.MessageID, PartID: b.PartID, Data: data, Mime: p.Get("mime").String()})
				}
			case "tool_result":
				p := findPart(b.MessageID, b.PartID)
				if p == nil {
					continue
				}
				atts := p.Get("state.attachments")
				if !atts.IsArray() || p.Get("state.status").String() != "completed" || p.Get("state.time.compacted").Exists() {
					continue
				}
				// The result's content is its text output (when not empty),
				// then each attachment with a data: URL, images and PDFs.
				k := 0
				if p.Get("state.output").String() != "" {
					k++
				}
				for _, a := range atts.Array() {
					mime, url := a.Get("mime").String(), a.Get("url").String()
					if !strings.HasPrefix(url, "data:") || !strings.Contains(url, ",") {
						continue
					}
					if data, ok := Base64Data(url); ok && strings.HasPrefix(mime, "image/") {
						out = append(out, Image{N: n, M: m, Nested: k, MessageID: b.MessageID, PartID: b.PartID, Data: data, Mime: mime, Tool: true})
					}
					k++
				}
			}
		}
	}
	return out
}

// ImageLimit is one provider family's limits on the images of a request:
// what the preflight checks (SF170–SF172) and what shrinkImage and
// replaceMedia bring an image within. A zero limit is one sessfix does not
// check (not documented, or the provider's pages disagree). docs/preflight.md
// says where each comes from.
type ImageLimit struct {
	// Provider names the API in findings.
	Provider string
	// Base64Max is the most base64 one image may have: Anthropic's limit
	// (also Claude's on Bedrock) is on the base64 string. BytesMax is a
	// limit on the image's bytes instead (OpenAI's 20 MB).
	Base64Max, BytesMax int
	// SideMax is the longest side an image may have; over ManyImages
	// images in the request it is ManySideMax.
	SideMax, ManyImages, ManySideMax int
	// Over CountMax images the request is refused; over CountWarn it may
	// be (the limit depends on the model's window, which sessfix may not
	// know).
	CountWarn, CountMax int
	// TotalBytesMax is the most bytes all the images of a request may have
	// together (OpenAI's 50 MB); 0 for no such limit.
	TotalBytesMax int
	// Documents is set when the count limit is on images and documents
	// together (the Messages API's "too many images and documents: 104 + 1
	// > 100"); OpenCode Console's counts images only.
	Documents bool
	// Path is the field of an image block the provider's error names
	// ("image.source.base64", Bedrock's "image.source.bytes"); Prefix is
	// what the provider puts before its model's error. Both are "" when
	// the provider's text is not known: the findings then carry no
	// provider_error.
	Path, Prefix string
	// InvalidText is the provider's answer (after Prefix) to image data
	// that is no image of the four types it takes; "" when not known.
	InvalidText string
	// console marks a request through OpenCode Console (OpenCode Zen,
	// provider "opencode"), which counts the images itself and answers
	// over ConsoleImagesMax in its own words, whatever the model.
	console bool
	// stored is the provider's own too-many-images text that gave the
	// count limit (WithStoredCount); CountText answers it.
	stored string
}

// WithStoredCount is l with the image count limit the provider's stored
// refusal printed, for a family whose count limit sessfix does not know
// (ok false, or no CountMax: the OpenAI-compatible servers users run, such
// as vLLM, Gemini, Azure) or whose known limits are above the printed one
// (Claude on Bedrock, which refused over 20 in 2025 where the Messages API
// takes 100): when the session's last attempt failed for too many images
// and its text says the limit (ImageCountLimit), that limit counts, from
// then on, in the words of that text. ok reports whether l has any limit
// to check.
func WithStoredCount(s *store.Session, l ImageLimit, ok bool) (ImageLimit, bool) {
	if s == nil {
		return l, ok
	}
	m := LastFailedWith(s, ErrorTooManyImages)
	if m == nil {
		return l, ok
	}
	text := m.Get("error.data.message").String()
	n, found := ImageCountLimit(text)
	if !found || (ok && l.CountMax > 0 && n >= l.CountWarn) {
		return l, ok
	}
	if !ok {
		l = ImageLimit{Provider: "the provider"}
	}
	l.CountWarn, l.CountMax, l.Documents, l.stored = n, n, CountsDocuments(text), text
	return l, true
}

// The families' image limits.
var (
	// AnthropicImageLimit is the Messages API's (Anthropic's vision guide
	// and users' reports of its errors).
	AnthropicImageLimit = ImageLimit{Provider: "Anthropic", Base64Max: AnthropicImageBase64Max,
		SideMax: AnthropicImageSideMax, ManyImages: ManyImages, ManySideMax: ManyImagesSideMax,
		CountWarn: AnthropicImagesMax, CountMax: AnthropicLargeImagesMax, Documents: true, Path: "image.source.base64",
		InvalidText: TextInvalidImage}
	// ConsoleImageLimit is OpenCode Console's (provider "opencode"): the
	// Anthropic limits, and 50 images.
	ConsoleImageLimit = func() ImageLimit {
		l := consoleCount(AnthropicImageLimit)
		l.Provider = "OpenCode Console"
		return l
	}()
	// ZenImageLimit is OpenCode Console's for a Zen model sessfix has no
	// family for (Grok, muse-spark, Qwen, MiniMax, ...): its 50 images,
	// which users met on such a model (anomalyco/opencode#47487, muse-spark
	// through Zen Go's /responses: "Error from provider (Console Go):
	// Upstream request failed: [invalid_request_error] request contains 51
	// images, exceeding the maximum of 50 allowed per request"), and no
	// other limit: the API behind each model has its own, not checked.
	ZenImageLimit = consoleCount(ImageLimit{Provider: "OpenCode Console"})
	// BedrockClaudeImageLimit is Bedrock Converse's with an Anthropic
	// model: Bedrock hands the request to the model, which answers with
	// the Anthropic limits, the image named by its bytes field, after
	// "The model returned the following errors: " (users' reports,
	// aws/aws-sdk-js-v3#6785 and
	// aws-solutions-library-samples/accelerated-intelligent-document-processing-on-aws#778).
	BedrockClaudeImageLimit = func() ImageLimit {
		l := AnthropicImageLimit
		l.Provider, l.Path, l.Prefix = "Bedrock (Claude)", "image.source.bytes", "The model returned the following errors: "
		return l
	}()
	// OpenAIImageLimit is the OpenAI API's (its "Images and vision" guide,
	// "Image input requirements": up to 20 MB per image, up to 500 images
	// per request; images are scaled by the API, no side limit). OpenAI
	// documents no error text for them; its answer to data that is no
	// image is known from users' reports (TextOpenAIInvalidImage).
	OpenAIImageLimit = ImageLimit{Provider: "OpenAI", BytesMax: OpenAIImageBytesMax,
		CountWarn: OpenAIImagesMax, CountMax: OpenAIImagesMax, TotalBytesMax: OpenAIImageTotalBytesMax,
		InvalidText: TextOpenAIInvalidImage}
	// GeminiImageLimit is the Gemini API's answer to data that is no
	// image, and no size or count limit (see ImageLimitOf).
	GeminiImageLimit = ImageLimit{Provider: "Gemini", InvalidText: TextGeminiInvalidImage}
)

// consoleCount is l behind OpenCode Console: Console's count of images
// (images only, at most ConsoleImagesMax, its own text) and l's other
// limits, still named by l's provider.
func consoleCount(l ImageLimit) ImageLimit {
	l.CountWarn, l.CountMax, l.Documents, l.console = ConsoleImagesMax, ConsoleImagesMax, false, true
	return l
}

// CountProvider names whose limit the count of images is.
func (l ImageLimit) CountProvider() string {
	if l.console {
		return "OpenCode Console"
	}
	return l.Provider
}

// SizeLimitOf is the image limit a request's images are shrunk within and
// judged repaired by: the family's (ImageLimitOf), or Anthropic's, the
// strictest sessfix knows, for a family whose size it does not check.
func SizeLimitOf(r *sent.Request) ImageLimit {
	if l, ok := ImageLimitOf(r); ok && (l.Base64Max > 0 || l.BytesMax > 0) {
		return l
	}
	return AnthropicImageLimit
}

// TextInvalidImage is the Messages API's answer to an image block whose
// data is not a JPEG, PNG, GIF or WebP image (also Claude's on Bedrock and
// OpenCode Console's, which pass it on).
const TextInvalidImage = "The image data you provided does not represent a valid image. Please check your input and try again with one of the supported image formats: ['image/jpeg', 'image/png', 'image/gif', 'image/webp']."

// TextEmptyImage is the Messages API's answer to an image block with no
// data, after its path ("messages.57.content.2.image.source.base64: "), as
// users quote it (anthropics/claude-code#36712: a screenshot pasted before
// it was written to disk, 2026-03).
const TextEmptyImage = "image cannot be empty"

// TextOpenAIInvalidImage is OpenAI's answer to an image whose data is not
// a PNG, JPEG, GIF or WebP image (400 invalid_request_error, code
// invalid_image_format, no param), as users quote it from 2025 on
// (CosmosShadow/gptpdf#6 quotes an older wording that also names the
// 20 MB limit: "Please make sure your image is below 20 MB in size and is
// of one the following formats: …", code sanitizer_server_error). Both are
// recognised (DetectErrorType); the typo "has of one" is OpenAI's.
const TextOpenAIInvalidImage = "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp']."

// TextGeminiInvalidImage is the Gemini API's answer to inline image data
// that is no image (400 INVALID_ARGUMENT), as users quote it and as
// applications built on the API test for it (a truncated PNG, a PDF sent
// as an image; AmberSahdev/Open-Interface#64).
const TextGeminiInvalidImage = "Provided image is not valid"

// OpenAI's documented limits ("Images and vision", "Image input
// requirements"): 20 MB per image, 500 images per request, 50 MB of image
// bytes per request (each MB taken as 1,000,000 bytes, the smaller
// reading).
const (
	OpenAIImageBytesMax      = 20_000_000
	OpenAIImagesMax          = 500
	OpenAIImageTotalBytesMax = 50_000_000
)

// TotalBytes is the bytes the images hold together (read from their base64
// length and padding, none decoded).
func TotalBytes(ims []Image) int {
	n := 0
	for _, im := range ims {
		n += DecodedLen(im.Data)
	}
	return n
}

// Share is the most bytes each of the request's images may keep when
// together they are over TotalBytesMax: the limit divided evenly, so that
// images shrunk to it, and the ones already under it, fit together. It is
// 0 when the images are within the limit (or there is none).
func (l ImageLimit) Share(ims []Image) int {
	if l.TotalBytesMax <= 0 || len(ims) == 0 || TotalBytes(ims) <= l.TotalBytesMax {
		return 0
	}
	return l.TotalBytesMax / len(ims)
}

// DecodedLen is the number of bytes the padded base64 data decodes to,
// read from its length and padding without decoding it.
func DecodedLen(data string) int {
	n := len(data) / 4 * 3
	for i := len(data) - 1; i >= 0 && i >= len(data)-2 && data[i] == '='; i-- {
		n--
	}
	return n
}

// Over reports whether base64 data is over the limit's size (on its
// base64 or on its bytes).
func (l ImageLimit) Over(data string) bool {
	return l.Base64Max > 0 && len(data) > l.Base64Max || l.BytesMax > 0 && DecodedLen(data) > l.BytesMax
}

// base64Max is the most base64 an image may have to be within the limit
// whatever its padding: what a repair shrinks to.
func (l ImageLimit) base64Max() int {
	if l.BytesMax > 0 && (l.Base64Max == 0 || l.BytesMax/3*4 < l.Base64Max) {
		return l.BytesMax / 3 * 4
	}
	return l.Base64Max
}

// ImageLimitOf returns the image limits of the request's provider family,
// and false for a family whose limits sessfix does not check: Bedrock with
// a model other than Claude (the Converse reference and the user guide
// disagree), Azure and the OpenAI-compatible Chat Completions providers
// (each has its own). Gemini's is its answer to data that is no image
// only (GeminiImageLimit): Google documents a limit on the whole request
// that differs between its pages and its errors. A request to OpenCode Zen
// (provider "opencode") also has Console's count of images, whatever the
// model's family: every model there has a limit (ZenImageLimit at least).
func ImageLimitOf(r *sent.Request) (ImageLimit, bool) {
	if r.ProviderID == "opencode" {
		// OpenCode Zen: Console counts the images of every model's
		// request; each family's own limits apply as well.
		switch r.Kind {
		case sent.Anthropic:
			return ConsoleImageLimit, true
		case sent.Responses:
			// Zen's GPT models are OpenAI's behind Zen's proxy: OpenAI's
			// limits, not Azure's.
			return consoleCount(OpenAIImageLimit), true
		case sent.Google:
			return consoleCount(GeminiImageLimit), true
		}
		return ZenImageLimit, true
	}
	switch r.Kind {
	case sent.Anthropic:
		return AnthropicImageLimit, true
	case sent.Bedrock:
		m := strings.ToLower(r.ModelID)
		if strings.Contains(m, "anthropic.") || strings.Contains(m, "claude") {
			return BedrockClaudeImageLimit, true
		}
	case sent.Responses:
		if r.ProviderID == "openai" {
			return OpenAIImageLimit, true
		}
	case sent.Google:
		return GeminiImageLimit, true
	}
	return ImageLimit{}, false
}

// CountText is the provider's error for a request of images and docs
// documents over limit: the Messages API's "too many images and documents:
// 104 + 1 > 100" (users' reports of the live API, anthropics/claude-code#23392,
// #24541, kirodotdev/Kiro#8700; also Claude's through Bedrock), OpenCode
// Console's "request contains 52 images, exceeding the maximum of 50
// allowed per request"; after the provider's prefix. "" when the texts
// are not known.
func (l ImageLimit) CountText(images, docs, limit int) string {
	switch {
	case l.stored != "":
		return l.stored
	case l.console:
		return l.Prefix + fmt.Sprintf("request contains %d images, exceeding the maximum of %d allowed per request", images, limit)
	case !l.KnownText():
		return ""
	case l.Documents:
		return l.Prefix + fmt.Sprintf("too many images and documents: %d + %d > %d", images, docs, limit)
	}
	return l.Prefix + fmt.Sprintf("request contains %d images, exceeding the maximum of %d allowed per request", images, limit)
}

// CountedMedia is what an image-count error's text counts in a request:
// the images of r, and its documents too when the text counts them
// (CountsDocuments, then withDocs).
func CountedMedia(s *store.Session, r *sent.Request, text string) (n int, withDocs bool) {
	n = len(RequestImages(s, r))
	if CountsDocuments(text) {
		return n + RequestDocuments(s, r), true
	}
	return n, false
}

// RequestDocuments is the number of documents (files other than images,
// such as PDFs) an Anthropic request sends as base64: what the Messages
// API counts with the images.
func RequestDocuments(s *store.Session, r *sent.Request) int {
	return Documents(RequestFiles(s, r))
}

// Documents is the number of files other than images among a request's
// files (RequestFiles).
func Documents(files []File) int {
	n := 0
	for _, f := range files {
		if !strings.HasPrefix(f.Mime, "image/") {
			n++
		}
	}
	return n
}

// KnownText reports whether the provider's error texts for these limits
// are known (Path is set), so findings can carry a provider_error.
func (l ImageLimit) KnownText() bool { return l.Path != "" }

// SizeText is the size limit as the provider's error prints it ("5 MB").
func (l ImageLimit) SizeText() string {
	return fmt.Sprintf("%d MB", l.Base64Max>>20)
}

// Side is the longest side an image may have in a request of count
// images; 0 when no side limit applies.
func (l ImageLimit) Side(count int) int {
	if l.ManyImages > 0 && count > l.ManyImages {
		return l.ManySideMax
	}
	return l.SideMax
}

// noSide stands for "no side limit" where a side must be given.
const noSide = 1 << 30

// ImageLimits are the limits each image of the session's next request must
// meet on its provider family: its base64 size (when the images are over
// the family's limit on all of them, OpenAI's 50 MB, at most an even share
// of it), and its longest side (for Anthropic 8000 px, 2000 px when the
// request holds more than 20 images).
// They are what shrinkImage scales an image within. A family whose limits
// sessfix does not check gets Anthropic's, the strictest it knows.
func ImageLimits(s *store.Session) (maxBase64, maxSide int) {
	r := sent.Build(s, sent.Options{NextPrompt: true})
	l := SizeLimitOf(r)
	ims := RequestImages(s, r)
	side := l.Side(len(ims))
	if side == 0 {
		side = noSide
	}
	maxBase64 = l.base64Max()
	if share := l.Share(ims); share > 0 && share/3*4 < maxBase64 {
		maxBase64 = share / 3 * 4
	}
	return maxBase64, side
}

// Base64Data returns the base64 payload of a data: URL.
func Base64Data(url string) (string, bool) {
	if !strings.HasPrefix(url, "data:") {
		return "", false
	}
	i := strings.IndexByte(url, ',')
	if i < 0 || !strings.HasSuffix(url[:i], ";base64") {
		return "", false
	}
	return url[i+1:], true
}

// decodes counts the images decoded in the process: headers read by
// ImageHeader, whole images by DecodeImage.
var decodes struct{ headers, images atomic.Int64 }

// ImageDecodes reports how many image headers (ImageHeader) and whole
// images (DecodeImage) the process has decoded so far. A scan reads the
// header of each image the next request sends and decodes none; a repair
// decodes the images it shrinks, one at a time. Tests read the counts to
// prove it.
func ImageDecodes() (headers, images int64) {
	return decodes.headers.Load(), decodes.images.Load()
}

// DecodeImage decodes a whole image, with the decoders linked into the
// program (PNG, JPEG and GIF here; WebP where golang.org/x/image/webp is
// imported). It is the one place sessfix decodes an image's pixels.
func DecodeImage(raw []byte) (image.Image, string, error) {
	decodes.images.Add(1)
	return image.Decode(bytes.NewReader(raw))
}

// ImageHeader reads an image's format and size from its base64 data:
// the start of it, and further only when the header goes on past that (a
// JPEG's metadata). ok is false when the data is not base64, does not
// start like an image of a supported type (PNG, JPEG, GIF, WebP), or does
// start like one but its header does not decode (a file cut short, or
// damaged: what every provider refuses as no image); known is false when
// the header is that of a variant sessfix's decoders do not read (a
// lossless JPEG), or of a WebP image cut short.
func ImageHeader(data string) (w, h int, ok, known bool) {
	decodes.headers.Add(1)
	pre := data
	if len(pre) > headerPrefix {
		pre = pre[:headerPrefix]
	}
	// The prefix is decoded into a buffer of the pool: a scan reads the
	// header of every image it sends, and would otherwise allocate 96 KiB
	// for each.
	bp := headerBufs.Get().(*[]byte)
	defer headerBufs.Put(bp)
	// Decode only reads its source: the string's bytes are read in place,
	// not copied.
	n, err := base64.StdEncoding.Decode(*bp, unsafe.Slice(unsafe.StringData(pre), len(pre)))
	if err != nil {
		return 0, 0, false, false
	}
	buf := (*bp)[:n]
	if w, h, isWebP := webpSize(buf); isWebP {
		return w, h, true, w > 0
	}
	if signature(buf) == "" {
		return 0, 0, false, false
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(buf))
	if errors.Is(err, io.ErrUnexpectedEOF) && len(data) > len(pre) {
		// The header goes on past the prefix: read on, through the
		// data, as far as it goes (rare: a JPEG's frame header after
		// more than 96 KiB of metadata). Data the decoder refused for
		// what it holds is not read again.
		cfg, _, err = image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	}
	switch {
	case err == nil:
		return cfg.Width, cfg.Height, true, true
	case unsupportedVariant(err):
		return 0, 0, true, false
	}
	return 0, 0, false, false
}

// unsupportedVariant reports whether a header decoder's error says the
// image is of a variant it does not read, not that the data is no image.
// (Its own function: the error targets escape, and ImageHeader, called
// for every image a scan sees, allocates nothing when the header decodes.)
func unsupportedVariant(err error) bool {
	var pngVariant png.UnsupportedError
	var jpegVariant jpeg.UnsupportedError
	return errors.As(err, &pngVariant) || errors.As(err, &jpegVariant)
}

// NoImageData says what image data ImageHeader does not take for an image
// is: "is not a PNG, JPEG, GIF or WebP image", or, when it starts like
// one, "starts like a PNG image but its header does not decode (cut short
// or damaged)". SF173's finding ("holds data that …") and the placeholder
// that replaces the image ("its data …") both say it.
func NoImageData(data string) string {
	raw, err := base64.StdEncoding.DecodeString(data[:min(len(data), 16)/4*4])
	if err == nil {
		if sig := signature(raw); sig != "" {
			return "starts like a " + sig + " image but its header does not decode (cut short or damaged)"
		}
	}
	return "is not a PNG, JPEG, GIF or WebP image"
}

// signature names the image type raw bytes start like, or "".
func signature(raw []byte) string {
	switch {
	case bytes.HasPrefix(raw, []byte("\x89PNG\r\n\x1a\n")):
		return "PNG"
	case bytes.HasPrefix(raw, []byte("\xff\xd8\xff")):
		return "JPEG"
	case bytes.HasPrefix(raw, []byte("GIF87a")), bytes.HasPrefix(raw, []byte("GIF89a")):
		return "GIF"
	case len(raw) >= 12 && string(raw[:4]) == "RIFF" && string(raw[8:12]) == "WEBP":
		return "WebP"
	}
	return ""
}

// webpSize reads a WebP image's size from its RIFF header (VP8, VP8L or
// VP8X chunk); isWebP is false for anything else, w is 0 when the header
// is cut short.
func webpSize(b []byte) (w, h int, isWebP bool) {
	if len(b) < 16 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0, 0, false
	}
	switch string(b[12:16]) {
	case "VP8X":
		if len(b) >= 30 {
			w = 1 + (int(b[24]) | int(b[25])<<8 | int(b[26])<<16)
			h = 1 + (int(b[27]) | int(b[28])<<8 | int(b[29])<<16)
		}
	case "VP8L":
		if len(b) >= 25 {
			v := binary.LittleEndian.Uint32(b[21:25])
			w, h = 1+int(v&0x3fff), 1+int(v>>14&0x3fff)
		}
	case "VP8 ":
		if len(b) >= 30 {
			w = int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff)
			h = int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff)
		}
	}
	return w, h, true
}

// maxImagesRe reads the limit from a too-many-images error: OpenCode
// Console's "maximum of 50 allowed", and the Messages API's "too many images
// and documents: 120 + 0 > 100" and "Too much media: 0 document pages + 107
// images > 100" (users' reports, anthropics/claude-code#24541); and the
// texts of OpenAI-compatible servers users run OpenCode against, as users
// quote them: vLLM's "At most 5 image(s) may be provided in one request."
// (vllm-project/vllm#17092), "Too many images in request: 11 images
// provided, but the model supports a maximum of 10 images."
// (microsoft/vscode#306919, #303825), "Too many images in request. Max is
// 10." (the-open-agent/openagent#874), "too many images in the message,
// max allowed is 16" (QuantumNous/new-api#1233), "Image count 5 exceeds
// limit 4 per request." (AgnesAI-Labs/AgnesCode#50, group 6); and Gemini's
// "Please use fewer than 3600 images in your request to models/…"
// (linyqh/NarratoAI#33, group 5: one less than it prints). Group 2 is the
// only one that counts documents.
var maxImagesRe = regexp.MustCompile(`maximum of (\d+) allowed|(?i:too many images and documents|too much media):[^>]*> (\d+)` +
	`|(?i:at most (\d+) image\(s\) may be provided)|(?i:too many images.*?(?:supports a maximum of|max is|max allowed is) (\d+))` +
	`|(?i:use fewer than (\d+) images in your request)|(?i:image count \d+ exceeds limit (\d+))`)

// CountsDocuments reports whether a too-many-images error counts
// documents with the images (the Messages API's "too many images and
// documents: 104 + 1 > 100", "Too much media: 0 document pages + 107
// images > 100").
func CountsDocuments(text string) bool {
	m := maxImagesRe.FindStringSubmatch(text)
	return m != nil && m[2] != ""
}

// ImageCountLimit reads the limit a too-many-images error prints ("request
// contains 101 images, exceeding the maximum of 100 allowed per request").
// Gemini's "Please use fewer than 3600 images in your request" allows one
// less than it prints.
func ImageCountLimit(text string) (int, bool) {
	m := maxImagesRe.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	if m[5] != "" {
		n, err := strconv.Atoi(m[5])
		return n - 1, err == nil && n > 0
	}
	n, err := strconv.Atoi(m[1] + m[2] + m[3] + m[4] + m[6]) // one matched
	return n, err == nil
}

// MediaRemovedMark starts the text sessfix puts in place of media it
// removed from a session (MediaPlaceholder): how a later check tells a
// history repaired so from one that never held the media.
const MediaRemovedMark = "[sessfix removed "

// MediaMovedMark starts the text sessfix puts in place of media it moved
// out of an oversized part into its backup run.
const MediaMovedMark = "[sessfix moved "

// MediaRejected says why an Anthropic request cannot send the media of a
// data: URL typed mime ("" when it can, or when it is not base64 media):
// PDF data that is not a PDF, image data that is not an image of a
// supported type, or an image over
// maxBase64 bytes of base64 or over side px on a side. overLimit is true
// for the two limits, which a shrink may meet: the data is an image.
func MediaRejected(url, mime string, maxBase64, side int) (why string, overLimit bool) {
	data, ok := Base64Data(url)
	if ok && IsPDF(mime) && NotPDF(data) {
		return "its data is not a PDF", false
	}
	if !ok || !strings.HasPrefix(strings.ToLower(mime), "image/") {
		return "", false
	}
	w, h, ok, known := ImageHeader(data)
	switch {
	case !ok && SupportedImage(mime):
		return "its data " + NoImageData(data), false
	case !ok:
		return "", false
	case len(data) > maxBase64:
		return fmt.Sprintf("its %d bytes of base64 are over the provider's limit of %d", len(data), maxBase64), true
	case known && (w > side || h > side):
		return fmt.Sprintf("it is %d×%d px, over the provider's limit of %d px", w, h, side), true
	}
	return "", false
}

// MediaPlaceholder is the text that takes the place of removed media:
// "[sessfix removed the image shot.png (image/png, 1.2 MB): why; the
// original is in sessfix's backup]".
func MediaPlaceholder(filename, mime, url, why string) string {
	kind := "the file"
	if strings.HasPrefix(strings.ToLower(mime), "image/") {
		kind = "the image"
	}
	if filename != "" {
		kind += " " + filename
	}
	size := ""
	if data, ok := Base64Data(url); ok {
		size = ", " + byteSize(base64.StdEncoding.DecodedLen(len(data))-strings.Count(data[max(0, len(data)-2):], "="))
	}
	if mime == "" {
		mime = "no type"
	}
	return fmt.Sprintf("%s%s (%s%s): %s; the original is in sessfix's backup]", MediaRemovedMark, kind, mime, size, why)
}

// byteSize prints a size in bytes, KB or MB (decimal, one digit).
func byteSize(n int) string {
	switch {
	case n >= 1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d bytes", n)
}

// AnthropicRequestMax is the Messages API's request size limit, 32 MB
// (Anthropic's error and PDF support pages); a request over it is refused
// with 413 request_too_large before it reaches the API.
const AnthropicRequestMax = 32 << 20

// File is one file an Anthropic request sends as base64: a user's file
// part (an image or document block), or an attachment of a completed tool
// result that is not compacted. Attachment is its index in the tool part's
// state.attachments, -1 for a file part.
type File struct {
	N, M              int
	MessageID, PartID string
	Attachment        int
	Mime              string
	Base64            int
	// Data is the base64 itself.
	Data string
}

// RequestFiles lists the files of an Anthropic request, in order.
func RequestFiles(s *store.Session, r *sent.Request) []File {
	var out []File
	findPart := partFinder(s)
	for n, pm := range r.Messages {
		for m, b := range pm.Blocks {
			if b.Type != "image" && b.Type != "document" && b.Type != "tool_result" {
				continue
			}
			p := findPart(b.MessageID, b.PartID)
			if p == nil {
				continue
			}
			switch b.Type {
			case "image", "document":
				if data, ok := Base64Data(p.Get("url").String()); ok {
					out = append(out, File{N: n, M: m, MessageID: b.MessageID, PartID: b.PartID, Attachment: -1, Mime: p.Get("mime").String(), Base64: len(data), Data: data})
				}
			case "tool_result":
				if p.Get("state.status").String() != "completed" || p.Get("state.time.compacted").Exists() {
					continue
				}
				for i, a := range p.Get("state.attachments").Array() {
					if data, ok := Base64Data(a.Get("url").String()); ok {
						out = append(out, File{N: n, M: m, MessageID: b.MessageID, PartID: b.PartID, Attachment: i, Mime: a.Get("mime").String(), Base64: len(data), Data: data})
					}
				}
			}
		}
	}
	return out
}

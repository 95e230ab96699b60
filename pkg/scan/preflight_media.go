package scan

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image"
	_ "image/gif"  // header decoder for image.DecodeConfig
	_ "image/jpeg" // header decoder for image.DecodeConfig
	_ "image/png"  // header decoder for image.DecodeConfig
	"strings"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// The media limits of Anthropic's Messages API (docs/preflight.md says
// where each comes from and which are not verified).
const (
	// anthropicImageBase64Max is the limit on an image's base64 string,
	// as the API's error prints it ("5895160 bytes > 5242880 bytes").
	anthropicImageBase64Max = 5 << 20
	anthropicImageSideMax   = 8000
	// Over manyImages images in a request, each side is at most
	// manyImagesSideMax.
	manyImages        = 20
	manyImagesSideMax = 2000
	// anthropicImagesMax is the number of images a request may hold for
	// a model with a 200k-token context window; the others take up to
	// anthropicLargeImagesMax. sessfix has no context sizes, so between
	// the two it warns. OpenCode Console (provider "opencode") answers
	// over consoleImagesMax.
	anthropicImagesMax      = 100
	anthropicLargeImagesMax = 600
	consoleImagesMax        = 50
	// headerPrefix is how much base64 is decoded to read an image's
	// header: enough for a JPEG's EXIF segments before its frame header.
	headerPrefix = 128 << 10
)

const textInvalidImage = "The image data you provided does not represent a valid image. Please check your input and try again with one of the supported image formats: ['image/jpeg', 'image/png', 'image/gif', 'image/webp']."

// mediaImage is one image a request sends: where it is in the request and
// in the store, and its base64 data (a slice of the stored JSON, never
// copied or decoded whole).
type mediaImage struct {
	n, m              int
	nested            int // the image's place inside a tool result, -1 for a user file
	messageID, partID string
	data              string
	mime              string
	tool              bool
}

// supportedImage reports the image types Anthropic takes; data under
// another image type gets another error, not checked here.
func supportedImage(mime string) bool {
	switch strings.ToLower(mime) {
	case "image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp":
		return true
	}
	return false
}

// requestImages lists the images of an Anthropic request in order: user
// file parts with an image mime type and a data: URL, and the image
// attachments of the tool results. OpenCode 1.18.33 (read from its
// binary) sends a completed tool's attachments inside its tool_result for
// @ai-sdk/anthropic, as content after the text output, and none once the
// result is compacted (state.time.compacted).
func requestImages(s *store.Session, r *sent.Request) []mediaImage {
	var out []mediaImage
	for n, pm := range r.Messages {
		for m, b := range pm.Blocks {
			switch b.Type {
			case "image":
				p := findPart(s, b.MessageID, b.PartID)
				if p == nil {
					continue
				}
				if data, ok := base64Data(p.Get("url").String()); ok {
					out = append(out, mediaImage{n: n, m: m, nested: -1, messageID: b.MessageID, partID: b.PartID, data: data, mime: p.Get("mime").String()})
				}
			case "tool_result":
				p := findPart(s, b.MessageID, b.PartID)
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
					if data, ok := base64Data(url); ok && strings.HasPrefix(mime, "image/") {
						out = append(out, mediaImage{n: n, m: m, nested: k, messageID: b.MessageID, partID: b.PartID, data: data, mime: mime, tool: true})
					}
					k++
				}
			}
		}
	}
	return out
}

// Base64Data returns the base64 payload of a data: URL.
func Base64Data(url string) (string, bool) { return base64Data(url) }

// ImageLimits are the limits each image of the session's next request must
// meet on an Anthropic provider: its base64 size, and its longest side
// (8000 px, 2000 px when the request holds more than 20 images). They are
// what shrinkImage scales an image within.
func ImageLimits(s *store.Session) (maxBase64, maxSide int) {
	r := sent.Build(s, sent.Options{NextPrompt: true})
	if len(requestImages(s, r)) > manyImages {
		return anthropicImageBase64Max, manyImagesSideMax
	}
	return anthropicImageBase64Max, anthropicImageSideMax
}

// dataImages returns the base64 payloads of the images a part holds: a
// user's file part's data: URL, or the image attachments (data: URLs) of a
// tool part's state.
func dataImages(p *store.Part) []string {
	if p.Get("type").String() == "file" {
		if data, ok := base64Data(p.Get("url").String()); ok {
			return []string{data}
		}
		return nil
	}
	var out []string
	for _, a := range p.Get("state.attachments").Array() {
		if data, ok := base64Data(a.Get("url").String()); ok && strings.HasPrefix(a.Get("mime").String(), "image/") {
			out = append(out, data)
		}
	}
	return out
}

// base64Data returns the base64 payload of a data: URL.
func base64Data(url string) (string, bool) {
	if !strings.HasPrefix(url, "data:") {
		return "", false
	}
	i := strings.IndexByte(url, ',')
	if i < 0 || !strings.HasSuffix(url[:i], ";base64") {
		return "", false
	}
	return url[i+1:], true
}

// imageHeader reads an image's format and size from the start of its
// base64 data only. ok is false when the data is not an image of a
// supported type (PNG, JPEG, GIF, WebP) or not base64; known is false
// when the header was read but holds no size within the prefix.
func imageHeader(data string) (w, h int, ok, known bool) {
	pre := data
	if len(pre) > headerPrefix {
		pre = pre[:headerPrefix]
	}
	buf, err := base64.StdEncoding.DecodeString(pre)
	if err != nil {
		return 0, 0, false, false
	}
	if w, h, isWebP := webpSize(buf); isWebP {
		return w, h, true, w > 0
	}
	switch {
	case bytes.HasPrefix(buf, []byte("\x89PNG\r\n\x1a\n")), bytes.HasPrefix(buf, []byte("\xff\xd8\xff")),
		bytes.HasPrefix(buf, []byte("GIF87a")), bytes.HasPrefix(buf, []byte("GIF89a")):
	default:
		return 0, 0, false, false
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(buf))
	if err != nil {
		return 0, 0, true, false
	}
	return cfg.Width, cfg.Height, true, true
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

// mediaIndex is where the provider's error points: the image block, or
// the image inside a tool result's content.
func (im mediaImage) index() string {
	if im.nested < 0 {
		return idx(im.n, im.m)
	}
	return fmt.Sprintf("%s.content.%d", idx(im.n, im.m), im.nested)
}

// errorPath is the path the API's error prints: the image block, or the
// image inside a tool result's content, named through the tool_result
// ("messages.N.content.M.tool_result.content.K", as users quote the live
// API).
func (im mediaImage) errorPath() string {
	if im.nested < 0 {
		return idx(im.n, im.m)
	}
	return fmt.Sprintf("%s.tool_result.content.%d", idx(im.n, im.m), im.nested)
}

func (im mediaImage) what() string {
	if im.tool {
		return "an image a tool returned"
	}
	return "an image the user attached"
}

// checkImages checks the images of an Anthropic request against the
// API's limits: the number of images, each image's base64 size, data that
// is no image, and each side (8000 px, 2000 px in a request of more than
// 20 images). Headers are read from a prefix of the base64; no image is
// decoded whole.
func checkImages(s *store.Session, r *sent.Request) []Violation {
	ims := requestImages(s, r)
	if len(ims) == 0 {
		return nil
	}
	var out []Violation
	limit, sev, note := anthropicImagesMax, Warning, " of a model with a 200k-token context window (models with a larger window take 600)"
	switch {
	case r.ProviderID == "opencode":
		limit, sev, note = consoleImagesMax, Error, ""
	case len(ims) > anthropicLargeImagesMax:
		limit, sev, note = anthropicLargeImagesMax, Error, ""
	}
	if len(ims) > limit {
		im := ims[limit]
		out = append(out, Violation{
			Code: "SF172", N: im.n, M: -1, Index: idx(im.n, -1), MessageID: im.messageID, PartID: im.partID, Severity: sev,
			ProviderError: fmt.Sprintf("request contains %d images, exceeding the maximum of %d allowed per request", len(ims), limit),
			Message:       fmt.Sprintf("the request sends %d images, over the limit of %d%s; this is the first image over it", len(ims), limit, note),
		})
	}
	side, many := anthropicImageSideMax, len(ims) > manyImages
	if many {
		side = manyImagesSideMax
	}
	for _, im := range ims {
		base := Violation{N: im.n, M: im.m, Index: im.index(), MessageID: im.messageID, PartID: im.partID}
		if n := len(im.data); n > anthropicImageBase64Max {
			v := base
			v.Code, v.Fix = "SF170", "shrinkImage"
			v.ProviderError = fmt.Sprintf("%s.image.source.base64: image exceeds 5 MB maximum: %d bytes > %d bytes", im.errorPath(), n, anthropicImageBase64Max)
			v.Message = fmt.Sprintf("%s is %d bytes of base64, over the 5 MB limit", im.what(), n)
			out = append(out, v)
		}
		w, h, ok, known := imageHeader(im.data)
		switch {
		case !ok && supportedImage(im.mime):
			v := base
			v.Code, v.ProviderError = "SF173", textInvalidImage
			v.Message = im.what() + " holds data that is not a PNG, JPEG, GIF or WebP image"
			out = append(out, v)
		case known && (w > side || h > side):
			v := base
			v.Code, v.Fix = "SF171", "shrinkImage"
			if many {
				v.ProviderError = im.errorPath() + ".image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"
				v.Message = fmt.Sprintf("%s is %d×%d px, over the 2000 px limit of a request with more than 20 images (it has %d)", im.what(), w, h, len(ims))
			} else {
				v.ProviderError = im.errorPath() + ".image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels"
				v.Message = fmt.Sprintf("%s is %d×%d px, over the 8000 px limit", im.what(), w, h)
			}
			out = append(out, v)
		}
	}
	return out
}

// ShrinkCauses returns the findings of fs that a stored image error (text,
// of type image_too_large or image_dimensions, pointing at partID when
// known) is about and that shrinkImage repairs: the preflight's SF170 and
// SF171 findings on a user's pasted image or a tool result's image.
func ShrinkCauses(fs []Finding, text, partID string) []Finding {
	var out []Finding
	for _, f := range ErrorCauses(fs, text) {
		if f.Fix == "shrinkImage" && (partID == "" || f.PartID == partID) {
			out = append(out, f)
		}
	}
	return out
}

// imageWithinLimits names how the stored images an image error points at
// show the repair ("" when they do not): a user's file part, or every
// image attachment of a tool part, whose base64 and sides are within the
// limits now, which the error said they were not.
func (r *Recovery) imageWithinLimits(s *store.Session) string {
	if (r.Type != ErrorImageTooLarge && r.Type != ErrorImageDimensions) || r.PartID == "" {
		return ""
	}
	p := findPart(s, r.TargetID, r.PartID)
	if p == nil {
		return ""
	}
	images := dataImages(p)
	if len(images) == 0 {
		return ""
	}
	side := anthropicImageSideMax
	if strings.Contains(r.Text, "many-image") {
		side = manyImagesSideMax
	}
	for _, data := range images {
		if len(data) > anthropicImageBase64Max {
			return ""
		}
		if w, h, ok, known := imageHeader(data); !ok || !known || w > side || h > side {
			return ""
		}
	}
	if len(images) > 1 {
		return "those images are within the limits now (shrunk since)"
	}
	return "that image is within the limits now (shrunk since)"
}

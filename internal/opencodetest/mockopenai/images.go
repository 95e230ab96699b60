package mockopenai

import (
	"encoding/json"
	"fmt"
	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
	"net/http"
	"strings"
)

// OpenAI's documented image limits ("Images and vision", "Image input
// requirements"): 20 MB an image, 50 MB of image bytes a request (each MB
// taken as 1,000,000 bytes, the smaller reading). OpenAI documents no
// error text for them: the texts below are the mock's own stand-ins, so a
// test can see the request refused; sessfix must not (and does not)
// recognise them.
const (
	ImageBytesMax      = 20_000_000
	ImageTotalBytesMax = 50_000_000
)

// MsgImageTooLarge is the mock's stand-in text for an image over
// ImageBytesMax (not OpenAI's: it documents none).
func MsgImageTooLarge(at string, n int) string {
	return fmt.Sprintf("Invalid '%s': the image is %d bytes, over the limit of %d bytes an image. (mock stand-in text)", at, n, ImageBytesMax)
}

// MsgImagesTooLarge is the mock's stand-in text for a request whose images
// are over ImageTotalBytesMax together (not OpenAI's: it documents none).
func MsgImagesTooLarge(n, total int) string {
	return fmt.Sprintf("Invalid 'input': the request's %d images are %d bytes, over the limit of %d bytes of images a request. (mock stand-in text)", n, total, ImageTotalBytesMax)
}

// MsgInvalidImage is OpenAI's answer to an image whose data is not a PNG,
// JPEG, GIF or WebP image (400 invalid_request_error, code
// invalid_image_format, param null), as users quote it from 2025 on
// (OBSERVED.md names the reports); the typo "has of one" is OpenAI's.
const MsgInvalidImage = "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp']."

// RequestImage is one image a Responses request sends: where (input[N]
// and the content path inside it), its base64 data, and whether it is in
// a function call's output.
type RequestImage struct {
	Path string
	Data string
	Tool bool
}

// Images lists the request's input_image items with base64 data: a
// message's content, and a function_call_output's output when it is a
// list (how media in tool results are sent), in order. A nil request has
// none.
func (r *ResponsesRequest) Images() []RequestImage {
	if r == nil {
		return nil
	}
	var out []RequestImage
	for n, it := range r.Input {
		raw, tool, field := it.Content, false, "content"
		if it.Kind() == "function_call_output" {
			raw, tool, field = it.Output, true, "output"
		}
		var items []struct {
			Type     string `json:"type"`
			ImageURL string `json:"image_url"`
		}
		if json.Unmarshal(raw, &items) != nil {
			continue
		}
		for k, c := range items {
			if c.Type != "input_image" || !strings.HasPrefix(c.ImageURL, "data:") {
				continue
			}
			if _, data, ok := strings.Cut(c.ImageURL, ";base64,"); ok {
				out = append(out, RequestImage{Path: fmt.Sprintf("input[%d].%s[%d].image_url", n, field, k), Data: data, Tool: tool})
			}
		}
	}
	return out
}

// DecodedLen is the bytes padded base64 decodes to (read from its length
// and padding, nothing decoded).
func DecodedLen(data string) int {
	n := len(data) / 4 * 3
	for i := len(data) - 1; i >= 0 && i >= len(data)-2 && data[i] == '='; i-- {
		n--
	}
	return n
}

// checkImages applies OpenAI's limits on images: each image (its format,
// then its size), then all of them together.
func checkImages(r *ResponsesRequest) *APIError {
	ims := r.Images()
	total := 0
	for _, im := range ims {
		if _, ok := mockstream.ImageConfig(im.Data); !ok {
			return &APIError{Dialect: OpenAI, Status: http.StatusBadRequest, Type: "invalid_request_error", Message: MsgInvalidImage, Code: str("invalid_image_format")}
		}
		n := DecodedLen(im.Data)
		if n > ImageBytesMax {
			return invalid(OpenAI, str(im.Path), "%s", MsgImageTooLarge(im.Path, n))
		}
		total += n
	}
	if total > ImageTotalBytesMax {
		return invalid(OpenAI, str("input"), "%s", MsgImagesTooLarge(len(ims), total))
	}
	return nil
}

// MsgTooManyImagesVLLM is vLLM's answer to a Chat Completions request with
// more images than the server takes (its --limit-mm-per-prompt), as users
// quote it (vllm-project/vllm#17092, Visual-Agent/DeepEyes#109).
func MsgTooManyImagesVLLM(limit int) string {
	return fmt.Sprintf("At most %d image(s) may be provided in one request.", limit)
}

// MsgTooManyImagesConsole is OpenCode Console's answer to a request with
// more images than it takes, as users quote it (anomalyco/opencode#47721,
// #47487).
func MsgTooManyImagesConsole(images, limit int) string {
	return fmt.Sprintf("request contains %d images, exceeding the maximum of %d allowed per request", images, limit)
}

// Images counts the image_url parts of a Chat Completions request's
// messages (OpenCode 1.18.33 sends a tool result's images in a user
// message after the tool messages, "Attached media from tool result:").
// A nil request has none.
func (r *ChatRequest) Images() int {
	if r == nil {
		return 0
	}
	n := 0
	for _, m := range r.Messages {
		var items []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Content, &items) != nil {
			continue
		}
		for _, c := range items {
			if c.Type == "image_url" {
				n++
			}
		}
	}
	return n
}

package mockopenai

import (
	"io"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

// b64 is base64 of exactly n bytes (at least 100) that read as a PNG
// (mockstream.PNGOfSize): only the length and the image's header are
// judged.
func b64(n int) string { return mockstream.PNGOfSize(n) }

func userImages(sizes ...int) string {
	var parts []string
	for _, n := range sizes {
		parts = append(parts, `{"type":"input_image","image_url":"data:image/png;base64,`+b64(n)+`"}`)
	}
	return `{"role":"user","content":[{"type":"input_text","text":"look"},` + strings.Join(parts, ",") + `]}`
}

// OpenAI's documented limits, with the mock's stand-in texts: 20,000,000
// bytes an image, 50,000,000 bytes of images a request (exactly at each is
// accepted), a function call output's images counted.
func TestResponsesImageLimits(t *testing.T) {
	toolOut := func(n int) string {
		return `{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"read"},{"type":"input_image","image_url":"data:image/png;base64,` + b64(n) + `"}]}`
	}
	third := 50_000_000 / 3 // 16,666,666
	for _, c := range []struct {
		name, body, want string
	}{
		{"an image of 20,000,000 bytes", respBody(userImages(20_000_000)), ""},
		{"an image of 20,000,001 bytes", respBody(userImages(20_000_001)), MsgImageTooLarge("input[0].content[1].image_url", 20_000_001)},
		{"50,000,000 bytes of images", respBody(userImages(third, third, third+2)), ""},
		{"50,000,001 bytes of images", respBody(userImages(third, third, third+3)), MsgImagesTooLarge(3, 50_000_001)},
		{"a tool output's image counted", respBody(call("fc_1", "call_1"), toolOut(third+3), userImages(third, third)), MsgImagesTooLarge(3, 50_000_001)},
		// Data that is no image of the four types, in a message or a
		// tool output; the four types' signatures are taken.
		{"text named image/png", respBody(dataImage("image/png", "dGhpcyBpcyBub3QgYSBwaWN0dXJlCg==")), MsgInvalidImage},
		{"data that is not base64", respBody(dataImage("image/png", "not base64!")), MsgInvalidImage},
		{"a tool output's text as image", respBody(call("fc_1", "call_1"), strings.Replace(toolOut(100), "iVBORw0KGgoA", "dGhpcyBpcyBu", 1)), MsgInvalidImage},
		{"a JPEG", respBody(dataImage("image/jpeg", mockstream.TinyImage("image/jpeg"))), ""},
		{"a GIF", respBody(dataImage("image/gif", mockstream.TinyImage("image/gif"))), ""},
		{"a WebP", respBody(dataImage("image/webp", mockstream.TinyImage("image/webp"))), ""},
		// A PNG's signature and nothing an image is made of.
		{"a PNG's first bytes", respBody(dataImage("image/png", "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAA")), MsgInvalidImage},
	} {
		r, err := ParseResponses([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if e := (ResponsesValidator{}).Validate(r); e != nil {
			got = e.Message
			if got == MsgInvalidImage && (e.Code == nil || *e.Code != "invalid_image_format" || e.Param != nil || e.Status != 400) {
				t.Errorf("%s: the refusal's status, code or param differ from OpenAI's: %s", c.name, e.Body())
			}
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	r, _ := ParseResponses([]byte(respBody(call("fc_1", "call_1"), toolOut(100))))
	if ims := r.Images(); len(ims) != 1 || !ims[0].Tool || ims[0].Path != "input[1].output[1].image_url" {
		t.Errorf("a tool output's image: %+v", ims)
	}
}

// dataImage is a user message with one input_image of the data URL's type
// and base64.
func dataImage(mime, data string) string {
	return `{"role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","image_url":"data:` + mime + `;base64,` + data + `"}]}`
}

// A Responses request over MaxConsoleImages (a function call output's
// images counted with the user's) is refused with Console's text; one at
// the limit is answered.
func TestConsoleImageCount(t *testing.T) {
	s := New(Config{MaxConsoleImages: 2})
	defer s.Close()
	toolOut := `{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"read"},{"type":"input_image","image_url":"data:image/png;base64,` + b64(100) + `"}]}`
	if resp := post(t, s, OpenAI, "/responses", "sk-a", respBody(call("fc_1", "call_1"), toolOut, userImages(100))); resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("two images: %d %s", resp.StatusCode, b)
	}
	resp := post(t, s, OpenAI, "/responses", "sk-a", respBody(call("fc_1", "call_1"), toolOut, userImages(100, 100)))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), MsgTooManyImagesConsole(3, 2)) {
		t.Errorf("three images: %d %s", resp.StatusCode, b)
	}
	if got := MsgTooManyImagesConsole(52, 50); got != "request contains 52 images, exceeding the maximum of 50 allowed per request" {
		t.Errorf("Console's text: %q", got)
	}
}

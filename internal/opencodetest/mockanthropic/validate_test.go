package mockanthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	pngpkg "image/png"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/testpdf"
)

// sig signs thinking text with the default secret, as a JSON string.
func sig(text string) string {
	b, _ := json.Marshal(Sign(DefaultSecret, text))
	return string(b)
}

func think(text string) string {
	t, _ := json.Marshal(text)
	return fmt.Sprintf(`{"type":"thinking","thinking":%s,"signature":%s}`, t, sig(text))
}

const (
	user       = `{"role":"user","content":[{"type":"text","text":"hi"}]}`
	userTool   = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}`
	toolUse    = `{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"ls"}}`
	text       = `{"type":"text","text":"done"}`
	thinkingOn = `"thinking":{"type":"enabled","budget_tokens":1024},`
)

func body(thinking bool, msgs ...string) string {
	t := ""
	if thinking {
		t = thinkingOn
	}
	return `{"model":"claude-sonnet-4-5","max_tokens":2048,` + t + `"stream":true,"messages":[` + strings.Join(msgs, ",") + `]}`
}

func asst(blocks ...string) string {
	return `{"role":"assistant","content":[` + strings.Join(blocks, ",") + `]}`
}

func TestValidator(t *testing.T) {
	cases := []struct {
		name string
		body string
		want string // "" means accepted
	}{
		{"plain", body(true, user), ""},
		{"string content", body(false, `{"role":"user","content":"hello"}`), ""},

		{"empty content ok as final assistant", body(false, user, `{"role":"assistant","content":[]}`), ""},
		{"empty content", body(false, user, `{"role":"assistant","content":[]}`, user), MsgEmptyContent(1)},
		{"empty string content", body(false, `{"role":"user","content":""}`), MsgEmptyContent(0)},

		{"first message assistant", body(false, asst(text), user), TextFirstNotUser},
		{"first message assistant, thinking on", body(true, asst(think("a"), text), user), TextFirstNotUser},
		{"first role checked before text blocks", body(false, asst(`{"type":"text","text":""}`), user), TextFirstNotUser},
		{"consecutive user messages", body(false, user, user), ""},

		{"text non-empty", body(false, user, asst(text), user), ""},
		{"text empty", body(false, user, asst(`{"type":"text","text":""}`), user), TextEmptyTextBlock},
		{"text whitespace", body(false, user, asst(`{"type":"text","text":" \n"}`), user), TextWhitespaceTextBlock},

		{"tool loop starts with thinking", body(true, user, asst(think("let me look"), toolUse), userTool), ""},
		{"tool loop without thinking, thinking off", body(false, user, asst(toolUse), userTool), ""},
		{"tool loop without thinking", body(true, user, asst(toolUse), userTool), MsgExpectedThinking(1, "tool_use")},
		{"tool loop text first", body(true, user, asst(text, toolUse), userTool), MsgExpectedThinking(1, "text")},
		{"older turn without thinking is fine", body(true, user, asst(toolUse), userTool, asst(text), user), ""},

		{"thinking first", body(true, user, asst(think("a"), text), user), ""},
		{"thinking not first", body(true, user, asst(text, think("a"), toolUse), userTool), MsgThinkingNotFirst(1, "text")},
		{"thinking not first in older turn", body(true, user, asst(toolUse, think("a"), text), userTool, asst(text), user), MsgThinkingNotFirst(1, "tool_use")},

		{"signature valid", body(true, user, asst(think("abc"), text), user), ""},
		{"signature missing", body(true, user, asst(`{"type":"thinking","thinking":"abc"}`, text), user), MsgSignatureRequired(1, 0)},
		{"signature foreign", body(true, user, asst(`{"type":"thinking","thinking":"abc","signature":"RXFRQkNrWUlCeGdDS2tB"}`, text), user), MsgInvalidSignature(1, 0)},
		{"thinking text edited", body(true, user, asst(`{"type":"thinking","thinking":"abd","signature":`+sig("abc")+`}`, text), user), MsgInvalidSignature(1, 0)},
		{"redacted valid", body(true, user, asst(`{"type":"redacted_thinking","data":"`+RedactedData(DefaultSecret)+`"}`, text), user), ""},
		{"redacted forged", body(true, user, asst(`{"type":"redacted_thinking","data":"Zm9v"}`, text), user), "messages.1.content.0: " + TextInvalidRedacted},

		{"final block text", body(true, user, asst(think("a"), text), user), ""},
		{"final block thinking", body(true, user, asst(think("a")), user), MsgFinalBlockThinking(1)},

		{"thinking disabled, thinking in older turn", body(false, user, asst(think("a"), text), user), ""},
		{"thinking disabled, final assistant with thinking", body(false, user, asst(think("a"), text)), MsgThinkingDisabled(1, 0)},
		{"thinking enabled, final assistant with thinking", body(true, user, asst(think("a"), text)), ""},

		{"tool pairing ok", body(false, user, asst(toolUse), userTool), ""},
		{"tool_use without result", body(false, user, asst(toolUse), user), MsgToolUseWithoutResult(1, []string{"toolu_1"})},
		{"tool_use as last message", body(false, user, asst(toolUse)), MsgToolUseWithoutResult(1, []string{"toolu_1"})},
		{"tool_result without use", body(false, user, asst(text), userTool), MsgUnexpectedToolResult(2, 0, "toolu_1")},

		{"final assistant no trailing whitespace", body(false, user, asst(`{"type":"text","text":"Sure"}`)), ""},
		{"final assistant trailing whitespace", body(false, user, asst(`{"type":"text","text":"Sure "}`)), TextTrailingWhitespace},
		{"older assistant trailing whitespace is fine", body(false, user, asst(`{"type":"text","text":"Sure "}`), user), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if e := (Validator{}).Validate(r); e != nil {
				got = e.Message
				if e.Status != 400 || e.Type != "invalid_request_error" {
					t.Errorf("status/type = %d %s", e.Status, e.Type)
				}
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestRejectPrefill(t *testing.T) {
	r, _ := ParseRequest([]byte(body(false, user, asst(text))))
	e := (Validator{RejectPrefill: true}).Validate(r)
	if e == nil || e.Message != TextNoPrefill {
		t.Fatalf("got %v", e)
	}
}

func TestExactTexts(t *testing.T) {
	// The strings users report from the real API; see provider-rules.md.
	for got, want := range map[string]string{
		TextFirstNotUser:                               `messages: first message must use the "user" role`,
		MsgEmptyContent(3):                             "messages.3: all messages must have non-empty content except for the optional final assistant message",
		MsgExpectedThinking(1, "tool_use"):             "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
		MsgThinkingNotFirst(5, "text"):                 "messages.5.content.0: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `text`.",
		MsgSignatureRequired(1, 0):                     "messages.1.content.0.thinking.signature: Field required",
		MsgInvalidSignature(1, 0):                      "messages.1.content.0: Invalid `signature` in `thinking` block",
		MsgFinalBlockThinking(17):                      "messages.17: The final block in an assistant message cannot be `thinking`.",
		MsgThinkingDisabled(11, 0):                     "messages.11.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
		MsgToolUseWithoutResult(6, []string{"a", "b"}): "messages.6: `tool_use` ids were found without `tool_result` blocks immediately after: a, b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
		MsgUnexpectedToolResult(48, 1, "toolu_x"):      "messages.48.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
	} {
		if got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}

func TestErrorBody(t *testing.T) {
	e := invalid("%s", MsgEmptyContent(1))
	want := `{"error":{"message":"messages.1: all messages must have non-empty content except for the optional final assistant message","type":"invalid_request_error"},"type":"error"}`
	if string(e.Body()) != want {
		t.Fatalf("body %s", e.Body())
	}
}

// paddedPNG is n bytes of base64 (n ≥ 100, a multiple of 4 plus up to 3
// more "A"s) that decode to a small PNG followed by zero bytes: an image
// whose header the API reads, of any size.
func paddedPNG(t *testing.T, n int) string {
	t.Helper()
	var b bytes.Buffer
	if err := pngpkg.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	for b.Len()%3 != 0 {
		b.WriteByte(0)
	}
	data := base64.StdEncoding.EncodeToString(b.Bytes())
	return data + strings.Repeat("A", n-len(data))
}

// Data that is no image (text under an image/png type, or no base64) is
// rejected with the API's invalid-image text, which names no block; in a
// tool result too.
func TestInvalidImageData(t *testing.T) {
	for name, data := range map[string]string{
		"text":      base64.StdEncoding.EncodeToString([]byte("this is not a picture")),
		"no base64": "not base64!",
	} {
		img := `{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + data + `"}}]}`
		call := `{"role":"assistant","content":[` + toolUse + `]}`
		res := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"read"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + data + `"}}]}]}`
		for _, msgs := range [][]string{{img}, {user, call, res}} {
			r, err := ParseRequest([]byte(body(false, msgs...)))
			if err != nil {
				t.Fatal(err)
			}
			if e := (Validator{}).Validate(r); e == nil || e.Status != 400 || e.Type != "invalid_request_error" || e.Message != TextInvalidImage {
				t.Errorf("%s: got %v", name, e)
			}
		}
	}
	r, _ := ParseRequest([]byte(body(false, `{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+paddedPNG(t, 400)+`"}}]}`)))
	if e := (Validator{}).Validate(r); e != nil {
		t.Errorf("a PNG: %v", e)
	}
}

// An image with no data is named, with the API's own text for it
// (anthropics/claude-code#36712), pasted or in a tool result.
func TestEmptyImageData(t *testing.T) {
	img := `{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":""}}]}`
	call := `{"role":"assistant","content":[` + toolUse + `]}`
	res := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"read"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":""}}]}]}`
	for want, msgs := range map[string][]string{
		"messages.0.content.1.image.source.base64: image cannot be empty":                       {img},
		"messages.2.content.0.tool_result.content.1.image.source.base64: image cannot be empty": {user, call, res},
	} {
		r, err := ParseRequest([]byte(body(false, msgs...)))
		if err != nil {
			t.Fatal(err)
		}
		if e := (Validator{}).Validate(r); e == nil || e.Status != 400 || e.Message != want {
			t.Errorf("got %v, want %q", e, want)
		}
	}
}

// An image block over 5 MB of base64 is rejected with the API's text (400
// invalid_request_error); 5 MB exactly is accepted.
func TestImageOverFiveMB(t *testing.T) {
	img := func(n int) string {
		return `{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + paddedPNG(t, n) + `"}}]}`
	}
	r, err := ParseRequest([]byte(body(false, user, asst(text), img(ImageBase64Max+1))))
	if err != nil {
		t.Fatal(err)
	}
	e := Validator{}.Validate(r)
	if e == nil || e.Status != 400 || e.Type != "invalid_request_error" ||
		e.Message != "messages.2.content.1.image.source.base64: image exceeds 5 MB maximum: 5242881 bytes > 5242880 bytes" {
		t.Fatalf("got %v", e)
	}
	r, _ = ParseRequest([]byte(body(false, img(ImageBase64Max))))
	if e := (Validator{}).Validate(r); e != nil {
		t.Fatalf("5 MB exactly: %v", e)
	}
}

// An image over 5 MB inside a tool result (what the read tool of an image
// sends) is rejected with the API's path through the tool_result; 5 MB
// exactly is accepted, and a result whose content is a string is not
// looked into.
func TestToolResultImageOverFiveMB(t *testing.T) {
	call := `{"role":"assistant","content":[` + toolUse + `]}`
	result := func(n int) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"Image read successfully"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + paddedPNG(t, n) + `"}}]}]}`
	}
	r, err := ParseRequest([]byte(body(false, user, call, result(ImageBase64Max+1))))
	if err != nil {
		t.Fatal(err)
	}
	e := Validator{}.Validate(r)
	if e == nil || e.Status != 400 || e.Type != "invalid_request_error" ||
		e.Message != "messages.2.content.0.tool_result.content.1.image.source.base64: image exceeds 5 MB maximum: 5242881 bytes > 5242880 bytes" {
		t.Fatalf("got %v", e)
	}
	r, _ = ParseRequest([]byte(body(false, user, call, result(ImageBase64Max))))
	if e := (Validator{}).Validate(r); e != nil {
		t.Fatalf("5 MB exactly: %v", e)
	}
	str := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"` + strings.Repeat("A", ImageBase64Max+1) + `"}]}`
	r, _ = ParseRequest([]byte(body(false, user, call, str)))
	if e := (Validator{}).Validate(r); e != nil {
		t.Fatalf("a string result: %v", e)
	}
}

// The vision guide's limits: an image over 8000 px on a side, one over
// 2000 px in a request of more than 20 images (a tool result's counted
// too), and more than 100 images are each rejected; 8000 px, 2000 px among
// 20 images and 100 images are accepted.
func TestImageDimensionAndCountLimits(t *testing.T) {
	png := func(w, h int) string {
		var b bytes.Buffer
		if err := pngpkg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b.Bytes())
	}
	block := func(data string) string {
		return `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + data + `"}}`
	}
	user := func(blocks ...string) string {
		return `{"role":"user","content":[` + strings.Join(append([]string{`{"type":"text","text":"look"}`}, blocks...), ",") + `]}`
	}
	many := func(n int, last string) string {
		var bs []string
		for range n - 1 {
			bs = append(bs, block(png(8, 8)))
		}
		return user(append(bs, block(last))...)
	}
	call := `{"role":"assistant","content":[` + toolUse + `]}`
	pdfDoc := func(pages int, xrefStream bool) string {
		raw := testpdf.Write(testpdf.Options{Pages: pages, XRefStream: xrefStream})
		return `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + base64.StdEncoding.EncodeToString(raw) + `"}}`
	}
	doc := `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQK"}}`
	toolResult := func(data string) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"Image read successfully"},` + block(data) + `]}]}`
	}
	cases := []struct {
		name string
		msgs []string
		want string
	}{
		{"9000 px wide", []string{user(block(png(9000, 4)))}, "messages.0.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels"},
		{"8000 px wide", []string{user(block(png(8000, 4)))}, ""},
		{"a tool result's 8001 px", []string{user(), call, toolResult(png(4, 8001))}, "messages.2.content.0.tool_result.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels"},
		{"2100 px among 21", []string{many(20, png(8, 8)), call, toolResult(png(2100, 4))}, "messages.2.content.0.tool_result.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"},
		{"2100 px among 20", []string{many(19, png(8, 8)), call, toolResult(png(2100, 4))}, ""},
		{"101 images", []string{many(101, png(8, 8))}, "too many images and documents: 101 + 0 > 100"},
		{"100 images", []string{many(100, png(8, 8))}, ""},
		{"99 images and 2 documents", []string{many(99, png(8, 8)), call, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[` + doc + `]},` + doc + `]}`},
			"too many images and documents: 99 + 2 > 100"},
		{"98 images and 2 documents", []string{many(98, png(8, 8)), call, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[` + doc + `]},` + doc + `]}`}, ""},
		{"a text file as a PDF", []string{user(pdfDoc(3, false), `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"bm90ZXMK"}}`)},
			"messages.0.content.2.pdf.source.base64.data: The PDF specified was not valid."},
		{"101 pages of PDF", []string{user(pdfDoc(60, false), pdfDoc(41, true))}, "A maximum of 100 PDF pages may be provided."},
		{"100 pages of PDF, a tool's among them", []string{user(pdfDoc(60, false)), call, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[` + pdfDoc(40, true) + `]}]}`}, ""},
		{"101 pages of PDF, a tool's among them", []string{user(pdfDoc(60, false)), call, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[` + pdfDoc(41, true) + `]}]}`}, "A maximum of 100 PDF pages may be provided."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseRequest([]byte(body(false, c.msgs...)))
			if err != nil {
				t.Fatal(err)
			}
			e := Validator{}.Validate(r)
			got := ""
			if e != nil {
				got = e.Message
			}
			if got != c.want {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

// A tool_use id that is empty, or that an earlier tool_use of the request
// has (in the same message or an earlier one: the strict reading), is
// refused with the API's texts (anomalyco/opencode#1279).
func TestToolUseIDs(t *testing.T) {
	use := func(id string) string {
		return `{"type":"tool_use","id":"` + id + `","name":"bash","input":{}}`
	}
	res := func(id string) string {
		return `{"type":"tool_result","tool_use_id":"` + id + `","content":"ok"}`
	}
	for want, msgs := range map[string][]string{
		"messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'": {user,
			`{"role":"assistant","content":[` + use("") + `]}`, `{"role":"user","content":[` + res("") + `]}`},
		"messages.1.content.1: `tool_use` ids must be unique": {user,
			`{"role":"assistant","content":[` + use("toolu_1") + `,` + use("toolu_1") + `]}`, `{"role":"user","content":[` + res("toolu_1") + `,` + res("toolu_1") + `]}`},
		"messages.3.content.0: `tool_use` ids must be unique": {user,
			`{"role":"assistant","content":[` + use("functions_bash_0") + `]}`, `{"role":"user","content":[` + res("functions_bash_0") + `]}`,
			`{"role":"assistant","content":[` + use("functions_bash_0") + `]}`, `{"role":"user","content":[` + res("functions_bash_0") + `]}`},
	} {
		r, err := ParseRequest([]byte(body(false, msgs...)))
		if err != nil {
			t.Fatal(err)
		}
		if e := (Validator{}).Validate(r); e == nil || e.Status != 400 || e.Message != want {
			t.Errorf("got %v, want %q", e, want)
		}
	}
}

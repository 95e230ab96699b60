package mockbedrock

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
)

const claude = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

func text(s string) string { j, _ := json.Marshal(s); return `{"text":` + string(j) + `}` }

func reasoning(s string) string {
	j, _ := json.Marshal(s)
	return `{"reasoningContent":{"reasoningText":{"text":` + string(j) + `,"signature":"` + Sign(DefaultSecret, s) + `"}}}`
}

const (
	toolUse   = `{"toolUse":{"toolUseId":"tooluse_1","name":"bash","input":{"command":"ls"}}}`
	cache     = `{"cachePoint":{"type":"default"}}`
	thinkOn   = `"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":16000}},`
	toolsDecl = `"toolConfig":{"tools":[{"toolSpec":{"name":"bash","inputSchema":{"json":{"type":"object"}}}}]},`
)

func result(status string, content string) string {
	s := `{"toolResult":{"toolUseId":"tooluse_1","content":` + content
	if status != "" {
		s += `,"status":"` + status + `"`
	}
	return s + "}}"
}

// image is an image block whose source.bytes is n bytes of base64 (n a
// multiple of 4) of a PNG (mockstream.PNGOfSize: the size check reads the
// length, the image check the header).
func image(n int) string {
	return imageData(mockstream.PNGOfSize(n / 4 * 3))
}

// imageData is an image block whose source.bytes is data.
func imageData(data string) string {
	return `{"image":{"format":"png","source":{"bytes":"` + data + `"}}}`
}

func msg(role string, blocks ...string) string {
	return `{"role":"` + role + `","content":[` + strings.Join(blocks, ",") + `]}`
}

func body(thinking bool, msgs ...string) string {
	t := ""
	if thinking {
		t = thinkOn
	}
	return `{` + t + toolsDecl + `"messages":[` + strings.Join(msgs, ",") + `]}`
}

func TestValidator(t *testing.T) {
	hi := msg("user", text("hi"))
	okResult := msg("user", result("", `[{"text":"ok"}]`))
	cases := []struct {
		name  string
		model string
		body  string
		want  string
	}{
		{"plain", claude, body(true, hi), ""},
		{"starts with assistant", claude, body(false, msg("assistant", text("x")), hi), TextStartWithUser},
		{"no messages", claude, body(false), TextStartWithUser},
		{"two user messages", claude, body(false, hi, hi), TextAlternate},

		{"empty content", claude, body(false, hi, msg("assistant"), hi), MsgEmptyContent(1)},
		{"blank text", claude, body(false, hi, msg("assistant", text("")), hi), MsgBlankText(1, 0)},
		{"whitespace text", claude, body(false, hi, msg("assistant", text("ok"), text(" \n")), hi), MsgBlankText(1, 1)},
		{"blank user text", claude, body(false, msg("user", text("  "))), MsgBlankText(0, 0)},
		{"blank text after reasoning", claude, body(true, hi, msg("assistant", reasoning("r"), text(" ")), hi), MsgBlankText(1, 1)},

		{"tool loop with reasoning", claude, body(true, hi, msg("assistant", reasoning("plan"), toolUse), okResult), ""},
		{"error result with text", claude, body(true, hi, msg("assistant", reasoning("plan"), toolUse), msg("user", result("error", `[{"text":"failed"}]`))), ""},
		{"error result with blank text is accepted", claude, body(false, hi, msg("assistant", toolUse), msg("user", result("error", `[{"text":""}]`))), ""},
		{"error result without content", claude, body(false, hi, msg("assistant", toolUse), msg("user", result("error", `[]`))), MsgEmptyErrorResult(2, 0)},
		{"success result without content", claude, body(false, hi, msg("assistant", toolUse), msg("user", result("success", `[]`))), ""},
		{"tool blocks without toolConfig", claude, `{"messages":[` + hi + `,` + msg("assistant", toolUse) + `,` + okResult + `]}`, TextToolConfig},

		{"claude: tool loop without reasoning", claude, body(true, hi, msg("assistant", toolUse), okResult), mockanthropic.MsgExpectedThinking(1, "tool_use")},
		{"claude: reasoning edited", claude, body(true, hi, msg("assistant", `{"reasoningContent":{"reasoningText":{"text":"plan!","signature":"`+Sign(DefaultSecret, "plan")+`"}}}`, toolUse), okResult),
			mockanthropic.MsgInvalidSignature(1, 0)},
		{"claude: reasoning from another account", claude, body(true, hi, msg("assistant", `{"reasoningContent":{"reasoningText":{"text":"plan","signature":"`+Sign([]byte("other"), "plan")+`"}}}`, toolUse), okResult),
			mockanthropic.MsgInvalidSignature(1, 0)},
		{"claude: reasoning without signature", claude, body(true, hi, msg("assistant", `{"reasoningContent":{"reasoningText":{"text":"plan"}}}`, toolUse), okResult),
			mockanthropic.MsgSignatureRequired(1, 0)},
		{"claude: tool use without result", claude, body(false, hi, msg("assistant", toolUse), hi), mockanthropic.MsgToolUseWithoutResult(1, []string{"tooluse_1"})},
		{"claude: cache points are not blocks", claude, body(true, msg("user", text("hi"), cache), msg("assistant", reasoning("plan"), toolUse, cache), okResult), ""},
		{"nova: no Anthropic rules", "us.amazon.nova-pro-v1:0", body(true, hi, msg("assistant", toolUse), okResult), ""},

		{"claude: image of 5242880 bytes of base64", claude, body(false, msg("user", text("look"), image(5242880))), ""},
		{"claude: image of 5242884 bytes of base64", claude, body(false, msg("user", text("look"), image(5242884))),
			"The model returned the following errors: messages.0.content.1.image.source.bytes: image exceeds 5 MB maximum: 5242884 bytes > 5242880 bytes"},
		{"claude: tool result image over 5 MB", claude, body(false, hi, msg("assistant", toolUse), msg("user", result("", `[{"text":"read"},`+image(5242884)+`]`))),
			MsgClaudeImageTooLarge("messages.2.content.0.tool_result.content.1", 5242884)},
		{"nova: image size not checked", "us.amazon.nova-pro-v1:0", body(false, msg("user", text("look"), image(5242884))), ""},
		{"claude: data that is no image", claude, body(false, msg("user", text("look"), imageData("dGhpcyBpcyBub3QgYSBwaWN0dXJlCg=="))), MsgClaudeInvalidImage},
		{"claude: a PNG's first bytes", claude, body(false, msg("user", text("look"), imageData("iVBORw0KGgoAAAANAAAAAAAAAAAA"))), MsgClaudeInvalidImage},
		{"claude: an image with no data", claude, body(false, msg("user", text("look"), imageData(""))), MsgClaudeImageEmpty("messages.0.content.1")},
		{"claude: a tool result's image that is no image", claude, body(false, hi, msg("assistant", toolUse), msg("user", result("", `[{"text":"read"},`+imageData("dGV4dA==")+`]`))),
			MsgClaudeInvalidImage},
		{"nova: image data not checked", "us.amazon.nova-pro-v1:0", body(false, msg("user", text("look"), imageData("dGV4dA=="))), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseRequest(c.model, []byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if e := (Validator{}).Validate(r); e != nil {
				got = e.Message
				if e.Status != 400 || e.Type != "ValidationException" {
					t.Errorf("status/type = %d %s", e.Status, e.Type)
				}
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestExactTexts(t *testing.T) {
	// The strings users report from Bedrock; see provider-rules.md.
	for got, want := range map[string]string{
		MsgBlankText(11, 0):         "The text field in the ContentBlock object at messages.11.content.0 is blank. Add text to the text field, and try again.",
		MsgEmptyContent(355):        "The content field in the Message object at messages.355 is empty. Add a ContentBlock object to the content field and try again.",
		MsgEmptyErrorResult(4, 0):   "The content field at messages.4.content.0.toolResult cannot be empty when status value is error.",
		string(invalid("x").Body()): `{"message":"x"}`,
		invalid("x").Header():       "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/",
	} {
		if got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}

// Images lists a message's image blocks and a tool result's images, with
// the paths Claude's errors print, in order; a nil request has none.
func TestRequestImages(t *testing.T) {
	r, err := ParseRequest("anthropic.claude-sonnet-4-5-20250929-v1:0", []byte(body(false, msg("user", text("look"), image(200)), msg("assistant", toolUse),
		msg("user", result("", `[{"text":"read"},`+image(400)+`]`)))))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, im := range r.Images() {
		got = append(got, fmt.Sprintf("%s %d %v", im.Path, len(im.Data), im.Tool))
	}
	want := "messages.0.content.1 200 false|messages.2.content.0.tool_result.content.1 400 true"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("Images() = %s\nwant %s", g, want)
	}
	if ims := (*ConverseRequest)(nil).Images(); ims != nil {
		t.Errorf("a nil request has images: %v", ims)
	}
}

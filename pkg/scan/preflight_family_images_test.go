package scan

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// pngOfBase64Len is a valid 10×10 PNG padded after its end with zero bytes
// so that its base64 is exactly n bytes long (n a multiple of 4): the size
// limits are on that length, the header is all the scan reads.
func pngOfBase64Len(t testing.TB, n int) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(pngB64(t, 10, 10, false))
	if err != nil || n%4 != 0 || n/4*3 < len(raw) {
		t.Fatalf("cannot make a PNG of %d bytes of base64", n)
	}
	out := base64.StdEncoding.EncodeToString(append(raw, bytes.Repeat([]byte{0}, n/4*3-len(raw))...))
	if len(out) != n {
		t.Fatalf("base64 of %d bytes, want %d", len(out), n)
	}
	return out
}

// Each provider family's image limits (opencode.ImageLimitOf): Claude on
// Bedrock answers with Anthropic's limits and texts, the image named by
// its bytes field after Bedrock's prefix; OpenAI takes 20 MB of image and
// 500 images and scales any side (its error texts are not documented, so
// its findings carry none); the families whose limits are not checked get
// no finding. Boundaries: exactly at a limit is accepted, one base64
// quantum over it is not.
func TestPreflightImageLimitsPerFamily(t *testing.T) {
	const bedrock, claude = "amazon-bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0"
	small := pngB64(t, 10, 10, false)
	atLimit, overLimit := pngOfBase64Len(t, 5242880), pngOfBase64Len(t, 5242884)
	wide, huge := pngB64(t, 2100, 10, false), pngB64(t, 9000, 1, false)
	prefix := "The model returned the following errors: "
	type famCase struct {
		name string
		mf   mediaFixture
		want string // code@index severity: provider error (| message fragment)
	}
	cases := []famCase{
		{"bedrock claude: 5242880 bytes of base64 accepted", mediaFixture{provider: bedrock, model: claude, userImgs: []string{atLimit}}, ""},
		{"bedrock claude: 5242884 bytes of base64", mediaFixture{provider: bedrock, model: claude, userImgs: []string{overLimit}},
			"SF170@messages.0.content.1 error: " + prefix + "messages.0.content.1.image.source.bytes: image exceeds 5 MB maximum: 5242884 bytes > 5242880 bytes"},
		{"bedrock claude: read image over 2000 px among 21", mediaFixture{provider: bedrock, model: claude, userImgs: repeat(small, 20), toolImgs: []string{wide}},
			"SF171@messages.2.content.0.content.1 error: " + prefix + "messages.2.content.0.tool_result.content.1.image.source.bytes.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"},
		{"bedrock claude: image over 8000 px", mediaFixture{provider: bedrock, model: claude, userImgs: []string{huge}},
			"SF171@messages.0.content.1 error: " + prefix + "messages.0.content.1.image.source.bytes.data: At least one of the image dimensions exceed max allowed size: 8000 pixels"},
		{"bedrock claude: 101 images", mediaFixture{provider: bedrock, model: claude, userImgs: repeat(small, 101)},
			"SF172@messages.0 warning: " + prefix + "too many images and documents: 101 + 0 > 100"},
		{"bedrock nova: not checked", mediaFixture{provider: bedrock, model: "amazon.nova-pro-v1:0", userImgs: []string{overLimit, huge}}, ""},
		{"anthropic: 5242880 bytes of base64 accepted", mediaFixture{userImgs: []string{atLimit}}, ""},
		{"anthropic: 5242884 bytes of base64", mediaFixture{userImgs: []string{overLimit}},
			"SF170@messages.0.content.1 error: messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 5242884 bytes > 5242880 bytes"},
		{"openai: 5 MB and 9000 px accepted", mediaFixture{provider: "openai", model: "gpt-5", userImgs: []string{overLimit, huge}}, ""},
		{"openai: 500 images accepted", mediaFixture{provider: "openai", model: "gpt-5", userImgs: repeat(small, 500)}, ""},
		{"openai: 501 images", mediaFixture{provider: "openai", model: "gpt-5", userImgs: repeat(small, 501)},
			"SF172@input[1] error: | over OpenAI's limit of 500"},
		{"azure: not checked", mediaFixture{provider: "azure", model: "gpt-5", userImgs: repeat(small, 501)}, ""},
		{"gemini: not checked", mediaFixture{provider: "google", model: "gemini-2.5-pro", userImgs: []string{overLimit, huge}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range sizeFindings(t, store.ShapeSQLite, c.mf) {
				g := fmt.Sprintf("%s@%s %s: %s", f.Code, f.Index, f.Severity, f.ProviderError)
				if f.ProviderError == "" {
					g += "| " + f.Message
				} else if opencode.DetectErrorType(f.ProviderError) == opencode.ErrorNone || f.ErrorType == "" {
					t.Errorf("%s: the provider error is not classified", f.Code)
				}
				got = append(got, g)
			}
			g := strings.Join(got, "\n")
			if c.want == "" && g != "" || c.want != "" && !strings.HasPrefix(g, strings.SplitN(c.want, "| ", 2)[0]) || strings.Contains(c.want, "| ") && !strings.Contains(g, strings.SplitN(c.want, "| ", 2)[1]) {
				t.Errorf("got\n%s\nwant\n%s", g, c.want)
			}
		})
	}
}

// OpenAI's 20 MB are on the image's bytes: an image of exactly 20,000,000
// bytes is accepted, one of 20,000,001 is not (both are 26,666,668 bytes of
// base64; the padding tells them apart).
func TestPreflightOpenAIImageSize(t *testing.T) {
	over := pngOfBase64Len(t, 26666668) // 20,000,001 bytes
	at := over[:len(over)-4] + base64.StdEncoding.EncodeToString([]byte{0, 0})
	if opencode.DecodedLen(at) != 20_000_000 || opencode.DecodedLen(over) != 20_000_001 {
		t.Fatalf("decoded lengths %d, %d", opencode.DecodedLen(at), opencode.DecodedLen(over))
	}
	for _, c := range []struct {
		data string
		want bool
	}{{at, false}, {over, true}} {
		fs := sizeFindings(t, store.ShapeSQLite, mediaFixture{provider: "openai", model: "gpt-5", userImgs: []string{c.data}})
		ok := len(fs) == 0
		if c.want {
			ok = len(fs) == 1 && fs[0].Code == SF170 && fs[0].Fix == "shrinkImage" && fs[0].ProviderError == "" && fs[0].Index == "input[1]"
		}
		if !ok {
			t.Errorf("%d bytes: findings %+v", opencode.DecodedLen(c.data), fs)
		}
	}
}

// OpenAI's 50 MB of images a request are on the images' bytes together
// (SF176): three images of 50,000,000 bytes in all are accepted; one byte
// more is not, and each image over its even share (16,666,666 bytes) is
// reported, with no provider_error (OpenAI documents no text for it).
func TestPreflightOpenAIImageTotal(t *testing.T) {
	full := pngOfBase64Len(t, 22222224) // 16,666,668 bytes
	minus := func(n int) string {       // n bytes fewer, by the last quantum's padding
		return full[:len(full)-4] + base64.StdEncoding.EncodeToString(make([]byte, 3-n))
	}
	a, b := minus(1), minus(2) // 16,666,667 and 16,666,666 bytes
	for _, c := range []struct {
		name   string
		images []string
		want   []string // the parts SF176 reports
	}{
		{"50,000,000 bytes", []string{a, a, b}, nil},
		{"50,000,001 bytes", []string{b, full, a}, []string{userFilePart(2), userFilePart(3)}},
	} {
		var got []string
		for _, f := range sizeFindings(t, store.ShapeSQLite, mediaFixture{provider: "openai", model: "gpt-5", userImgs: c.images}) {
			if f.Code != SF176 || f.Fix != "shrinkImage" || f.ProviderError != "" || f.Index != "input[1]" || f.Severity != Error {
				t.Errorf("%s: %s %s %s %s %q", c.name, f.Code, f.Fix, f.Index, f.Severity, f.ProviderError)
			}
			got = append(got, f.PartID)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: SF176 on %v, want %v", c.name, got, c.want)
		}
	}
}

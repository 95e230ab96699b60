package opencode

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"runtime"
	"strings"
	"testing"
)

func encoded(t *testing.T, enc func(*bytes.Buffer, image.Image) error, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := enc(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withAPP1 puts an APP1 (EXIF) segment of n bytes before the rest of a
// JPEG's segments, as cameras and phones write them.
func withAPP1(jpg []byte, n int) []byte {
	seg := binary.BigEndian.AppendUint16([]byte{0xff, 0xe1}, uint16(n+2))
	seg = append(seg, make([]byte, n)...)
	return append(append(append([]byte{}, jpg[:2]...), seg...), jpg[2:]...)
}

// TestImageHeader: the size of each supported format is read from the
// start of the base64; a JPEG whose frame header lies past the prefix
// is an image of unknown size; data that is no image, or no base64, is
// not ok.
func TestImageHeader(t *testing.T) {
	pngEnc := func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }
	jpgEnc := func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) }
	gifEnc := func(b *bytes.Buffer, m image.Image) error { return gif.Encode(b, m, nil) }
	jpg := encoded(t, jpgEnc, 300, 200)
	far := jpg
	for range 3 { // three segments of 60,000 bytes: past the 128 KiB of base64 read
		far = withAPP1(far, 60000)
	}
	png9000, gif40 := encoded(t, pngEnc, 9000, 60), encoded(t, gifEnc, 40, 30)
	damaged := bytes.Clone(png9000)
	damaged[20]++ // the header's width, under its checksum
	lossless := bytes.Replace(jpg, []byte{0xff, 0xc0}, []byte{0xff, 0xc3}, 1)
	cases := []struct {
		name      string
		data      string
		w, h      int
		ok, known bool
	}{
		{"png", base64.StdEncoding.EncodeToString(png9000), 9000, 60, true, true},
		{"gif", base64.StdEncoding.EncodeToString(gif40), 40, 30, true, true},
		{"jpeg", base64.StdEncoding.EncodeToString(jpg), 300, 200, true, true},
		{"jpeg with metadata", base64.StdEncoding.EncodeToString(withAPP1(jpg, 60000)), 300, 200, true, true},
		// The header read on past the prefix, through the data.
		{"jpeg frame past the prefix", base64.StdEncoding.EncodeToString(far), 300, 200, true, true},
		// Data that starts like an image and whose header does not
		// decode: cut short (a file read before it was written
		// through), or damaged. Every provider refuses it.
		{"png cut short", base64.StdEncoding.EncodeToString(png9000[:20]), 0, 0, false, false},
		{"png signature only", base64.StdEncoding.EncodeToString(png9000[:8]), 0, 0, false, false},
		{"png header damaged", base64.StdEncoding.EncodeToString(damaged), 0, 0, false, false},
		{"gif cut short", base64.StdEncoding.EncodeToString(gif40[:8]), 0, 0, false, false},
		{"jpeg cut in its metadata", base64.StdEncoding.EncodeToString(far[:150000]), 0, 0, false, false},
		// A variant of the format the decoders do not read: an
		// image, its size unknown.
		{"lossless jpeg", base64.StdEncoding.EncodeToString(lossless), 0, 0, true, false},
		{"no image", base64.StdEncoding.EncodeToString([]byte("hello, this is text")), 0, 0, false, false},
		{"no base64", "!!!!" + base64.StdEncoding.EncodeToString(encoded(t, pngEnc, 10, 10)), 0, 0, false, false},
		{"empty", "", 0, 0, false, false},
	}
	for _, c := range cases {
		w, h, ok, known := ImageHeader(c.data)
		if w != c.w || h != c.h || ok != c.ok || known != c.known {
			t.Errorf("%s: %d×%d ok=%v known=%v, want %d×%d ok=%v known=%v", c.name, w, h, ok, known, c.w, c.h, c.ok, c.known)
		}
	}
}

// TestImageHeaderAllocatesNoPrefix: reading a header decodes the base64
// prefix into a reused buffer, so a scan reading the header of every
// image does not allocate 96 KiB for each. It counts bytes allocated, not
// time, and allows a buffer made again after a collection empties the
// pool.
func TestImageHeaderAllocatesNoPrefix(t *testing.T) {
	big := make([]byte, 300<<10)
	copy(big, encoded(t, func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }, 1600, 1200))
	data := base64.StdEncoding.EncodeToString(big)
	ImageHeader(data)
	const n = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if w, _, _, _ := ImageHeader(data); w != 1600 {
			t.Fatalf("width %d", w)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 16<<10 {
		t.Errorf("a header read allocates %d bytes, want under 16 KiB (the prefix is 96 KiB decoded)", per)
	}
}

// The limit is read from each too-many-images text sessfix recognises:
// OpenCode Console's, and the Messages API's own (users' reports,
// anthropics/claude-code#24541).
func TestImageCountLimitTexts(t *testing.T) {
	for text, want := range map[string]int{
		"request contains 52 images, exceeding the maximum of 50 allowed per request":                                            50,
		"too many images and documents: 120 + 0 > 100":                                                                           100,
		"Too much media: 0 document pages + 107 images > 100":                                                                    100,
		"The model returned the following errors: request contains 101 images, exceeding the maximum of 100 allowed per request": 100,
		"At most 5 image(s) may be provided in one request.":                                                                     5,
		"Too many images in request: 11 images provided, but the model supports a maximum of 10 images.":                         10,
		"The request contains too many images: 11 images were provided, but the model supports a maximum of 10 images.":          10,
		"error, status code: 400, message: Too many images in request. Max is 10.":                                               10,
		"500 too many images in the message, max allowed is 16":                                                                  16,
		// Gemini's generateContent (linyqh/NarratoAI#33, 2024): at most
		// one less than it prints.
		"400 Please use fewer than 3600 images in your request to models/gemini-1.5-flash": 3599,
		// An OpenAI-compatible server behind LiteLLM (AgnesAI-Labs/AgnesCode#50, 2026-07).
		`litellm.BadRequestError: OpenAIException - {"object":"error","message":"Image count 5 exceeds limit 4 per request.","type":"BadRequestError","param":null,"code":400}`: 4,
	} {
		if got, ok := ImageCountLimit(text); !ok || got != want {
			t.Errorf("%q: %d %v, want %d", text, got, ok, want)
		}
	}
	if _, ok := ImageCountLimit("prompt is too long: 215000 tokens > 200000 maximum"); ok {
		t.Error("a context error read as an image count")
	}
	for _, text := range []string{"At most 5 image(s) may be provided in one request.", "Too many images in request. Max is 10."} {
		if CountsDocuments(text) {
			t.Errorf("%q counts documents", text)
		}
	}
}

// DecodedLen reads an image's size from its base64 without decoding it:
// the padding tells 20,000,000 bytes from 20,000,001, both 26,666,668
// bytes of base64; OpenAI's limit is on those bytes.
func TestDecodedLenAndOpenAILimit(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 5, 20} {
		if got := DecodedLen(base64.StdEncoding.EncodeToString(make([]byte, n))); got != n {
			t.Errorf("DecodedLen of %d bytes = %d", n, got)
		}
	}
	at, over := base64.StdEncoding.EncodeToString(make([]byte, OpenAIImageBytesMax)), base64.StdEncoding.EncodeToString(make([]byte, OpenAIImageBytesMax+1))
	if len(at) != len(over) || OpenAIImageLimit.Over(at) || !OpenAIImageLimit.Over(over) {
		t.Errorf("OpenAI's 20 MB: %d and %d bytes of base64, over %v %v", len(at), len(over), OpenAIImageLimit.Over(at), OpenAIImageLimit.Over(over))
	}
	b := strings.Repeat("A", AnthropicImageBase64Max)
	if BedrockClaudeImageLimit.Over(b) || !BedrockClaudeImageLimit.Over(b+"AAAA") {
		t.Error("Claude on Bedrock: 5 MB of base64")
	}
}

// The count texts each family answers, and whether the limit counts
// documents: the Messages API's (also Claude's on Bedrock, after
// Bedrock's prefix) counts images and documents together, OpenCode
// Console's images only, OpenAI's is not known.
func TestImageCountTexts(t *testing.T) {
	for _, c := range []struct {
		lim  ImageLimit
		want string
	}{
		{AnthropicImageLimit, "too many images and documents: 99 + 2 > 100"},
		{BedrockClaudeImageLimit, "The model returned the following errors: too many images and documents: 99 + 2 > 100"},
		{ConsoleImageLimit, "request contains 99 images, exceeding the maximum of 100 allowed per request"},
		{OpenAIImageLimit, ""},
	} {
		got := c.lim.CountText(99, 2, 100)
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.lim.Provider, got, c.want)
		}
		if got == "" {
			continue
		}
		if DetectErrorType(got) != ErrorTooManyImages || CountsDocuments(got) != c.lim.Documents {
			t.Errorf("%s: %q reads as %s, counts documents %v", c.lim.Provider, got, DetectErrorType(got), CountsDocuments(got))
		}
		if n, ok := ImageCountLimit(got); !ok || n != 100 {
			t.Errorf("%s: limit %d %v", c.lim.Provider, n, ok)
		}
	}
	if !CountsDocuments("Too much media: 0 document pages + 107 images > 100") {
		t.Error("the older wording counts documents too")
	}
}

package scan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/testpdf"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// pngB64 encodes a w×h PNG; stored (no compression) it is w*h*4 bytes and
// more, so its size is known without random data.
func pngB64(t testing.TB, w, h int, stored bool) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	enc := png.Encoder{}
	if stored {
		enc.CompressionLevel = png.NoCompression
	}
	var b bytes.Buffer
	if err := enc.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func jpegB64(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.White)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// webpB64 is the header of a VP8X WebP image of w×h (the header is all the
// scan reads).
func webpB64(w, h int) string {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00")
	w, h = w-1, h-1
	b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(h), byte(h>>8), byte(h>>16))
	return base64.StdEncoding.EncodeToString(b)
}

type mediaFixture struct {
	provider string
	model    string   // default claude-sonnet-4-5
	userImgs []string // base64 PNGs pasted into the first user message
	toolImgs []string // base64 PNGs a read tool returned
	mime     string   // the user images' mime type (default image/png)
	compact  bool     // the tool result is compacted
	docs     int      // one-page PDFs attached after the images
	noOutput bool     // the tool's text output is empty
}

const (
	mediaSes  = "ses_7ffffffffff0mmmmmmmmmmmmmm"
	mediaUser = "msg_00000000000100000000000001"
	mediaAsst = "msg_00000000000200000000000002"
	mediaTool = "prt_000000000002000000000000tl"
)

func userFilePart(i int) string { return fmt.Sprintf("prt_0000000000010000000000%04d", i) }

func (mf mediaFixture) fixture() *storetest.Fixture {
	prov := mf.provider
	if prov == "" {
		prov = "anthropic"
	}
	model := mf.model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	u := storetest.Message{Body: json.RawMessage(`{"id":"` + mediaUser + `","role":"user","time":{"created":1767225601000},"agent":"build","model":{"providerID":"` + prov + `","modelID":"` + model + `"}}`)}
	u.Parts = append(u.Parts, storetest.Part{Body: json.RawMessage(`{"id":"prt_00000000000100000000000000","type":"text","text":"look at these"}`)})
	mime := mf.mime
	if mime == "" {
		mime = "image/png"
	}
	for i, d := range mf.userImgs {
		u.Parts = append(u.Parts, storetest.Part{Body: json.RawMessage(`{"id":"` + userFilePart(i+1) + `","type":"file","mime":"` + mime + `","filename":"shot.png","url":` + q("data:"+mime+";base64,"+d) + `}`)})
	}
	for i := range mf.docs {
		pdf := base64.StdEncoding.EncodeToString(testpdf.Write(testpdf.Options{Pages: 1}))
		u.Parts = append(u.Parts, storetest.Part{Body: json.RawMessage(`{"id":"` + userFilePart(len(mf.userImgs)+i+1) + `","type":"file","mime":"application/pdf","filename":"doc.pdf","url":` + q("data:application/pdf;base64,"+pdf) + `}`)})
	}
	a := storetest.Message{Body: json.RawMessage(`{"id":"` + mediaAsst + `","role":"assistant","parentID":"` + mediaUser + `","providerID":"` + prov + `","modelID":"` + model + `","time":{"created":1767225602000,"completed":1767225603000},"finish":"stop"}`)}
	a.Parts = append(a.Parts, storetest.Part{Body: json.RawMessage(`{"id":"prt_000000000002000000000000ss","type":"step-start"}`)})
	if len(mf.toolImgs) > 0 {
		var atts []map[string]string
		for _, d := range mf.toolImgs {
			atts = append(atts, map[string]string{"type": "file", "mime": "image/png", "url": "data:image/png;base64," + d})
		}
		output := "Image read successfully"
		if mf.noOutput {
			output = ""
		}
		tm := `{"start":1767225602100,"end":1767225602200}`
		if mf.compact {
			tm = `{"start":1767225602100,"end":1767225602200,"compacted":1767225609000}`
		}
		a.Parts = append(a.Parts,
			storetest.Part{Body: json.RawMessage(`{"id":"` + mediaTool + `","type":"tool","callID":"toolu_01","tool":"read","state":{"status":"completed","input":{"filePath":"/x.png"},"output":` + q(output) + `,"title":"x.png","metadata":{},"time":` + tm + `,"attachments":` + q(atts) + `}}`)},
			storetest.Part{Body: json.RawMessage(`{"id":"prt_000000000002000000000000sf","type":"step-finish"}`)},
			storetest.Part{Body: json.RawMessage(`{"id":"prt_000000000002000000000000s2","type":"step-start"}`)})
	}
	a.Parts = append(a.Parts, storetest.Part{Body: json.RawMessage(`{"id":"prt_000000000002000000000000tx","type":"text","text":"done"}`)})
	return &storetest.Fixture{ID: mediaSes, Title: "images",
		Info:     json.RawMessage(`{"id":"` + mediaSes + `","slug":"x","directory":"/work/x","version":"1.18.33","time":{"created":1767225600000,"updated":1767225609000}}`),
		Messages: []storetest.Message{u, a}}
}

// sizeFindings scans the fixture in a store of the shape and returns its
// SF170–SF179 findings.
func sizeFindings(t *testing.T, shape store.Shape, mf mediaFixture) []Finding {
	t.Helper()
	st := storetest.OpenOne(t, storetest.Materialize(t, shape, t.TempDir(), mf.fixture()))
	s := storetest.LoadAll(t, st)[0]
	var out []Finding
	for _, f := range CheckSession(s, settled()) {
		if f.Code >= "SF170" && f.Code <= "SF179" {
			out = append(out, f)
		}
	}
	return out
}

func (c sizeCase) sev() Severity {
	if c.warn {
		return Warning
	}
	return Error
}

type sizeCase struct {
	name string
	mf   mediaFixture
	want string // code@index message/part: provider error; "" for clean
	warn bool   // the finding is a warning
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestPreflightImageLimits(t *testing.T) {
	small := pngB64(t, 10, 10, false)
	big := pngB64(t, 1100, 1000, true) // 4.4 MB of pixels: over 5 MB as base64
	if len(big) <= opencode.AnthropicImageBase64Max {
		t.Fatalf("test image is only %d bytes of base64", len(big))
	}
	wide := pngB64(t, 2100, 10, false)
	huge := pngB64(t, 9000, 1, false)
	cases := []sizeCase{
		{"small images scan clean", mediaFixture{userImgs: repeat(small, 3), toolImgs: []string{small}}, "", false},
		{"pasted image over 5 MB", mediaFixture{userImgs: []string{big}},
			fmt.Sprintf("SF170@messages.0.content.1 %s/%s: messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: %d bytes > 5242880 bytes", mediaUser, userFilePart(1), len(big)), false},
		{"read image over 2000 px among 21", mediaFixture{userImgs: repeat(small, 20), toolImgs: []string{wide}},
			"SF171@messages.2.content.0.content.1 " + mediaAsst + "/" + mediaTool + ": messages.2.content.0.tool_result.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels", false},
		{"2100 px among 20 images is accepted", mediaFixture{userImgs: repeat(small, 19), toolImgs: []string{wide}}, "", false},
		{"image over 8000 px", mediaFixture{userImgs: []string{huge}},
			"SF171@messages.0.content.1 " + mediaUser + "/" + userFilePart(1) + ": messages.0.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels", false},
		{"jpeg over 8000 px", mediaFixture{userImgs: []string{jpegB64(t, 8001, 8)}},
			"SF171@messages.0.content.1 " + mediaUser + "/" + userFilePart(1) + ": messages.0.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels", false},
		{"webp over 8000 px", mediaFixture{userImgs: []string{webpB64(8001, 20)}},
			"SF171@messages.0.content.1 " + mediaUser + "/" + userFilePart(1) + ": messages.0.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels", false},
		{"webp of 8000 px is accepted", mediaFixture{userImgs: []string{webpB64(8000, 20)}}, "", false},
		{"101 images", mediaFixture{userImgs: repeat(small, 101)},
			"SF172@messages.0 " + mediaUser + "/" + userFilePart(101) + ": too many images and documents: 101 + 0 > 100", true},
		{"601 images", mediaFixture{userImgs: repeat(small, 601)},
			"SF172@messages.0 " + mediaUser + "/" + userFilePart(601) + ": too many images and documents: 601 + 0 > 600", false},
		{"100 images are accepted", mediaFixture{userImgs: repeat(small, 100)}, "", false},
		{"99 images and 2 documents", mediaFixture{userImgs: repeat(small, 99), docs: 2},
			"SF172@messages.0 " + mediaUser + "/" + userFilePart(99) + ": too many images and documents: 99 + 2 > 100", true},
		{"98 images and 2 documents are accepted", mediaFixture{userImgs: repeat(small, 98), docs: 2}, "", false},
		{"51 images and a document to opencode console", mediaFixture{provider: "opencode", userImgs: repeat(small, 51), docs: 1},
			"SF172@messages.0 " + mediaUser + "/" + userFilePart(51) + ": request contains 51 images, exceeding the maximum of 50 allowed per request", false},
		{"50 images and a document to opencode console are accepted", mediaFixture{provider: "opencode", userImgs: repeat(small, 50), docs: 1}, "", false},
		{"51 images to opencode console", mediaFixture{provider: "opencode", userImgs: repeat(small, 51)},
			"SF172@messages.0 " + mediaUser + "/" + userFilePart(51) + ": request contains 51 images, exceeding the maximum of 50 allowed per request", false},
		// OpenCode Console counts the images of every Zen model's request
		// (anomalyco/opencode#47487: muse-spark through Zen Go), also of
		// those sessfix has no family for, whose other limits are not
		// checked; and of Zen's GPT models, with OpenAI's limits.
		{"51 images to a zen model of no family", mediaFixture{provider: "opencode", model: "muse-spark-1.3-contributor", userImgs: repeat(small, 51)},
			"SF172@messages.0 " + mediaUser + "/" + userFilePart(51) + ": request contains 51 images, exceeding the maximum of 50 allowed per request", false},
		{"a big image to a zen model of no family is not judged", mediaFixture{provider: "opencode", model: "muse-spark-1.3-contributor", userImgs: []string{big, huge}}, "", false},
		{"51 images to zen gpt", mediaFixture{provider: "opencode", model: "gpt-5.2", userImgs: repeat(small, 51)},
			"SF172@input[1] " + mediaUser + "/" + userFilePart(51) + ": request contains 51 images, exceeding the maximum of 50 allowed per request", false},
		{"images to a provider of no family are not counted", mediaFixture{provider: "ollama", model: "llava", userImgs: repeat(small, 700)}, "", false},
		{"data that is no image", mediaFixture{userImgs: []string{base64.StdEncoding.EncodeToString([]byte("hello, not a picture"))}},
			"SF173@messages.0.content.1 " + mediaUser + "/" + userFilePart(1) + ": " + textInvalidImage, false},
		{"a png cut short inside its header", mediaFixture{userImgs: []string{small, cutPNG(t)}},
			"SF173@messages.0.content.2 " + mediaUser + "/" + userFilePart(2) + ": " + textInvalidImage, false},
		{"an image of 0 bytes", mediaFixture{userImgs: []string{small, ""}},
			"SF173@messages.0.content.2 " + mediaUser + "/" + userFilePart(2) + ": messages.0.content.2.image.source.base64: image cannot be empty", false},
		{"a tool's image of 0 bytes", mediaFixture{toolImgs: []string{""}},
			"SF173@messages.2.content.0.content.1 " + mediaAsst + "/" + mediaTool + ": messages.2.content.0.tool_result.content.1.image.source.base64: image cannot be empty", false},
		{"data that is no image to openai", mediaFixture{provider: "openai", userImgs: []string{base64.StdEncoding.EncodeToString([]byte("hello, not a picture"))}},
			"SF173@input[1] " + mediaUser + "/" + userFilePart(1) + ": " + opencode.TextOpenAIInvalidImage, false},
		{"a tool's data that is no image to openai", mediaFixture{provider: "openai", toolImgs: []string{small, base64.StdEncoding.EncodeToString([]byte("GIF? no"))}},
			"SF173@input[4] " + mediaAsst + "/" + mediaTool + ": " + opencode.TextOpenAIInvalidImage, false},
		{"data that is no image to gemini", mediaFixture{provider: "google", userImgs: []string{small, base64.StdEncoding.EncodeToString([]byte("hello, not a picture"))}},
			"SF173@contents[0] " + mediaUser + "/" + userFilePart(2) + ": " + opencode.TextGeminiInvalidImage, false},
		{"images to gemini are not counted", mediaFixture{provider: "google", userImgs: repeat(small, 700)}, "", false},
		{"an svg is not judged", mediaFixture{mime: "image/svg+xml", userImgs: []string{base64.StdEncoding.EncodeToString([]byte("<svg/>"))}}, "", false},
		{"compacted tool result sends no image", mediaFixture{toolImgs: []string{big}, compact: true}, "", false},
		{"tool result image over 8000 px without text output", mediaFixture{toolImgs: []string{small, huge}, noOutput: true},
			"SF171@messages.2.content.0.content.1 " + mediaAsst + "/" + mediaTool + ": messages.2.content.0.tool_result.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels", false},
		{"tool result image over 5 MB", mediaFixture{toolImgs: []string{big}},
			fmt.Sprintf("SF170@messages.2.content.0.content.1 %s/%s: messages.2.content.0.tool_result.content.1.image.source.base64: image exceeds 5 MB maximum: %d bytes > 5242880 bytes", mediaAsst, mediaTool, len(big)), false},
	}
	for _, c := range cases {
		for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeStorage} {
			t.Run(c.name+"/"+string(shape), func(t *testing.T) {
				var got []string
				for _, f := range sizeFindings(t, shape, c.mf) {
					got = append(got, fmt.Sprintf("%s@%s %s/%s: %s", f.Code, f.Index, f.MessageID, f.PartID, f.ProviderError))
					if f.Severity != c.sev() {
						t.Errorf("%s: severity %v", f.Code, f.Severity)
					}
					// An image over a limit, pasted or a tool's, is shrunk;
					// a request over the count gets OpenCode's prune; data
					// that is no image gets the placeholder.
					wantFix := ""
					switch f.Code {
					case "SF170", "SF171":
						wantFix = "shrinkImage"
					case "SF172":
						wantFix = "markToolCompacted"
					case "SF173":
						wantFix = "replaceMedia"
					}
					if f.Fix != wantFix || opencode.DetectErrorType(f.ProviderError) == opencode.ErrorNone || f.ErrorType == "" {
						t.Errorf("%s: fix %q severity %v error type %q", f.Code, f.Fix, f.Severity, f.ErrorType)
					}
				}
				if g := strings.Join(got, "\n"); g != c.want {
					t.Errorf("got\n%s\nwant\n%s", g, c.want)
				}
			})
		}
	}
}

// BenchmarkPreflightImages checks a session holding 47 MB of base64 images
// (eight pasted images of 5.9 MB each), loaded from a database as a scan
// loads it: the scan reads each image's length and a 128 KiB prefix of its
// data in place in the loaded bytes, so it allocates well under a megabyte
// per check, no copy of an image and nothing decoded.
//
//	go test -run '^$' -bench PreflightImages -benchmem ./pkg/scan
func BenchmarkPreflightImages(b *testing.B) {
	big := pngB64(b, 1100, 1000, true)
	mf := mediaFixture{userImgs: repeat(big, 8)}
	st := storetest.OpenOne(b, storetest.Materialize(b, store.ShapeSQLite, b.TempDir(), mf.fixture()))
	s := storetest.LoadAll(b, st)[0]
	opts := settled()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n := 0
		for _, f := range CheckSession(s, opts) {
			if f.Code == "SF170" {
				n++
			}
		}
		if n != 8 {
			b.Fatalf("%d SF170 findings, want 8", n)
		}
	}
}

// An image error is history once the images it names are within the
// limits the next request meets: the side limit for the number of images
// that request holds (checkImages' reading), not the one the old error
// printed. A 2100 px image that broke a request of 21 images is within
// the limit once the request holds fewer (8000 px); with 21 it is not.
func TestImageWithinLimitsTakesTheNextRequestsSide(t *testing.T) {
	small := pngB64(t, 10, 10, false)
	wide := pngB64(t, 2100, 10, false)
	const manyErr = "messages.0.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"
	for _, c := range []struct {
		name   string
		images []string
		want   bool
	}{
		{"one image", []string{wide}, true},
		{"twenty-one images", append([]string{wide}, repeat(small, 20)...), false},
	} {
		st := storetest.OpenOne(t, storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), mediaFixture{userImgs: c.images}.fixture()))
		s := storetest.LoadAll(t, st)[0]
		r := &opencode.Recovery{Text: manyErr, Type: opencode.ErrorImageDimensions, TargetID: mediaUser, PartID: userFilePart(1)}
		if why := imageWithinLimits(r, s); (why != "") != c.want {
			t.Errorf("%s: imageWithinLimits = %q, want resolved %v", c.name, why, c.want)
		}
	}
}

// cutPNG is the first 20 bytes of a PNG (its signature and part of its
// header), base64: a file read before it was written through.
func cutPNG(t testing.TB) string {
	raw, err := base64.StdEncoding.DecodeString(pngB64(t, 10, 10, false))
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw[:20])
}

// SF173 says what the data looked like: an image cut short or damaged, or
// no image at all; the placeholder replacing it says the same.
func TestSF173SaysWhatTheDataIs(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{cutPNG(t), "starts like a PNG image but its header does not decode (cut short or damaged)"},
		{base64.StdEncoding.EncodeToString([]byte("hello, not a picture")), "is not a PNG, JPEG, GIF or WebP image"},
	} {
		var got []string
		for _, f := range sizeFindings(t, store.ShapeSQLite, mediaFixture{userImgs: []string{c.data}}) {
			got = append(got, f.Code+" "+f.Message)
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], "SF173 ") || !strings.HasSuffix(got[0], " holds data that "+c.want) {
			t.Errorf("findings %q, want one SF173 ending %q", got, " holds data that "+c.want)
		}
		if why, _ := opencode.MediaRejected("data:image/png;base64,"+c.data, "image/png", 5<<20, 8000); why != "its data "+c.want {
			t.Errorf("the placeholder's reason %q, want %q", why, "its data "+c.want)
		}
	}
}

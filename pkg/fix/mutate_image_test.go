package fix

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// imageSession loads storetest.ImageSession(images...) from a store of the
// shape.
func imageSession(t *testing.T, shape store.Shape, images ...storetest.Image) *store.Session {
	t.Helper()
	st := storetest.OpenOne(t, storetest.Materialize(t, shape, t.TempDir(), storetest.ImageSession(images...)))
	return storetest.LoadAll(t, st)[0]
}

// shrunkPart plans the session's findings and returns the first image part
// of the repaired session, decoded, after checking that the plan shrank it
// and left nothing at warning level.
func shrunkPart(t *testing.T, s *store.Session, code string) (*store.Part, image.Config, string, int) {
	t.Helper()
	if f := fs0(scan.CheckSession(s, scanOpts()), code); f.Code == "" || f.Fix != "shrinkImage" || f.PartID != storetest.ImagePartID(1) {
		t.Fatalf("%s should report the pasted image with shrinkImage: %+v", code, f)
	}
	fixed := fixAndRecheck(t, s, "shrink")
	p := fixed.Message(storetest.ImageUserID).Parts[1]
	data, ok := opencode.Base64Data(p.Get("url").String())
	if !ok {
		t.Fatalf("the shrunk part's url is no base64 data: URL: %.60s", p.Get("url").String())
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the shrunk image does not decode: %v", err)
	}
	if _, _, err := image.Decode(bytes.NewReader(raw)); err != nil {
		t.Fatalf("the shrunk image does not decode whole: %v", err)
	}
	if want := "data:" + p.Get("mime").String() + ";base64,"; !strings.HasPrefix(p.Get("url").String(), want) || p.Get("mime").String() != "image/"+format {
		t.Errorf("mime %q, url %.40s, data is %s", p.Get("mime").String(), p.Get("url").String(), format)
	}
	if p.Get("filename").String() != "shot.png" {
		t.Errorf("filename %q, want it kept", p.Get("filename").String())
	}
	return p, cfg, format, len(data)
}

// A pasted 3000×3000 photo of noise is far over 5 MB of base64 and within
// 8000 px: it is re-encoded as JPEG (noise does not fit as PNG) under the
// 4 MiB target, at the largest size that fits.
func TestShrinkImageOverSizeLimit(t *testing.T) {
	big := storetest.NoisyPNG(t, 1, 3000, 3000)
	if len(big) <= 5<<20 {
		t.Fatalf("test image is only %d bytes of base64", len(big))
	}
	s := imageSession(t, store.ShapeStorage, storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: big})
	_, cfg, format, n := shrunkPart(t, s, "SF170")
	if n > shrinkTarget {
		t.Errorf("shrunk to %d bytes of base64, over %d", n, shrinkTarget)
	}
	if format != "jpeg" || cfg.Width != cfg.Height || cfg.Width > 3000 || cfg.Width < 1000 {
		t.Errorf("shrunk to a %s of %d×%d, want a square jpeg between 1000 and 3000 px", format, cfg.Width, cfg.Height)
	}
}

// A 9000 px wide screenshot (small in bytes) is scaled to 8000 px wide,
// its aspect ratio kept, and stays a PNG.
func TestShrinkImageOverDimensionLimit(t *testing.T) {
	wide := storetest.NoisyPNG(t, 2, 9000, 90)
	s := imageSession(t, store.ShapeSQLite, storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: wide})
	_, cfg, format, _ := shrunkPart(t, s, "SF171")
	if format != "png" || cfg.Width != 8000 || cfg.Height != 80 {
		t.Errorf("shrunk to a %s of %d×%d, want a png of 8000×80", format, cfg.Width, cfg.Height)
	}
}

// Among more than 20 images the side limit is 2000 px; a GIF is written
// as PNG, its mime type with it. The repair decodes the one image over the
// limit, and none of the 20 within it.
func TestShrinkImageManyImagesGIF(t *testing.T) {
	pal := image.NewPaletted(image.Rect(0, 0, 2400, 600), []color.Color{color.White, color.Black})
	for i := range pal.Pix {
		pal.Pix[i] = byte(i / 7 % 2)
	}
	var b bytes.Buffer
	if err := gif.Encode(&b, pal, nil); err != nil {
		t.Fatal(err)
	}
	images := []storetest.Image{{Mime: "image/gif", Filename: "shot.png", Base64: base64.StdEncoding.EncodeToString(b.Bytes())}}
	small := storetest.NoisyPNG(t, 3, 4, 4)
	for range 20 {
		images = append(images, storetest.Image{Mime: "image/png", Filename: "dot.png", Base64: small})
	}
	s := imageSession(t, store.ShapeStorage, images...)
	_, decoded := opencode.ImageDecodes()
	_, cfg, format, _ := shrunkPart(t, s, "SF171")
	if format != "png" || cfg.Width != 2000 || cfg.Height != 500 {
		t.Errorf("shrunk to a %s of %d×%d, want a png of 2000×500", format, cfg.Width, cfg.Height)
	}
	if _, n := opencode.ImageDecodes(); n-decoded != 1 {
		t.Errorf("the repair decoded %d images whole, want the one over the limit", n-decoded)
	}
}

// An image over the side limit whose header is whole but whose pixels are
// cut does not decode: the shrink cannot keep it, so the placeholder
// (replaceMedia) takes its place, naming the file, its type and size.
func TestUndecodableImageOverLimitGetsPlaceholder(t *testing.T) {
	wide := storetest.NoisyPNG(t, 4, 9000, 2)
	raw, _ := base64.StdEncoding.DecodeString(wide)
	broken := base64.StdEncoding.EncodeToString(raw[:len(raw)/2]) // the header is whole, the pixels cut
	s := imageSession(t, store.ShapeStorage, storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: broken})
	if f := fs0(scan.CheckSession(s, scanOpts()), "SF171"); f.Code == "" {
		t.Fatal("SF171 should report the cut image")
	}
	fixed := fixAndRecheck(t, s, "placeholder")
	p := fixed.Message(storetest.ImageUserID).Parts[1]
	text := p.Get("text").String()
	if p.Get("type").String() != "text" || !strings.HasPrefix(text, "[sessfix removed the image shot.png (image/png, 27.0 KB): it is 9000×2 px, over the provider's limit of 8000 px, and it does not decode to be shrunk") {
		t.Fatalf("the cut image should be a placeholder text now: %s", p.Raw)
	}
}

// The dry-run diff of a shrink shows each side's base64 as its length and
// hash, not megabytes, and says it cannot be applied.
func TestShrinkImageDiffSummarisesBase64(t *testing.T) {
	wide := storetest.NoisyPNG(t, 2, 9000, 90)
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			s := imageSession(t, shape, storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: wide})
			p, err := Plan(s, scan.CheckSession(s, scanOpts()), planOpts())
			if err != nil || p.Empty() {
				t.Fatalf("plan: %v %+v", err, p.Unfixed)
			}
			var out bytes.Buffer
			if err := Diff(&out, p.Changes); err != nil {
				t.Fatal(err)
			}
			d := out.String()
			if !strings.HasPrefix(d, summaryNote) || len(d) > 8<<10 {
				t.Fatalf("diff of %d bytes:\n%.3000s", len(d), d)
			}
			if !strings.Contains(d, "-") || !strings.Contains(d, fmt.Sprintf("data:image/png;base64,[… %d bytes of base64, sha256 ", len(wide))) ||
				strings.Count(d, "bytes of base64, sha256") != 2 {
				t.Errorf("diff does not summarise both sides:\n%s", d)
			}
		})
	}
}

// Right after the failed attempt: the stored image error points at the
// pasted image, its repair is the preflight finding's shrink, and once
// shrunk the stored error is history (info), not "not repaired yet".
func TestStoredImageErrorShrinksThePastedImage(t *testing.T) {
	wide := storetest.NoisyPNG(t, 2, 9000, 90)
	fx := storetest.ImageSession(storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: wide})
	text := "messages.0.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels"
	fx.Messages[1].Body = []byte(`{"id":"` + storetest.ImageAsstID + `","role":"assistant","parentID":"` + storetest.ImageUserID + `","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","agent":"build",` +
		`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1767225602000,"completed":1767225603000},` +
		`"error":{"name":"APIError","data":{"message":` + jsonString(text) + `,"isRetryable":false}}}`)
	fx.Messages[1].Parts = nil
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	before := scan.CheckSession(s, scanOpts())
	if f := fs0(before, "SF302"); f.Severity != scan.Error || f.Fix != "shrinkImage" || strings.Contains(f.Message, "not repaired yet") {
		t.Fatalf("SF302 should name shrinkImage as the stored error's repair: %+v", f)
	}
	// The stored error alone plans the shrink.
	p, err := Plan(s, []scan.Finding{fs0(before, "SF302")}, planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Mutation != "shrinkImage" || len(p.Unfixed) != 0 {
		t.Fatalf("plan from the stored error: %v %+v unfixed %+v", err, p.Fixed, p.Unfixed)
	}
	fixed, err := ApplyInMemory(s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	if g := fs0(scan.CheckSession(fixed, scanOpts()), "SF302"); g.Severity != scan.Info || !strings.Contains(g.Message, "shrunk since") {
		t.Errorf("SF302 after the shrink: %s %q", g.Severity, g.Message)
	}
}

// An image over both limits has two findings on one part (SF170, SF171):
// one shrink repairs both, and the plan holds one edit.
func TestShrinkImageOverBothLimits(t *testing.T) {
	both := storetest.NoisyPNG(t, 5, 8100, 200) // 6.5 MB of base64
	s := imageSession(t, store.ShapeStorage, storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: both})
	fs := scan.CheckSession(s, scanOpts())
	if fs0(fs, "SF170").Code == "" || fs0(fs, "SF171").Code == "" {
		t.Fatalf("want SF170 and SF171: %v", codes(fs))
	}
	p, err := Plan(s, fs, planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Mutation != "shrinkImage" {
		t.Fatalf("plan: %v %+v unfixed %+v", err, p.Fixed, p.Unfixed)
	}
	_, cfg, _, n := shrunkPart(t, s, "SF170")
	if cfg.Width > 8000 || n > shrinkTarget {
		t.Errorf("shrunk to %d px wide, %d bytes of base64", cfg.Width, n)
	}
}

package fix

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// onModel moves a fixture's messages to another provider and model.
func onModel(fx *storetest.Fixture, provider, model string) *storetest.Fixture {
	for i := range fx.Messages {
		b := bytes.ReplaceAll(fx.Messages[i].Body, []byte(`"providerID":"anthropic"`), []byte(`"providerID":"`+provider+`"`))
		fx.Messages[i].Body = bytes.ReplaceAll(b, []byte(`"modelID":"claude-sonnet-4-5"`), []byte(`"modelID":"`+model+`"`))
	}
	return fx
}

// Claude on Bedrock: an image over Anthropic's 5 MB of base64 is named by
// the stored Bedrock text (its image.source.bytes path, after Bedrock's
// prefix); the stored error plans the shrink, and once shrunk the error is
// history and the preflight finds nothing.
func TestStoredBedrockImageErrorShrinks(t *testing.T) {
	big := storetest.NoisyPNG(t, 1, 3000, 3000)
	fx := onModel(storetest.ImageSession(storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: big}), "amazon-bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0")
	text := "The model returned the following errors: messages.0.content.1.image.source.bytes: image exceeds 5 MB maximum: 7167852 bytes > 5242880 bytes"
	fx.Messages[1].Body = []byte(`{"id":"` + storetest.ImageAsstID + `","role":"assistant","parentID":"` + storetest.ImageUserID + `","providerID":"amazon-bedrock","modelID":"anthropic.claude-sonnet-4-5-20250929-v1:0","mode":"build","agent":"build",` +
		`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1767225602000,"completed":1767225603000},` +
		`"error":{"name":"APIError","data":{"message":` + jsonString(text) + `,"isRetryable":false}}}`)
	fx.Messages[1].Parts = nil
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), fx)))[0]
	before := scan.CheckSession(s, scanOpts())
	if f := fs0(before, "SF170"); f.Fix != "shrinkImage" || !strings.HasPrefix(f.ProviderError, "The model returned the following errors: messages.0.content.1.image.source.bytes: image exceeds 5 MB maximum") {
		t.Fatalf("SF170 on Bedrock: %+v", f)
	}
	if f := fs0(before, "SF302"); f.Severity != scan.Error || f.Fix != "shrinkImage" {
		t.Fatalf("SF302 should name shrinkImage as the stored error's repair: %+v", f)
	}
	p, err := Plan(s, []scan.Finding{fs0(before, "SF302")}, planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Mutation != "shrinkImage" {
		t.Fatalf("plan from the stored error: %v %+v unfixed %+v", err, p.Fixed, p.Unfixed)
	}
	fixed, err := ApplyInMemory(s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	after := scan.CheckSession(fixed, scanOpts())
	if g := fs0(after, "SF302"); g.Severity != scan.Info || !strings.Contains(g.Message, "shrunk since") {
		t.Errorf("SF302 after the shrink: %s %q", g.Severity, g.Message)
	}
	if g := fs0(after, "SF170"); g.Code != "" {
		t.Errorf("SF170 after the shrink: %+v", g)
	}
}

// OpenAI takes any side (the API scales the image) and 20 MB an image: a
// 9000 px screenshot is left alone, where on Anthropic it is shrunk.
func TestOpenAIImageSidesNotShrunk(t *testing.T) {
	wide := storetest.NoisyPNG(t, 2, 9000, 90)
	fx := onModel(storetest.ImageSession(storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: wide}), "openai", "gpt-5")
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), fx)))[0]
	for _, f := range scan.CheckSession(s, scanOpts()) {
		if f.Code >= "SF170" && f.Code <= "SF179" {
			t.Errorf("OpenAI: %s %s", f.Code, f.Message)
		}
	}
	if b64, side := opencode.ImageLimits(s); b64 != opencode.OpenAIImageBytesMax/3*4 || side < 1<<20 {
		t.Errorf("OpenAI repair limits %d bytes of base64, %d px", b64, side)
	}
}

// paddedPNG is a 10×10 PNG followed by zero bytes up to n bytes: its size
// is n, it decodes (the decoder stops at its end), and shrinking it is
// cheap.
func paddedPNG(t *testing.T, n int) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(storetest.NoisyPNG(t, 3, 10, 10))
	if err != nil || n < len(raw) {
		t.Fatalf("cannot make a PNG of %d bytes: %v", n, err)
	}
	return base64.StdEncoding.EncodeToString(append(raw, make([]byte, n-len(raw))...))
}

// OpenAI's 50 MB of images a request (SF176): three pasted images of 17 MB
// each (each within the 20 MB an image) and a small one are 51 MB
// together. Each big one is over its share (12.5 MB) and is reported; the
// repair shrinks them in request order, each within the limits of the
// session as the repairs before it left it, so once the first is shrunk
// the images fit and the other two are kept whole; the small one is not
// touched; all four are still sent, within the limit.
func TestImagesOverOpenAIRequestTotalShrunkToTheirShare(t *testing.T) {
	big := paddedPNG(t, 17_000_000)
	small := storetest.NoisyPNG(t, 4, 10, 10)
	ims := []storetest.Image{{Mime: "image/png", Filename: "shot.png", Base64: big}, {Mime: "image/png", Filename: "b.png", Base64: big},
		{Mime: "image/png", Filename: "c.png", Base64: big}, {Mime: "image/png", Filename: "d.png", Base64: small}}
	fx := onModel(storetest.ImageSession(ims...), "openai", "gpt-5")
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), fx)))[0]
	var over []string
	for _, f := range scan.CheckSession(s, scanOpts()) {
		if f.Code == scan.SF176 {
			if f.Fix != "shrinkImage" || f.ProviderError != "" || f.Severity != scan.Error {
				t.Errorf("SF176: %+v", f)
			}
			over = append(over, f.PartID)
		}
	}
	if want := []string{storetest.ImagePartID(1), storetest.ImagePartID(2), storetest.ImagePartID(3)}; strings.Join(over, ",") != strings.Join(want, ",") {
		t.Fatalf("SF176 on parts %v, want %v", over, want)
	}
	fixed := fixAndRecheck(t, s, "shrink")
	parts := fixed.Message(storetest.ImageUserID).Parts
	total := 0
	for i := 1; i <= 4; i++ {
		data, ok := opencode.Base64Data(parts[i].Get("url").String())
		if !ok {
			t.Fatalf("part %d is no longer an image: %.60s", i, parts[i].Raw)
		}
		total += opencode.DecodedLen(data)
		if i == 4 && data != small {
			t.Errorf("the small image was changed")
		}
		if i == 1 && opencode.DecodedLen(data) > opencode.OpenAIImageTotalBytesMax/4 {
			t.Errorf("image %d is %d bytes, over its share", i, opencode.DecodedLen(data))
		}
		if (i == 2 || i == 3) && data != big {
			t.Errorf("image %d was shrunk, though the images fit once the first was", i)
		}
	}
	if total > opencode.OpenAIImageTotalBytesMax {
		t.Errorf("the images are %d bytes after the repair", total)
	}
}

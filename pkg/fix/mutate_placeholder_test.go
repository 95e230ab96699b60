package fix

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// invalidImageText is the API's error for image data that is no image
// (provider-rules.md), as OpenCode stores it.
const invalidImageText = "The image data you provided does not represent a valid image. Please check your input and try again with one of the supported image formats: ['image/jpeg', 'image/png', 'image/gif', 'image/webp']."

// notAPNG is what a file named .png holds when it is not a PNG: text.
var notAPNG = base64.StdEncoding.EncodeToString([]byte("this is not a picture, only text in a file named shot.png\n"))

// A user attached shot.png whose bytes are not a PNG: SF173 names the part
// with replaceMedia, and the repair turns the file part into a synthetic
// text part with the same id that names the file, its type and size; the
// prompt's text and the answer stay byte for byte, and every provider
// family's request now sends text where it sent the image.
func TestInvalidImageBecomesPlaceholder(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			s := imageSession(t, shape, storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: notAPNG})
			f := fs0(scan.CheckSession(s, scanOpts()), "SF173")
			if f.Fix != "replaceMedia" || f.PartID != storetest.ImagePartID(1) || f.ProviderError == "" {
				t.Fatalf("SF173 should name the part with replaceMedia: %+v", f)
			}
			fixed := fixAndRecheck(t, s, "placeholder")
			um, fm := s.Message(storetest.ImageUserID), fixed.Message(storetest.ImageUserID)
			if len(fm.Parts) != len(um.Parts) || !bytes.Equal(fm.Parts[0].Raw, um.Parts[0].Raw) {
				t.Fatalf("the prompt's text part changed or parts were added: %d → %d", len(um.Parts), len(fm.Parts))
			}
			p := fm.Parts[1]
			want := "[sessfix removed the image shot.png (image/png, 58 bytes): its data is not a PNG, JPEG, GIF or WebP image; the original is in sessfix's backup]"
			if p.ID != storetest.ImagePartID(1) || p.Get("type").String() != "text" || p.Get("text").String() != want || !p.Get("synthetic").Bool() {
				t.Fatalf("placeholder part %s", p.Raw)
			}
			if p.Get("time.start").Int() != testNow.UnixMilli() || p.Get("url").Exists() || p.Get("mime").Exists() {
				t.Errorf("placeholder keeps the file's keys or has another time: %s", p.Raw)
			}
			if shape == store.ShapeStorage && (p.Get("id").String() != p.ID || p.Get("messageID").String() != fm.ID) {
				t.Errorf("a JSON part body needs its ids: %s", p.Raw)
			}
			if !bytes.Equal(fixed.Message(storetest.ImageAsstID).Parts[1].Raw, s.Message(storetest.ImageAsstID).Parts[1].Raw) {
				t.Fatal("the answer changed")
			}
			for _, model := range [][2]string{{"anthropic", "claude-sonnet-4-5"}, {"amazon-bedrock", "anthropic.claude-sonnet-4-5"},
				{"openai", "gpt-5"}, {"google", "gemini-2.5-pro"}, {"deepseek", "deepseek-chat"}} {
				r := sent.Build(fixed, sent.Options{ProviderID: model[0], ModelID: model[1], NextPrompt: true})
				text := false
				for _, pm := range r.Messages {
					for _, b := range pm.Blocks {
						if b.PartID == p.ID {
							if b.Type != "text" {
								t.Errorf("%s sends the placeholder as %s", model[0], b.Type)
							}
							text = true
						}
					}
				}
				if !text {
					t.Errorf("%s does not send the placeholder", model[0])
				}
			}
		})
	}
}

// A tool returned two images, one of them data that is no image: the
// placeholder takes that attachment out of the result and appends its text
// to the tool's output; the good image and every other key stay.
func TestInvalidToolImageLeavesTheResult(t *testing.T) {
	good := storetest.NoisyPNG(t, 3, 40, 30)
	s := toolImageSession(t, storetest.Image{Mime: "image/png", Base64: notAPNG}, storetest.Image{Mime: "image/png", Base64: good})
	f := fs0(scan.CheckSession(s, scanOpts()), "SF173")
	if f.Fix != "replaceMedia" || f.PartID != storetest.ToolImagePartID || !strings.Contains(f.Message, "an image a tool returned") {
		t.Fatalf("SF173 should name the tool part with replaceMedia: %+v", f)
	}
	fixed := fixAndRecheck(t, s, "placeholder")
	after := toolPart(t, fixed)
	atts := after.Get("state.attachments").Array()
	if len(atts) != 1 || !strings.HasSuffix(atts[0].Get("url").String(), good) {
		t.Fatalf("attachments after the repair: %d, want the good image alone", len(atts))
	}
	out := after.Get("state.output").String()
	if !strings.HasPrefix(out, "Image read successfully\n\n"+opencode.MediaRemovedMark+"the image (image/png, 58 bytes): its data is not") {
		t.Errorf("output %q", out)
	}
	before := toolPart(t, s)
	for _, k := range []string{"callID", "tool", "state.status", "state.input", "state.title", "state.time", "state.metadata"} {
		if before.Get(k).Raw != after.Get(k).Raw {
			t.Errorf("%s changed: %s → %s", k, before.Get(k).Raw, after.Get(k).Raw)
		}
	}
	if n := len(opencode.RequestImages(fixed, sent.Build(fixed, sent.Options{NextPrompt: true}))); n != 1 {
		t.Errorf("the request sends %d images, want the good one", n)
	}
}

// Right after the failed attempt: the stored invalid-image error (which
// names no message) maps to the preflight's SF173 finding, its repair is
// the placeholder, planned from the stored error alone, and once the image
// is replaced the stored error is history (info).
func TestStoredInvalidImageErrorPlacesPlaceholder(t *testing.T) {
	for _, tool := range []bool{false, true} {
		name := map[bool]string{false: "pasted", true: "tool"}[tool]
		t.Run(name, func(t *testing.T) {
			fx := storetest.ImageSession(storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: notAPNG})
			failed := 1
			if tool {
				fx = storetest.ToolImageSession(storetest.Image{Mime: "image/png", Base64: notAPNG})
				failed = 2
			}
			id := gjson.GetBytes(fx.Messages[failed].Body, "id").String()
			fx.Messages[failed].Body = []byte(`{"id":"` + id + `","role":"assistant","parentID":"` + storetest.ImageUserID + `","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","agent":"build",` +
				`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1767225604000,"completed":1767225605000},` +
				`"error":{"name":"APIError","data":{"message":` + jsonString(invalidImageText) + `,"isRetryable":false}}}`)
			fx.Messages[failed].Parts = nil
			s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
			before := scan.CheckSession(s, scanOpts())
			f := fs0(before, "SF302")
			if f.Severity != scan.Error || f.Fix != "replaceMedia" || f.ErrorType != "invalid_image" || strings.Contains(f.Message, "not repaired yet") {
				t.Fatalf("SF302 should name replaceMedia as the stored error's repair: %+v", f)
			}
			p, err := Plan(s, []scan.Finding{f}, planOpts())
			if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Mutation != "replaceMedia" || len(p.Unfixed) != 0 {
				t.Fatalf("plan from the stored error: %v %+v unfixed %+v", err, p.Fixed, p.Unfixed)
			}
			fixed, err := ApplyInMemory(s, p.Changes)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range scan.CheckSession(fixed, scanOpts()) {
				if g.Severity != scan.Info {
					t.Errorf("after the repair: %s %s %q", g.Severity, g.Code, g.Message)
				}
			}
		})
	}
}

// A user attached a 34 MB PDF (base64) and a small one: the request is over
// Anthropic's 32 MB request limit, SF175 points at the big PDF with
// replaceMedia, and the repair replaces that one only; the small PDF is
// still sent. Right after the failed attempt the stored request_too_large
// error plans the same repair and then reads as resolved.
func TestRequestOverSizeLimitReplacesTheLargestPDF(t *testing.T) {
	big := "JVBERi0xLjcK" + strings.Repeat("A", 34<<20)
	small := "JVBERi0xLjcK" + strings.Repeat("B", 1000)
	images := []storetest.Image{{Mime: "application/pdf", Filename: "small.pdf", Base64: small}, {Mime: "application/pdf", Filename: "big.pdf", Base64: big}}
	s := imageSession(t, store.ShapeStorage, images...)
	f := fs0(scan.CheckSession(s, scanOpts()), "SF175")
	if f.Fix != "replaceMedia" || f.PartID != storetest.ImagePartID(2) || f.ErrorType != "request_too_large" {
		t.Fatalf("SF175 should point at the big PDF with replaceMedia: %+v", f)
	}
	fixed := fixAndRecheck(t, s, "placeholder")
	parts := fixed.Message(storetest.ImageUserID).Parts
	if parts[1].Get("type").String() != "file" || parts[2].Get("type").String() != "text" ||
		!strings.HasPrefix(parts[2].Get("text").String(), "[sessfix removed the file big.pdf (application/pdf, 26.7 MB): "+whyRequestTooLarge) {
		t.Fatalf("after the repair: %s / %.300s", parts[1].Get("type").String(), parts[2].Raw)
	}

	repairStoredError(t, images, opencode.ErrorRequestTooLarge.Example(), "request_too_large", storetest.ImagePartID(2))
	// The shorter message users quote (anomalyco/opencode#12060), stored
	// the way 1.18.33 stores a 413: a ContextOverflowError.
	repairStoredErrorNamed(t, "ContextOverflowError", "anthropic", "claude-sonnet-4-5", images, "Request exceeds the maximum size", "request_too_large", storetest.ImagePartID(2))
}

// An image of 0 bytes (a screenshot attached before it was written): the
// preflight predicts Anthropic's own text for it, and that text stored
// after the failed attempt plans the placeholder (anthropics/claude-code#36712).
func TestEmptyImagePlaceholder(t *testing.T) {
	images := []storetest.Image{{Mime: "image/png", Filename: "shot.png", Base64: ""}}
	s := imageSession(t, store.ShapeStorage, images...)
	const text = "messages.0.content.1.image.source.base64: image cannot be empty"
	if f := fs0(scan.CheckSession(s, scanOpts()), "SF173"); f.ProviderError != text || f.Fix != "replaceMedia" || f.PartID != storetest.ImagePartID(1) {
		t.Fatalf("SF173 should predict %q: %+v", text, f)
	}
	repairStoredError(t, images, text, "invalid_image", storetest.ImagePartID(1))
}

// `fix --error` with the invalid-image text pasted (no stored attempt):
// the error names no message, the preflight's SF173 finding is its cause,
// and the plan replaces the image.
func TestPastedInvalidImageErrorPlacesPlaceholder(t *testing.T) {
	s := imageSession(t, store.ShapeStorage, storetest.Image{Mime: "image/png", Filename: "shot.png", Base64: notAPNG})
	p, err := PlanFromError(s, invalidImageText, planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Mutation != "replaceMedia" || p.Changes.Edits[0].ID != storetest.ImagePartID(1) || len(p.Unfixed) != 0 {
		t.Fatalf("plan from the pasted error: %v edits %+v fixed %+v unfixed %+v notes %v", err, p.Changes.Edits, p.Fixed, p.Unfixed, p.Notes)
	}
}

// On OpenAI, data that is no image gets OpenAI's own text: the preflight
// predicts it (SF173), and the error stored after a failed attempt, in
// today's wording and in the older one that also names the 20 MB limit,
// maps to that finding and its placeholder.
func TestInvalidImageOnOpenAI(t *testing.T) {
	images := []storetest.Image{{Mime: "image/png", Filename: "shot.png", Base64: notAPNG}}
	for _, text := range []string{
		opencode.TextOpenAIInvalidImage,
		"You uploaded an unsupported image. Please make sure your image is below 20 MB in size and is of one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
	} {
		repairStoredErrorOn(t, "openai", "gpt-5", images, text, "invalid_image", storetest.ImagePartID(1))
	}
}

// On Gemini the same, with Gemini's text.
func TestInvalidImageOnGemini(t *testing.T) {
	images := []storetest.Image{{Mime: "image/png", Filename: "shot.png", Base64: notAPNG}}
	repairStoredErrorOn(t, "google", "gemini-2.5-pro", images, opencode.TextGeminiInvalidImage, "invalid_image", storetest.ImagePartID(1))
}

// geminiUnableText is Gemini's answer to an image it could not process, as
// users quote it (egoist/chatwise-releases#799, pollinations#4157).
const geminiUnableText = "Unable to process input image. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"

// Gemini's "Unable to process input image" is an invalid-image error: for
// data that is no image it maps to SF173's placeholder like Gemini's other
// text; for an image sessfix finds nothing wrong with, SF302 names none
// and says what to do (retry, then show --sent and drop), and the plan
// changes nothing.
func TestGeminiUnableToProcessImage(t *testing.T) {
	repairStoredErrorOn(t, "google", "gemini-2.5-pro", []storetest.Image{{Mime: "image/png", Filename: "shot.png", Base64: notAPNG}},
		geminiUnableText, "invalid_image", storetest.ImagePartID(1))

	fx := storetest.ImageSession(storetest.Image{Mime: "image/png", Filename: "dot.png", Base64: storetest.NoisyPNG(t, 1, 16, 16)})
	gemini := strings.NewReplacer(`"providerID":"anthropic"`, `"providerID":"google"`, `"modelID":"claude-sonnet-4-5"`, `"modelID":"gemini-2.5-pro"`)
	for i := range fx.Messages {
		fx.Messages[i].Body = []byte(gemini.Replace(string(fx.Messages[i].Body)))
	}
	fx.Messages[1].Body = []byte(strings.Replace(string(fx.Messages[1].Body), `"time":{`,
		`"error":{"name":"APIError","data":{"message":`+jsonString(geminiUnableText)+`,"statusCode":400,"isRetryable":false}},"time":{`, 1))
	fx.Messages[1].Parts = nil
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	fs := scan.CheckSession(s, scanOpts())
	if f := fs0(fs, "SF173"); f.Code != "" {
		t.Fatalf("SF173 on a PNG: %+v", f)
	}
	stored := fs0(fs, "SF302")
	if stored.ErrorType != "invalid_image" || stored.Fix != "" || !strings.HasSuffix(stored.Message, opencode.NoCauseNoteIn(opencode.ErrorInvalidImage, s.ID, s.Store.Path)) {
		t.Fatalf("SF302 should say what to do instead: %+v", stored)
	}
	p, err := Plan(s, []scan.Finding{stored}, planOpts())
	if err != nil || !p.Empty() || len(p.Unfixed) != 1 || !strings.Contains(p.Unfixed[0].Reason, opencode.NoCauseNoteIn(opencode.ErrorInvalidImage, s.ID, s.Store.Path)) {
		t.Fatalf("plan: %v, empty %v, unfixed %+v", err, p.Empty(), p.Unfixed)
	}
}

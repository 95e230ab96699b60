package fix

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// refusedForSize is a session on OpenAI's gpt-5.2-codex whose read of two
// images was answered, and whose next request failed with text (stored
// as OpenCode stores an APIError): anomalyco/opencode#12060's shape.
func refusedForSize(t *testing.T, text string) *storetest.Fixture {
	t.Helper()
	return refusedForSizeOf(t, text, manyToolImages(t, 2))
}

// refusedForSizeOf turns a tool image session (storetest.ToolImageSession)
// into refusedForSize's shape.
func refusedForSizeOf(t *testing.T, text string, fx *storetest.Fixture) *storetest.Fixture {
	t.Helper()
	openai := strings.NewReplacer(`"providerID":"anthropic"`, `"providerID":"openai"`, `"modelID":"claude-sonnet-4-5"`, `"modelID":"gpt-5.2-codex"`)
	for i := range fx.Messages {
		fx.Messages[i].Body = []byte(openai.Replace(string(fx.Messages[i].Body)))
	}
	last := &fx.Messages[2]
	last.Body = []byte(strings.Replace(string(last.Body), `"finish":"stop"}`,
		`"error":{"name":"APIError","data":{"message":`+jsonString(text)+`,"statusCode":413,"isRetryable":false}}}`, 1))
	last.Parts = nil
	return fx
}

// A request refused for its size that no known limit explains: SF180
// names the images the failed request was the first to send (the read
// tool's, with OpenAI's index), and the stored error plans their repair.
// Images too small to shrink to a quarter of their base64 (8×8 px) are
// replaced (replaceMedia) at once; afterwards SF302 reads as repaired and
// SF180 is gone.
func TestRefusedForSizeReplacesTheFreshFiles(t *testing.T) {
	for _, text := range []string{"Payload Too Large", "Request Entity Too Large"} {
		s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), refusedForSize(t, text))))[0]
		fs := scan.CheckSession(s, scanOpts())
		f := fs0(fs, "SF180")
		if f.Severity != scan.Error || f.Fix != "shrinkImage" || f.PartID != storetest.ToolImagePartID ||
			f.ErrorType != string(opencode.ErrorRequestTooLarge) || !strings.HasPrefix(f.Index, "input[") ||
			!strings.Contains(f.Message, "the request was the first to send this part's 2 files (big.png, big.png;") {
			t.Fatalf("%q: SF180 should name the read tool's images: %+v", text, f)
		}
		n := 0
		for _, g := range fs {
			if g.Code == "SF180" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q: %d SF180 findings for one tool result's two images, want one", text, n)
		}
		if g := fs0(fs, "SF175"); g.Code != "" {
			t.Fatalf("%q: SF175 on an OpenAI session: %+v", text, g)
		}
		stored := fs0(fs, "SF302")
		if stored.Severity != scan.Error || stored.Fix != "shrinkImage" || !strings.Contains(stored.Message, "the failed request was the first to send the files of 1 part, which cause it:") {
			t.Fatalf("%q: SF302 should take SF180's files as its causes: %+v", text, stored)
		}
		p, err := Plan(s, []scan.Finding{stored}, planOpts())
		if err != nil || len(p.Changes.Edits) == 0 || len(p.Unfixed) != 0 {
			t.Fatalf("%q: plan from the stored error: %v %+v", text, err, p)
		}
		for _, e := range p.Changes.Edits {
			if e.Mutation != "replaceMedia" {
				t.Errorf("%q: edit %s of %s, want replaceMedia only", text, e.Mutation, e.ID)
			}
		}
		fixed, err := ApplyInMemory(s, p.Changes)
		if err != nil {
			t.Fatal(err)
		}
		after := scan.CheckSession(fixed, scanOpts())
		if g := fs0(after, "SF180"); g.Code != "" {
			t.Errorf("%q: SF180 after the repair: %+v", text, g)
		}
		if g := fs0(after, "SF302"); g.Severity != scan.Info {
			t.Errorf("%q: SF302 after the repair: %s %q", text, g.Severity, g.Message)
		}
		tool := opencode.FindPart(fixed, storetest.ImageAsstID, storetest.ToolImagePartID)
		if n := len(tool.Get("state.attachments").Array()); n != 0 || !strings.Contains(tool.Get("state.output").String(), opencode.MediaRemovedMark) {
			t.Errorf("%q: the tool result keeps %d attachments, output %q", text, n, tool.Get("state.output").String())
		}
	}
}

// Files a request the provider accepted already held are no cause: a
// refusal after a later turn that sent no new file names none, and SF302
// says what to do instead of planning a change.
func TestRefusedForSizeWithoutNewFiles(t *testing.T) {
	fx := manyToolImages(t, 2)
	openai := strings.NewReplacer(`"providerID":"anthropic"`, `"providerID":"openai"`, `"modelID":"claude-sonnet-4-5"`, `"modelID":"gpt-5.2-codex"`)
	for i := range fx.Messages {
		fx.Messages[i].Body = []byte(openai.Replace(string(fx.Messages[i].Body)))
	}
	// A second turn: the user's text, and an attempt refused for size.
	u := storetest.Message{Body: json.RawMessage(`{"id":"msg_00000000000400000000000004","role":"user","time":{"created":1767225604000},"agent":"build","model":{"providerID":"openai","modelID":"gpt-5.2-codex"}}`)}
	u.Parts = append(u.Parts, storetest.Part{Body: json.RawMessage(`{"id":"prt_00000000000400000000000000","type":"text","text":"and now?"}`)})
	a := storetest.Message{Body: json.RawMessage(`{"id":"msg_00000000000500000000000005","role":"assistant","parentID":"msg_00000000000400000000000004","providerID":"openai","modelID":"gpt-5.2-codex","mode":"build","agent":"build",` +
		`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1767225605000,"completed":1767225605500},` +
		`"error":{"name":"APIError","data":{"message":"Payload Too Large","statusCode":413,"isRetryable":false}}}`)}
	fx.Messages = append(fx.Messages, u, a)
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	fs := scan.CheckSession(s, scanOpts())
	if g := fs0(fs, "SF180"); g.Code != "" {
		t.Fatalf("SF180 names a file an accepted request held: %+v", g)
	}
	stored := fs0(fs, "SF302")
	if stored.Severity != scan.Error || stored.Fix != "" || !strings.Contains(stored.Message, opencode.RequestSizeNoCauseNote) {
		t.Fatalf("SF302 should say what to do instead: %+v", stored)
	}
	p, err := Plan(s, []scan.Finding{stored}, planOpts())
	if err != nil || !p.Empty() || len(p.Unfixed) != 1 || !strings.Contains(p.Unfixed[0].Reason, opencode.RequestSizeNoCauseNote) {
		t.Fatalf("plan: %v, empty %v, unfixed %+v", err, p.Empty(), p.Unfixed)
	}
}

// A screenshot a user pasted into the session's first prompt, refused by
// OpenAI's edge for the request's size (stored as 1.18.33 stores a 413, a
// ContextOverflowError with the status text): SF180 names the user's file
// part, and the stored error's repair shrinks it to a quarter of its
// base64, marked as sessfix's, after which nothing above info is left.
func TestRefusedForSizePastedImage(t *testing.T) {
	png := storetest.NoisyPNG(t, 9, 400, 300)
	img := storetest.Image{Mime: "image/png", Filename: "screenshot.png", Base64: png}
	fixed := repairStoredErrorWith(t, opencode.ContextOverflowName, "openai", "gpt-5.2", []storetest.Image{img},
		"Request Entity Too Large", string(opencode.ErrorRequestTooLarge), storetest.ImagePartID(1), "shrinkImage")
	p := opencode.FindPart(fixed, storetest.ImageUserID, storetest.ImagePartID(1))
	checkShrunkFresh(t, p.Get("url").String(), p.Get("mime").String(), len(png))
	if p.Get("filename").String() != "screenshot.png" || p.Get("type").String() != "file" {
		t.Errorf("the part is no longer the user's file: %s", p.Raw[:min(len(p.Raw), 200)])
	}
}

// checkShrunkFresh checks an image shrinkFresh wrote in place of one of
// orig bytes of base64: a data: URL typed mime, at most a quarter of orig,
// an image that decodes, carrying the mark of the repair's time.
func checkShrunkFresh(t *testing.T, url, mime string, orig int) {
	t.Helper()
	data, ok := opencode.Base64Data(url)
	if !ok || !strings.HasPrefix(url, "data:"+mime+";base64,") {
		t.Fatalf("not a data: URL typed %s: %.60s", mime, url)
	}
	if len(data) > orig/4 {
		t.Errorf("the shrunk image has %d bytes of base64, over a quarter of %d", len(data), orig)
	}
	if at := opencode.ShrunkAt(data); at != testNow.UnixMilli() {
		t.Errorf("the shrunk image's mark says %d, want the repair's time %d", at, testNow.UnixMilli())
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, format, err := image.Decode(bytes.NewReader(raw)); err != nil || "image/"+format != mime {
		t.Errorf("the shrunk image does not decode as %s: %s %v", mime, format, err)
	}
}

// The two repairs of a request refused for its size, one after the other:
// a read tool's two large images are shrunk to a quarter each and marked;
// the session reads as repaired. When the provider refuses the next
// attempt too, SF180 names the same (marked) images again, and the repair
// now replaces them by placeholders.
func TestRefusedForSizeShrinksThenReplaces(t *testing.T) {
	var ims []storetest.Image
	for seed := range 2 {
		ims = append(ims, storetest.Image{Mime: "image/png", Base64: storetest.NoisyPNG(t, uint64(20+seed), 300, 200)})
	}
	fx := refusedForSizeOf(t, "Payload Too Large", storetest.ToolImageSession(ims...))
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	fixed, tool := repairFresh(t, s, "shrinkImage", "shrinkImage")
	atts := tool.Get("state.attachments").Array()
	if len(atts) != 2 {
		t.Fatalf("the tool result keeps %d attachments, want both", len(atts))
	}
	for i, a := range atts {
		checkShrunkFresh(t, a.Get("url").String(), a.Get("mime").String(), len(ims[i].Base64))
	}
	after := scan.CheckSession(fixed, scanOpts())
	if g := fs0(after, "SF180"); g.Code != "" {
		t.Errorf("SF180 after the shrink: %+v", g)
	}
	if g := fs0(after, "SF302"); g.Severity != scan.Info {
		t.Errorf("SF302 after the shrink: %s %q", g.Severity, g.Message)
	}

	// The next attempt, after the repair, is refused too.
	dir := t.TempDir()
	s2 := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, dir, refusedAgain(t, fx, tool.Raw))))[0]
	if f := fs0(scan.CheckSession(s2, scanOpts()), "SF180"); !strings.HasSuffix(f.Message, "sessfix shrank this part's image after an earlier refusal, so it is replaced now") {
		t.Errorf("SF180 does not say why the image is replaced now: %q", f.Message)
	}
	fixed, tool = repairFresh(t, s2, "replaceMedia", "replaceMedia")
	if n := len(tool.Get("state.attachments").Array()); n != 0 || !strings.Contains(tool.Get("state.output").String(), opencode.MediaRemovedMark) {
		t.Errorf("after the second repair the tool result keeps %d attachments, output %q", n, tool.Get("state.output").String())
	}
	for _, g := range scan.CheckSession(fixed, scanOpts()) {
		if g.Severity != scan.Info {
			t.Errorf("after the second repair: %s %s %q", g.Severity, g.Code, g.Message)
		}
	}
}

// refusedAgain is fx with its read tool's part as shrunk (toolRaw) and a
// second turn after the repair: the user's text, and an attempt refused
// for size again, later than the repair.
func refusedAgain(t *testing.T, fx *storetest.Fixture, toolRaw []byte) *storetest.Fixture {
	t.Helper()
	out := *fx
	out.Messages = slices.Clone(fx.Messages)
	asst := &out.Messages[1]
	asst.Parts = slices.Clone(asst.Parts)
	for i, p := range asst.Parts {
		if gjson.GetBytes(p.Body, "id").String() == storetest.ToolImagePartID {
			asst.Parts[i].Body = json.RawMessage(toolRaw)
		}
	}
	later := testNow.UnixMilli() + 60_000
	u := storetest.Message{Body: json.RawMessage(fmt.Sprintf(`{"id":"msg_00000000000400000000000004","role":"user","time":{"created":%d},"agent":"build","model":{"providerID":"openai","modelID":"gpt-5.2-codex"}}`, later))}
	u.Parts = append(u.Parts, storetest.Part{Body: json.RawMessage(`{"id":"prt_00000000000400000000000000","type":"text","text":"go on"}`)})
	a := storetest.Message{Body: json.RawMessage(fmt.Sprintf(`{"id":"msg_00000000000500000000000005","role":"assistant","parentID":"msg_00000000000400000000000004","providerID":"openai","modelID":"gpt-5.2-codex","mode":"build","agent":"build",`+
		`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":%d,"completed":%d},`+
		`"error":{"name":"APIError","data":{"message":"Payload Too Large","statusCode":413,"isRetryable":false}}}`, later+1000, later+1500))}
	out.Messages = append(out.Messages, u, a)
	return &out
}

// A tool result that returned an image and a PDF, both first sent by the
// refused request: one edit of the part shrinks the image and replaces
// the PDF (which cannot shrink), and the repair says it did both.
func TestRefusedForSizeShrinksAndReplacesInOnePart(t *testing.T) {
	png := storetest.NoisyPNG(t, 31, 300, 200)
	fx := refusedForSizeOf(t, "Payload Too Large", storetest.ToolImageSession(
		storetest.Image{Mime: "image/png", Base64: png}, pdfOf("report.pdf", 3, false)))
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	fixed, tool := repairFresh(t, s, "shrinkImage", "shrinkImage+replaceMedia")
	atts := tool.Get("state.attachments").Array()
	if len(atts) != 1 {
		t.Fatalf("the tool result keeps %d attachments, want the image", len(atts))
	}
	checkShrunkFresh(t, atts[0].Get("url").String(), atts[0].Get("mime").String(), len(png))
	if out := tool.Get("state.output").String(); !strings.Contains(out, opencode.MediaRemovedMark) || !strings.Contains(out, "application/pdf") {
		t.Errorf("the output does not say the PDF was removed: %q", out)
	}
	for _, g := range scan.CheckSession(fixed, scanOpts()) {
		if g.Severity != scan.Info {
			t.Errorf("after the repair: %s %s %q", g.Severity, g.Code, g.Message)
		}
	}
}

// repairFresh plans the repair of s's SF180 finding on the read tool's
// part, which must name fix, and applies it: one edit of the part, and a
// repair that says it made mutations (no more). It returns the repaired
// session and the part.
func repairFresh(t *testing.T, s *store.Session, fix, mutations string) (*store.Session, *store.Part) {
	t.Helper()
	f := fs0(scan.CheckSession(s, scanOpts()), "SF180")
	if f.Fix != fix || f.PartID != storetest.ToolImagePartID {
		t.Fatalf("SF180 should name %s on the read's result: %+v", fix, f)
	}
	p, err := Plan(s, []scan.Finding{f}, planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Mutation != mutations || len(p.Unfixed) != 0 {
		t.Fatalf("plan: %v %+v unfixed %+v", err, p.Changes.Edits, p.Unfixed)
	}
	if len(p.Fixed) != 1 || p.Fixed[0].Mutations != mutations {
		t.Errorf("the repair should say it made %s: %+v", mutations, p.Fixed)
	}
	fixed, err := ApplyInMemory(s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	return fixed, opencode.FindPart(fixed, storetest.ImageAsstID, storetest.ToolImagePartID)
}

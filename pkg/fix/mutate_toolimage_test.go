package fix

import (
	"bytes"
	"encoding/base64"
	"image"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// toolImageSession loads storetest.ToolImageSession(images...) from a
// storage/ tree (the shape 1.1.65, whose read tool keeps an image whole,
// writes).
func toolImageSession(t *testing.T, images ...storetest.Image) *store.Session {
	t.Helper()
	st := storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), storetest.ToolImageSession(images...)))
	return storetest.LoadAll(t, st)[0]
}

// toolPart is the read tool's part of a tool image session.
func toolPart(t *testing.T, s *store.Session) *store.Part {
	t.Helper()
	for _, p := range s.Message(storetest.ImageAsstID).Parts {
		if p.ID == storetest.ToolImagePartID {
			return p
		}
	}
	t.Fatalf("no part %s", storetest.ToolImagePartID)
	return nil
}

// The read tool returned a 1300×1200 PNG of noise (6.2 MB of base64,
// what 1.1.65 stores whole) and a small one: SF170 names the tool part
// with shrinkImage, and the shrink re-encodes the big attachment under the
// 4 MiB target, mime and URL type following, while the small attachment
// and every other byte of the part stay as they were.
func TestShrinkToolResultImage(t *testing.T) {
	big, small := storetest.NoisyPNG(t, 11, 1300, 1200), storetest.NoisyPNG(t, 3, 40, 30)
	s := toolImageSession(t, storetest.Image{Mime: "image/png", Base64: big}, storetest.Image{Mime: "image/png", Base64: small})
	f := fs0(scan.CheckSession(s, scanOpts()), "SF170")
	if f.Fix != "shrinkImage" || f.PartID != storetest.ToolImagePartID || !strings.Contains(f.Message, "an image a tool returned") {
		t.Fatalf("SF170 should name the tool part with shrinkImage: %+v", f)
	}
	if !strings.Contains(f.ProviderError, ".tool_result.content.1.image.source.base64: image exceeds 5 MB maximum") {
		t.Errorf("the predicted error names the image another way than the API does: %q", f.ProviderError)
	}
	before := toolPart(t, s)
	fixed := fixAndRecheck(t, s, "shrink")
	after := toolPart(t, fixed)
	att := after.Get("state.attachments").Array()
	if len(att) != 2 {
		t.Fatalf("%d attachments after the shrink, want 2", len(att))
	}
	data, ok := opencode.Base64Data(att[0].Get("url").String())
	if !ok || len(data) > shrinkTarget {
		t.Fatalf("the shrunk attachment holds %d bytes of base64 (data URL %v), want at most %d", len(data), ok, shrinkTarget)
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil || att[0].Get("mime").String() != "image/"+format || !strings.HasPrefix(att[0].Get("url").String(), "data:image/"+format+";base64,") {
		t.Errorf("shrunk attachment: %v, mime %q, format %s", err, att[0].Get("mime").String(), format)
	}
	if cfg.Width*1200 != cfg.Height*1300 && cfg.Width*1200/cfg.Height != 1300 {
		t.Errorf("aspect ratio changed: %d×%d", cfg.Width, cfg.Height)
	}
	if att[1].Raw != before.Get("state.attachments.1").Raw {
		t.Error("the small attachment changed")
	}
	for _, path := range []string{"state.output", "state.input", "state.time", "callID", "tool", "state.attachments.0.id"} {
		if after.Get(path).Raw != before.Get(path).Raw {
			t.Errorf("%s changed: %s -> %s", path, before.Get(path).Raw, after.Get(path).Raw)
		}
	}
}

// The stored error of the rejected resume (the path through the
// tool_result, as the API prints it) is repaired by the same shrink, from
// the error alone, and reads as repaired afterwards.
func TestStoredToolImageErrorShrinksIt(t *testing.T) {
	big := storetest.NoisyPNG(t, 11, 1300, 1200)
	fx := storetest.ToolImageSession(storetest.Image{Mime: "image/png", Base64: big})
	text := "messages.2.content.0.tool_result.content.1.image.source.base64: image exceeds 5 MB maximum: 6244444 bytes > 5242880 bytes"
	last := &fx.Messages[2]
	last.Body = []byte(strings.Replace(string(last.Body), `"finish":"stop"}`,
		`"error":{"name":"APIError","data":{"message":`+jsonString(text)+`,"isRetryable":false}}}`, 1))
	last.Parts = nil
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	before := scan.CheckSession(s, scanOpts())
	f := fs0(before, "SF302")
	if f.Severity != scan.Error || f.Fix != "shrinkImage" || strings.Contains(f.Message, "not repaired yet") {
		t.Fatalf("SF302 should name shrinkImage as the stored error's repair: %+v", f)
	}
	p, err := Plan(s, []scan.Finding{f}, planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].Mutation != "shrinkImage" || p.Changes.Edits[0].ID != storetest.ToolImagePartID {
		t.Fatalf("plan from the stored error: %v %+v", err, p)
	}
	fixed, err := ApplyInMemory(s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	if g := fs0(scan.CheckSession(fixed, scanOpts()), "SF302"); g.Severity != scan.Info || !strings.Contains(g.Message, "shrunk since") {
		t.Errorf("SF302 after the shrink: %s %q", g.Severity, g.Message)
	}
}

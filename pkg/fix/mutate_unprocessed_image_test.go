package fix

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// cutShortPNG is a PNG whose header decodes but whose pixel data stops
// half way: a file read while it was still being written.
func cutShortPNG(t *testing.T) string {
	raw, err := base64.StdEncoding.DecodeString(storetest.NoisyPNG(t, 3, 48, 48))
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw[:len(raw)/2])
}

// refusedImageSession is ImageSession with old.png accepted in its first
// turn, and a second turn that attaches new.png (a PNG cut short in its
// pixel data), whose attempts (attempts of them, each after a prompt)
// failed with text.
func refusedImageSession(t *testing.T, shape store.Shape, provider, model, text string, attempts int) *store.Session {
	t.Helper()
	fx := storetest.ImageSession(storetest.Image{Mime: "image/png", Filename: "old.png", Base64: storetest.NoisyPNG(t, 1, 16, 16)})
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for i := range attempts {
		n := string(rune('3' + 2*i))
		uid := fmt.Sprintf("msg_00000000000%d0000000000000%d", 3+2*i, 3+2*i)
		aid := fmt.Sprintf("msg_00000000000%d0000000000000%d", 4+2*i, 4+2*i)
		u := storetest.Message{Body: json.RawMessage(`{"id":"` + uid + `","role":"user","time":{"created":176722560` + n + `000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`)}
		u.Parts = append(u.Parts, storetest.Part{Body: json.RawMessage(`{"id":"prt_00000000000` + fmt.Sprint(3+2*i) + `00000000000000","type":"text","text":"and this one"}`)})
		if i == 0 {
			u.Parts = append(u.Parts, storetest.Part{Body: json.RawMessage(`{"id":"prt_00000000000300000000000001","type":"file","mime":"image/png","filename":"new.png","url":` +
				q("data:image/png;base64,"+cutShortPNG(t)) + `}`)})
		}
		a := storetest.Message{Body: json.RawMessage(`{"id":"` + aid + `","role":"assistant","parentID":"` + uid + `","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","agent":"build",` +
			`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":176722560` + n + `500,"completed":176722560` + n + `600},` +
			`"error":{"name":"APIError","data":{"message":` + q(text) + `,"statusCode":400,"isRetryable":false}}}`)}
		fx.Messages = append(fx.Messages, u, a)
	}
	on := strings.NewReplacer(`"providerID":"anthropic"`, `"providerID":"`+provider+`"`, `"modelID":"claude-sonnet-4-5"`, `"modelID":"`+model+`"`)
	for i := range fx.Messages {
		fx.Messages[i].Body = []byte(on.Replace(string(fx.Messages[i].Body)))
	}
	return storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, shape, t.TempDir(), fx)))[0]
}

// The API could not process an image whose header reads as a PNG: SF173
// names nothing, SF181 names the image the failed request was the first to
// send (new.png), not old.png, which an accepted request already held;
// SF302 maps the stored error to it; the repair replaces new.png only, and
// after it nothing above info is left.
func TestUnprocessedImageReplaced(t *testing.T) {
	const text = "Could not process image"
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			s := refusedImageSession(t, shape, "anthropic", "claude-sonnet-4-5", text, 1)
			fs := scan.CheckSession(s, scanOpts())
			if f := fs0(fs, "SF173"); f.Code != "" {
				t.Fatalf("SF173 on a PNG whose header decodes: %+v", f)
			}
			var got []string
			for _, f := range fs {
				if f.Code == scan.SF181 {
					got = append(got, f.PartID)
					if f.Fix != "replaceMedia" || f.Severity != scan.Error || f.ErrorType != "invalid_image" || !strings.Contains(f.Message, "new.png") {
						t.Errorf("SF181: %+v", f)
					}
				}
			}
			if strings.Join(got, " ") != "prt_00000000000300000000000001" {
				t.Fatalf("SF181 names %v, want new.png's part only\n%v", got, codes(fs))
			}
			if f := fs0(fs, "SF302"); f.Fix != "replaceMedia" || f.ErrorType != "invalid_image" || f.Severity != scan.Error ||
				!strings.Contains(f.Message, "the failed request was the first to send 1 image that causes it: message ") {
				t.Fatalf("SF302 should map the stored error to SF181's image: %+v", f)
			}
			fixed := fixAndRecheck(t, s, "placeholder")
			if p := fixed.Message("msg_00000000000300000000000003").Parts[1]; p.Get("type").String() != "text" ||
				!strings.HasPrefix(p.Get("text").String(), "[sessfix removed the image new.png (image/png, ") ||
				!strings.Contains(p.Get("text").String(), text) {
				t.Errorf("new.png: %.300s", p.Raw)
			}
			if p := fixed.Message(storetest.ImageUserID).Parts[1]; p.Get("type").String() != "file" {
				t.Errorf("old.png was replaced too: %.200s", p.Raw)
			}
			for _, f := range scan.CheckSession(fixed, scanOpts()) {
				if f.Severity != scan.Info {
					t.Errorf("after the repair: %s %s %s", f.Severity, f.Code, f.Message)
				}
			}
		})
	}
}

// Gemini's "Unable to process input image. Please retry…" asks for a
// retry: after one refusal SF181 names nothing and SF302 says to resume
// once more; once the resume was refused the same way, SF181 names new.png
// and the repair replaces it.
func TestUnprocessedImageAfterRetry(t *testing.T) {
	once := refusedImageSession(t, store.ShapeStorage, "google", "gemini-2.5-pro", geminiUnableText, 1)
	fs := scan.CheckSession(once, scanOpts())
	if f := fs0(fs, "SF181"); f.Code != "" {
		t.Fatalf("SF181 before the retry the provider asked for: %+v", f)
	}
	if f := fs0(fs, "SF302"); f.Fix != "" || !strings.HasSuffix(f.Message, opencode.NoCauseNoteIn(opencode.ErrorInvalidImage, once.ID, once.Store.Path)) {
		t.Fatalf("SF302 should ask for a retry: %+v", f)
	}
	if p, err := Plan(once, fs, planOpts()); err != nil || !p.Empty() {
		t.Fatalf("plan before the retry: %v %+v", err, p.Fixed)
	}

	twice := refusedImageSession(t, store.ShapeStorage, "google", "gemini-2.5-pro", geminiUnableText, 2)
	f := fs0(scan.CheckSession(twice, scanOpts()), "SF181")
	if f.PartID != "prt_00000000000300000000000001" || f.Fix != "replaceMedia" {
		t.Fatalf("SF181 after the retry failed too: %+v", f)
	}
	fixed := fixAndRecheck(t, twice, "placeholder")
	if p := fixed.Message("msg_00000000000300000000000003").Parts[1]; !strings.Contains(p.Get("text").String(), "new.png") {
		t.Errorf("new.png: %.300s", p.Raw)
	}
}

// xAI's "Invalid PNG image", which users saw for a PNG that decodes, is an
// invalid-image error too: SF181 names new.png and the repair replaces it.
func TestUnprocessedImageOnXAI(t *testing.T) {
	s := refusedImageSession(t, store.ShapeSQLite, "xai", "grok-4", "Invalid PNG image", 1)
	f := fs0(scan.CheckSession(s, scanOpts()), "SF181")
	if f.PartID != "prt_00000000000300000000000001" || f.Fix != "replaceMedia" || f.ErrorType != "invalid_image" {
		t.Fatalf("SF181 on xAI's text: %+v", f)
	}
	fixed := fixAndRecheck(t, s, "placeholder")
	if p := fixed.Message("msg_00000000000300000000000003").Parts[1]; !strings.Contains(p.Get("text").String(), "Invalid PNG image") {
		t.Errorf("new.png: %.300s", p.Raw)
	}
}

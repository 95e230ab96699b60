package fix

import (
	"encoding/json"
	"strings"
	"testing"

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
	fx := manyToolImages(t, 2)
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
// tool's, with OpenAI's index), the stored error plans replaceMedia on
// them, and afterwards SF302 reads as repaired and SF180 is gone.
func TestRefusedForSizeReplacesTheFreshFiles(t *testing.T) {
	for _, text := range []string{"Payload Too Large", "Request Entity Too Large"} {
		s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), refusedForSize(t, text))))[0]
		fs := scan.CheckSession(s, scanOpts())
		f := fs0(fs, "SF180")
		if f.Severity != scan.Error || f.Fix != "replaceMedia" || f.PartID != storetest.ToolImagePartID ||
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
		if stored.Severity != scan.Error || stored.Fix != "replaceMedia" || !strings.Contains(stored.Message, "the failed request was the first to send the files of 1 part, which cause it:") {
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
// part, and the stored error's repair replaces it by a placeholder, after
// which nothing above info is left.
func TestRefusedForSizePastedImage(t *testing.T) {
	img := storetest.Image{Mime: "image/png", Filename: "screenshot.png", Base64: storetest.NoisyPNG(t, 9, 64, 64)}
	repairStoredErrorNamed(t, opencode.ContextOverflowName, "openai", "gpt-5.2", []storetest.Image{img},
		"Request Entity Too Large", string(opencode.ErrorRequestTooLarge), storetest.ImagePartID(1))
}

//go:build acceptance

package e2e

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/mockbedrock"
	"github.com/sessfix/sessfix/internal/opencodetest/mockgemini"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
)

// TestInvalidImagePlaceholder: a session on OpenCode 1.18.33 holds an
// attached shot.png whose bytes are not a PNG. 1.18.33 refuses such a file
// at `opencode run --file` before it stores anything (it exits 1 with
// `{"_tag":"BadRequest"}` and sends no request: OBSERVED.md), so the test
// attaches a real small PNG with a real run and then replaces the stored
// part's data with text (the one edit a real run cannot make). The strict
// mock rejects the resume with Anthropic's invalid-image error, and every
// resume sends the same data again. scan names the image (SF173) and the
// stored error (SF302), both repaired by replaceMedia; `fix --yes` with
// default flags turns the file part into a text part saying what was
// removed, undo puts the bytes back exactly, and after the repair made
// again the resume is accepted and sends the placeholder where the image
// was. The other timing, before any resume, on a copy of the store as the
// edit left it: scan predicts the mock's text (SF173), fix repairs, undo
// restores exactly, and the first resume after the fix is accepted.
func TestInvalidImagePlaceholder(t *testing.T) {
	parallel(t)
	invalidImagePlaceholder(t, "attached-image-not-an-image", opencodetest.DefaultModel, mockanthropic.TextInvalidImage)
}

// TestInvalidImagePlaceholderOpenAI is TestInvalidImagePlaceholder with
// the openai provider (the Responses API): the strict mock refuses with
// OpenAI's own text for data that is no image, as users quote it.
func TestInvalidImagePlaceholderOpenAI(t *testing.T) {
	parallel(t)
	invalidImagePlaceholder(t, "attached-image-not-an-image-openai", opencodetest.OpenAIModel, mockopenai.MsgInvalidImage)
}

// TestInvalidImagePlaceholderGemini is TestInvalidImagePlaceholder with a
// Gemini model: the strict mock refuses with Gemini's text for data that
// is no image, as users quote it.
func TestInvalidImagePlaceholderGemini(t *testing.T) {
	parallel(t)
	invalidImagePlaceholder(t, "attached-image-not-an-image-gemini", opencodetest.GoogleModel, mockgemini.TextInvalidImage)
}

// TestInvalidImagePlaceholderBedrock is TestInvalidImagePlaceholder
// through Bedrock Converse with Claude: the strict mock refuses with
// Anthropic's text after Bedrock's "The model returned the following
// errors: " (mockbedrock.MsgClaudeInvalidImage, modelled on the 5 MB error
// users report), which sessfix predicts.
func TestInvalidImagePlaceholderBedrock(t *testing.T) {
	parallel(t)
	invalidImagePlaceholder(t, "attached-image-not-an-image-bedrock", opencodetest.BedrockModel, mockbedrock.MsgClaudeInvalidImage)
}

// TestInvalidImagePlaceholderZen is TestInvalidImagePlaceholderOpenAI
// with a GPT model of OpenCode's own provider (Zen), which OpenCode sends
// through the same Responses API package: sessfix knows it as OpenAI's.
func TestInvalidImagePlaceholderZen(t *testing.T) {
	parallel(t)
	e := invalidImagePlaceholder(t, "attached-image-not-an-image-zen", opencodetest.ZenOpenAIModel, mockopenai.MsgInvalidImage)
	// What makes sessfix's OpenAI rules OpenCode's for this model: every
	// agent request went to the Responses API, as the openai provider's do.
	var paths []string
	for _, c := range e.OpenAI.AgentRequests() {
		paths = append(paths, c.Path)
	}
	allWentTo(t, "the Responses API", paths, func(p string) bool { return strings.HasSuffix(p, "/responses") })
}

// allWentTo fails the test unless there are agent requests and every one
// of them went to a path ok accepts (what names the API).
func allWentTo(t *testing.T, what string, paths []string, ok func(path string) bool) {
	t.Helper()
	if len(paths) == 0 {
		t.Errorf("the mock received no agent request for %s", what)
	}
	for i, p := range paths {
		if !ok(p) {
			t.Errorf("agent request %d went to %s, not %s", i, p, what)
		}
	}
}

// TestInvalidImagePlaceholderZenGemini is TestInvalidImagePlaceholderGemini
// with a Gemini model of OpenCode's own provider (Zen), which OpenCode
// sends through the same Gemini API package: sessfix knows it as Google's.
func TestInvalidImagePlaceholderZenGemini(t *testing.T) {
	parallel(t)
	e := invalidImagePlaceholder(t, "attached-image-not-an-image-zen-gemini", opencodetest.ZenGoogleModel, mockgemini.TextInvalidImage)
	var paths []string
	for _, c := range e.Gemini.ChatRequests() {
		paths = append(paths, c.Path)
	}
	allWentTo(t, "Gemini's generateContent for the model", paths, func(p string) bool { return strings.Contains(p, "/models/gemini-3-flash:") })
}

// TestEmptyImagePlaceholder is TestInvalidImagePlaceholder with an
// attached image of 0 bytes (a screenshot attached before it was written
// to disk, anthropics/claude-code#36712): the strict mock refuses it with
// the API's own text, which names the block (`messages.N.content.M.image.
// source.base64: image cannot be empty`), and sessfix predicts that text.
func TestEmptyImagePlaceholder(t *testing.T) {
	parallel(t)
	invalidImagePlaceholderOf(t, invalidImage{name: "attached-image-empty", model: opencodetest.DefaultModel, data: "",
		what: "data is empty (0 bytes)", with: "with nothing",
		want: func(rejected string) bool {
			return strings.HasPrefix(rejected, "messages.") && strings.HasSuffix(rejected, ".image.source.base64: "+mockanthropic.TextEmptyImage)
		}})
}

// invalidImage is one invalidImagePlaceholder case: the data the stored
// image gets, and the mock's refusal it must cause.
type invalidImage struct {
	name, model string
	data        string // the base64 stored in place of the picture
	what        string // what the data is, for the row
	with        string // what the edit puts in, for the row
	want        func(rejected string) bool
}

// invalidImagePlaceholder runs the test with model and returns its Env.
func invalidImagePlaceholder(t *testing.T, name, model, want string) *opencodetest.Env {
	return invalidImagePlaceholderOf(t, invalidImage{name: name, model: model,
		data: base64.StdEncoding.EncodeToString([]byte("this is not a picture, only text in a file named shot.png\n")),
		what: "bytes are text", with: "with the text", want: func(rejected string) bool { return rejected == want }})
}

// invalidImagePlaceholderOf runs the test with one case.
func invalidImagePlaceholderOf(t *testing.T, c invalidImage) *opencodetest.Env {
	name, model := c.name, c.model
	acquire(t)
	ctx := testCtx(t, 12*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Model: model, Timeout: 4 * time.Minute})
	mock := imageMockOf(e)
	shot := writeNoisyPNG(t, e.ProjectDir, "shot.png", 7, 64, 48)
	res, err := e.Run(ctx, "run", "--format", "json", "What is in this picture?", "--file", shot)
	if err != nil {
		t.Fatal(err)
	}
	session := res.SessionID
	if session == "" {
		session = onlySession(t, e)
	}
	d := dataDir{t, e.DataDir()}
	text := c.data
	edited := false
	for _, m := range d.session(session) {
		for _, p := range m.Parts {
			if u, _ := p.Data["url"].(string); p.Type() == "file" && strings.HasPrefix(u, "data:image/") {
				d.setPart(m.ID, p.ID, "url", "data:image/png;base64,"+text, "mime", "image/png")
				edited = true
			}
		}
	}
	if !edited {
		t.Fatalf("OpenCode stored no image part for the attached file\n%s", res)
	}
	saved := saveData(t, e)
	rejected := resumeVerdict(ctx, t, e, mock.calls, session, "Look again.")
	if !c.want(rejected) {
		t.Fatalf("the resume was not rejected for the image: %q", rejected)
	}
	fs, scan := scanStore(t, e, session)
	var pre, err302 *finding
	for i := range fs {
		switch fs[i].Code {
		case "SF173":
			pre = &fs[i]
		case "SF302":
			err302 = &fs[i]
		}
	}
	if pre == nil || pre.Fix != "replaceMedia" || pre.ProviderError != rejected || err302 == nil || err302.Fix != "replaceMedia" || err302.ErrorType != "invalid_image" {
		t.Fatalf("scan does not report the image (SF173) and the stored error (SF302, invalid_image) with replaceMedia\n%s", scan)
	}

	// fix repairs it; undo puts every row back byte for byte; the repair
	// made again holds on the resume.
	broken := storeState(t, d)
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 || !strings.Contains(fix.Stdout+fix.Stderr, "replaceMedia") {
		t.Fatalf("fix\n%s", fix)
	}
	if u := sessfix(t, e, "undo", "--last"); u.ExitCode != 0 {
		t.Fatalf("undo --last:\n%s", u)
	}
	if storeState(t, d) != broken {
		t.Fatal("undo did not restore the store exactly")
	}
	fix = sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 {
		t.Fatalf("fix again\n%s", fix)
	}
	after, res2 := scanStore(t, e, session)
	for _, f := range after {
		if f.Severity != "info" {
			t.Errorf("after fix: %s %s %s\n%s", f.Severity, f.Code, f.Message, res2)
		}
	}
	n, sentBefore := len(modelChatBodies(e)), len(mock.images(e))
	if rej := resumeVerdict(ctx, t, e, mock.calls, session, "And now?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is rejected: %s\n%s", rej, fix)
	}
	for _, ims := range mock.images(e)[sentBefore:] {
		if len(ims) > 0 {
			t.Error("the resume still sends an image")
		}
	}
	placeholder := false
	for _, b := range modelChatBodies(e)[n:] {
		placeholder = placeholder || bytes.Contains(b, []byte("[sessfix removed the image shot.png (image/png, "))
	}
	if !placeholder {
		t.Error("the resume does not send the placeholder text")
	}
	// The other timing: the same store before any resume. scan predicts
	// the mock's very text from the stored history alone; fix, undo and
	// the first resume as above.
	first := beforeAnyResume(ctx, t, e, saved, session, sentImages{}, func(fs []finding) {
		if pre := withCode(fs, "SF173"); len(pre) != 1 || pre[0].ProviderError != rejected || pre[0].Fix != "replaceMedia" {
			t.Errorf("before any resume, scan does not predict the mock's\n  %q\n%v", rejected, fs)
		}
	})
	recordWedged(t, wedgedRow{
		Case: name, Test: t.Name(), OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: "an attached shot.png whose " + c.what + "; 1.18.33 refuses such a file at `run --file` before storing it, so the test " +
			"attaches a small PNG with a real run and replaces its stored data " + c.with + " (the one edit)",
		Before: rejectedAs(rejected), Scan: codes(codesWithSeverity(fs)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: first,
	})
	return e
}

// modelChatBodies are the bodies of the agent requests the mock of the
// Env's model received, in order.
func modelChatBodies(e *opencodetest.Env) [][]byte {
	switch f, _ := opencodetest.FamilyOf(e.Model); f {
	case opencodetest.Responses:
		return chatBodies(e.OpenAI.Requests())
	case opencodetest.Gemini:
		return chatBodies(e.Gemini.Requests())
	case opencodetest.Bedrock:
		return chatBodies(e.Bedrock.Requests())
	}
	return chatBodies(e.Mock.Requests())
}

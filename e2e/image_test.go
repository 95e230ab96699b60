//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // the shrunk images' decoders
	_ "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func anthropicCalls(e *opencodetest.Env) []mockCall { return agentCalls(e.Mock.Requests()) }

// imageMock is the mock of the Env's model, as the image tests read it:
// its agent calls, and the images of each of its chat requests, in order.
type imageMock struct {
	calls  func(*opencodetest.Env) []mockCall
	images func(*opencodetest.Env) [][]mockanthropic.RequestImage
}

func imageMockOf(e *opencodetest.Env) imageMock {
	switch f, _ := opencodetest.FamilyOf(e.Model); f {
	case opencodetest.Responses:
		return imageMock{openAICalls, func(e *opencodetest.Env) [][]mockanthropic.RequestImage {
			var out [][]mockanthropic.RequestImage
			for _, call := range e.OpenAI.Requests() {
				if !call.Chat || call.Parsed == nil || call.Parsed.Responses == nil {
					continue
				}
				var ims []mockanthropic.RequestImage
				for _, im := range call.Parsed.Responses.Images() {
					ims = append(ims, mockanthropic.RequestImage(im))
				}
				out = append(out, ims)
			}
			return out
		}}
	case opencodetest.Gemini:
		return imageMock{geminiCalls, func(e *opencodetest.Env) [][]mockanthropic.RequestImage {
			var out [][]mockanthropic.RequestImage
			for _, call := range e.Gemini.Requests() {
				if !call.Chat || call.Parsed == nil {
					continue
				}
				var ims []mockanthropic.RequestImage
				for k, data := range call.Parsed.Images() {
					ims = append(ims, mockanthropic.RequestImage{Path: fmt.Sprintf("inline image %d", k), Data: data})
				}
				out = append(out, ims)
			}
			return out
		}}
	case opencodetest.Bedrock:
		return imageMock{bedrockCalls, func(e *opencodetest.Env) [][]mockanthropic.RequestImage { return chatImages(e.Bedrock.Requests()) }}
	}
	return imageMock{anthropicCalls, func(e *opencodetest.Env) [][]mockanthropic.RequestImage { return chatImages(e.Mock.Requests()) }}
}

// chatImages are the images of each of a mock's chat requests, in order.
func chatImages[P interface {
	Images() []mockanthropic.RequestImage
}, A any](rs []mockstream.Call[P, A]) [][]mockanthropic.RequestImage {
	var out [][]mockanthropic.RequestImage
	for _, call := range rs {
		if call.Chat {
			out = append(out, call.Parsed.Images())
		}
	}
	return out
}

// TestPastedImageOverFiveMB: a session on OpenCode 1.18.33 holds a pasted
// PNG of 6.2 MB of base64. 1.18.33 itself re-encodes an image attached
// with `opencode run --file` to a JPEG under the limit before it stores it
// (OBSERVED.md), so a real run on it cannot store one that big; stores
// written by other versions or paths hold them. The test therefore pastes
// an image with a real run, then replaces the stored image's data with the
// big PNG: that edit is the one step a real run cannot make. The store is
// then repaired in both timings, with default flags:
//   - right after a failed resume: the resume is really rejected by the
//     strict mock with Anthropic's "image exceeds 5 MB maximum" text, which
//     OpenCode stores on the failed attempt; scan predicts the error (SF170)
//     and maps the stored one (SF302); `sessfix fix --yes` shrinks the
//     image, and the next resume is accepted, the image still sent, under
//     5 MB;
//   - before any resume, on a copy of the store as the edit left it: scan
//     predicts the very text the mock answered (SF170) from the stored
//     history alone, `fix --yes` shrinks the image, undo restores the store
//     exactly, and the first resume after the fix is accepted.
func TestPastedImageOverFiveMB(t *testing.T) {
	parallel(t)
	pastedImageOverFiveMB(t, pastedCase{name: "pasted-image-over-5mb", what: "Anthropic's limit"})
}

// TestPastedImageOverFiveMBBedrock is the same case through Bedrock
// Converse with Claude (opencodetest.BedrockModel): Claude's 5 MB on the
// base64 of image.source.bytes, its error after Bedrock's "The model
// returned the following errors: " (mockbedrock.MsgClaudeImageTooLarge).
func TestPastedImageOverFiveMBBedrock(t *testing.T) {
	parallel(t)
	pastedImageOverFiveMB(t, pastedCase{name: "pasted-image-over-5mb-bedrock", what: "Claude's limit on Bedrock", model: opencodetest.BedrockModel})
}

type pastedCase struct {
	name, what string
	model      string // "" for the default (Anthropic)
}

// predictsText reports whether a preflight finding's provider error is the
// text the mock answered: the same from the image's path on, and the same
// prefix before it (the mock's message index may count messages the
// finding's request does not hold).
func predictsText(rejected string, f finding) bool {
	before, after, ok := strings.Cut(f.ProviderError, f.Index)
	return ok && strings.HasSuffix(rejected, after) && strings.HasPrefix(rejected, before)
}

// writeNoisyPNG writes a w×h PNG of noise from seed (storetest.NoisyPNG)
// as dir/name and returns its path.
func writeNoisyPNG(t *testing.T, dir, name string, seed uint64, w, h int) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(storetest.NoisyPNG(t, seed, w, h))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func pastedImageOverFiveMB(t *testing.T, c pastedCase) {
	acquire(t)
	ctx := testCtx(t, 12*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Model: c.model, Timeout: 4 * time.Minute})
	mock := imageMockOf(e)
	shot := writeNoisyPNG(t, e.ProjectDir, "shot.png", 7, 64, 48)
	// The prompt goes before --file: every word after --file is read as
	// another file (OBSERVED.md).
	res, err := e.Run(ctx, "run", "--format", "json", "What is in this picture?", "--file", shot)
	if err != nil {
		t.Fatal(err)
	}
	session := res.SessionID
	if session == "" {
		session = onlySession(t, e)
	}
	d := dataDir{t, e.DataDir()}
	big := storetest.NoisyPNG(t, 11, 1300, 1200) // 6.2 MB of base64
	pasted := false
	for _, m := range d.session(session) {
		for _, p := range m.Parts {
			if u, _ := p.Data["url"].(string); p.Type() == "file" && strings.HasPrefix(u, "data:image/") {
				d.setPart(m.ID, p.ID, "url", "data:image/png;base64,"+big, "mime", "image/png")
				pasted = true
			}
		}
	}
	if !pasted {
		t.Fatal("OpenCode stored no image part for the attached file")
	}
	saved := saveData(t, e)

	rejected := resumeVerdict(ctx, t, e, mock.calls, session, "Look again.")
	if !strings.Contains(rejected, "image exceeds 5 MB maximum: ") {
		t.Fatalf("the mock did not reject the big image: %q", rejected)
	}
	pre, found := imageFindings(t, e, session, "SF170", "image_too_large", "shrinkImage")
	if !predictsText(rejected, *pre) {
		t.Errorf("mock rejected with\n  %q\nSF170 predicted\n  %q", rejected, pre.ProviderError)
	}
	want := sentImages{min: 1}
	fix := repairImages(ctx, t, e, session, want)

	// The other timing: the same store before any resume. The mock's
	// message index counts the failed attempt's messages, which the store
	// before the resume does not hold: the prediction is compared from the
	// image block's path on.
	first := beforeAnyResume(ctx, t, e, saved, session, want, func(fs []finding) {
		pre := withCode(fs, "SF170")
		if len(pre) != 1 || !predictsText(rejected, pre[0]) {
			t.Errorf("before any resume, scan does not predict the mock's\n  %q\n%v", rejected, fs)
		}
	})
	recordWedged(t, wedgedRow{
		Case: c.name, Test: t.Name(), OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: "a pasted image over 5 MB of base64, " + c.what + "; 1.18.33 re-encodes what `run --file` attaches, so the test " +
			"pastes a small image with a real run and replaces its stored data with a 6.2 MB PNG (the one edit)",
		Before: rejectedAs(rejected), Scan: codes(codesWithSeverity(found)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: first,
	})
}

// onlySession is the id of the one session sessfix lists in the data dir.
func onlySession(t *testing.T, e *opencodetest.Env) string {
	t.Helper()
	res := sessfix(t, e, "sessions", "--format", "json", e.DataDir())
	var doc struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil || len(doc.Sessions) != 1 {
		t.Fatalf("want one session: %v\n%s", err, res.Stdout)
	}
	return doc.Sessions[0].ID
}

// imageFindings scans the session after a resume rejected for its images:
// it wants the preflight's finding (code) and the stored error (SF302 of
// errorType), both repaired by fix, and returns the preflight's finding
// and every finding of the session.
func imageFindings(t *testing.T, e *opencodetest.Env, session, code, errorType, fix string) (*finding, []finding) {
	t.Helper()
	fs, scan := scanStore(t, e, session)
	var pre, stored *finding
	for i := range fs {
		switch fs[i].Code {
		case code:
			pre = &fs[i]
		case "SF302":
			stored = &fs[i]
		}
	}
	if pre == nil || pre.Fix != fix || stored == nil || stored.Fix != fix || stored.ErrorType != errorType {
		t.Fatalf("scan does not report the images (%s) and the stored error (SF302, %s) with %s\n%s", code, errorType, fix, scan)
	}
	return pre, fs
}

// saveData copies the Env's data dir as it is now, for the timing run
// later on a copy.
func saveData(t *testing.T, e *opencodetest.Env) string {
	t.Helper()
	dir := t.TempDir()
	if err := e.SaveData(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sentImages is what the resume after a fix must send: at least min
// images, inside tool results when tool.
type sentImages struct {
	min  int
	tool bool
}

// repairImages repairs the session's data dir with default flags (`fix
// --yes`), wants no finding above info left, and resumes: the mock must
// accept, and the accepted requests must still send the images (want),
// each one an image that decodes, within the size limit and the side limit
// that applies to its request. It returns fix's result.
func repairImages(ctx context.Context, t *testing.T, e *opencodetest.Env, session string, want sentImages) *sfResult {
	t.Helper()
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 {
		t.Fatalf("fix\n%s", fix)
	}
	if fs, res := scanStore(t, e, session); len(fs) > 0 {
		for _, f := range fs {
			if f.Severity != "info" {
				t.Errorf("after fix: %s %s %s\n%s", f.Severity, f.Code, f.Message, res)
			}
		}
	}
	mock := imageMockOf(e)
	before := len(mock.images(e))
	if rej := resumeVerdict(ctx, t, e, mock.calls, session, "And now?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is rejected: %s\n%s", rej, fix)
	}
	most := 0
	for _, ims := range mock.images(e)[before:] {
		n := 0
		for _, im := range ims {
			if im.Tool != want.tool {
				continue
			}
			n++
			checkSentImage(t, im, len(ims))
		}
		most = max(most, n)
	}
	if most < want.min {
		t.Errorf("the resume sends %d images (in tool results: %v), want at least %d\n%s", most, want.tool, want.min, fix)
	}
	return fix
}

// checkSentImage wants an image a request of n images sent to decode, and
// to be within the limits: the mock skips the side checks of data that
// does not decode, this does not.
func checkSentImage(t *testing.T, im mockanthropic.RequestImage, n int) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(im.Data)
	if err != nil {
		t.Errorf("%s: not base64: %v", im.Path, err)
		return
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		t.Errorf("%s: not an image: %v", im.Path, err)
		return
	}
	side := mockanthropic.ImageSideMax
	if n > mockanthropic.ManyImages {
		side = mockanthropic.ManyImagesSideMax
	}
	if len(im.Data) > mockanthropic.ImageBase64Max || cfg.Width > side || cfg.Height > side {
		t.Errorf("%s: %d×%d px, %d bytes of base64 in a request of %d images", im.Path, cfg.Width, cfg.Height, len(im.Data), n)
	}
}

// beforeAnyResume is the repair before any resume: a fresh OpenCode home
// of the Env's version gets a copy of the data dir saved before the first
// resume (in the Env's project directory, where OpenCode resumes it);
// scan's findings there go to predicted, which checks the preflight's;
// `fix --yes` repairs with default flags, `undo --last` must restore the
// store exactly, the fix runs again, and the first resume must be accepted
// with the images still sent (want). It returns the timing's cell of the
// case's row.
func beforeAnyResume(ctx context.Context, t *testing.T, e *opencodetest.Env, saved, session string, want sentImages, predicted func([]finding)) *firstRow {
	t.Helper()
	c := opencodetest.NewT(t, opencodetest.Options{Version: e.Version, Model: e.Model, Timeout: e.Timeout})
	if err := c.LoadData(saved); err != nil {
		t.Fatal(err)
	}
	c.ProjectDir = e.ProjectDir
	fs, _ := scanStore(t, c, session)
	predicted(fs)
	d := dataDir{t, c.DataDir()}
	state := storeState(t, d)
	fix := sessfix(t, c, "fix", "--yes", c.DataDir())
	if fix.ExitCode != 0 {
		t.Fatalf("fix before any resume\n%s", fix)
	}
	if storeState(t, d) == state {
		t.Fatalf("fix before any resume changed nothing\n%s", fix)
	}
	if res := sessfix(t, c, "undo", "--last"); res.ExitCode != 0 || storeState(t, d) != state {
		t.Fatalf("undo did not restore the store exactly\n%s", res)
	}
	fix = repairImages(ctx, t, c, session, want)
	return &firstRow{Scan: codes(codesWithSeverity(fs)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted"}
}

//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
	"github.com/sessfix/sessfix/pkg/scan"
)

// openAIImagesTotalCount and the size of each PNG make the read results
// over OpenAI's 50 MB of images a request once 1.18.33 has re-encoded
// them (each 1300×1200 noisy PNG becomes a JPEG of about 2.2 MB: 20 of
// them were 43.6 MB, OBSERVED.md).
const openAIImagesTotalCount = 25

// TestImagesOverOpenAIRequestTotal: SF176 on real OpenCode 1.18.33 with
// the openai provider (the Responses API). The model reads 25 noisy PNGs
// of 1300×1200 px in one step (the read tool, parallel calls); OpenCode
// stores each in its tool result and sends them all in the next request,
// which holds more than OpenAI's 50 MB of image bytes: the strict mock
// refuses it, with its own stand-in text (OpenAI documents the limit, not
// its error), and every resume again. A real run, no edit;
// `compaction.auto: false` as in the other size cases. Both timings, with
// default flags: right after the failed turn scan reports SF176 and
// `fix --yes` repairs it, undo restores the store exactly; after a
// refused resume `fix --yes` shrinks the images over their share, and the
// resume is accepted with every image still sent, each one decoding, all
// of them within 50 MB.
func TestImagesOverOpenAIRequestTotal(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 15*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Model: opencodetest.OpenAIModel, Timeout: 4 * time.Minute,
		Config: map[string]any{"compaction": map[string]any{"auto": false}}})
	var paths []string
	for i := range openAIImagesTotalCount {
		paths = append(paths, writeNoisyPNG(t, e.ProjectDir, fmt.Sprintf("shot%02d.png", i), uint64(100+i), 1300, 1200))
	}
	script := &openAIReadFilesScript{paths: paths}
	e.OpenAI.SetScript(script.answer)
	first, err := e.Prompt(ctx, "please look at the pictures "+markerReadFiles)
	if err != nil {
		t.Fatal(err)
	}
	sid := first.SessionID
	refused := ""
	for _, r := range e.OpenAI.AgentRequests() {
		ims := r.Parsed.Responses.Images()
		inTool := 0
		for _, im := range ims {
			if im.Tool {
				inTool++
			}
		}
		t.Logf("agent request: %d images (%d in function call outputs), %d bytes of images; %v %s", len(ims), inTool, imagesBytes(ims), r.Verdict, r.Error)
		if r.Verdict == mockopenai.Rejected {
			refused = r.Error
		}
	}
	const overTotal = "bytes of images a request. (mock stand-in text)"
	if !strings.HasSuffix(refused, overTotal) {
		t.Fatalf("the turn's request with the read images: refused with %q, want the mock's images-over-50-MB text", refused)
	}
	if msgs := (dataDir{t, e.DataDir()}).session(sid); len(msgs) > 0 {
		t.Logf("stored on the failed turn: %v", msgs[len(msgs)-1].Data["error"])
	}
	saved := saveData(t, e)
	before := resumeVerdict(ctx, t, e, openAICalls, sid, "go on")
	if !strings.HasSuffix(before, overTotal) {
		t.Fatalf("the resume of the session: %q, want the mock's images-over-50-MB text", before)
	}
	fs, out := sessionFindings(t, e, sid)
	if !hasCode(fs, scan.SF176, "error") || out.ExitCode != 1 {
		t.Fatalf("after the refused resume, scan does not report the images over the total\n%s", out)
	}
	for _, f := range fs {
		if f.Severity == "error" && !f.Fixable {
			t.Fatalf("an error sessfix cannot repair: %+v\n%s", f, out)
		}
	}
	fix := repairOpenAIImages(ctx, t, e, sid)

	// The other timing: right after the failed turn, on a copy of the
	// store as the turn left it, in a fresh OpenCode home.
	c := opencodetest.NewT(t, opencodetest.Options{Version: e.Version, Model: e.Model, Timeout: e.Timeout,
		Config: map[string]any{"compaction": map[string]any{"auto": false}}})
	if err := c.LoadData(saved); err != nil {
		t.Fatal(err)
	}
	c.ProjectDir = e.ProjectDir
	early, out := sessionFindings(t, c, sid)
	if !hasCode(early, scan.SF176, "error") {
		t.Fatalf("right after the failed turn, scan does not report the images over the total\n%s", out)
	}
	fixUndone(t, c, "right after the failed turn")
	firstFix := repairOpenAIImages(ctx, t, c, sid)
	recordWedged(t, wedgedRow{
		Case: "images-over-request-total-openai", Test: "TestImagesOverOpenAIRequestTotal", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: fmt.Sprintf("the read tool on %d noisy 1300×1200 PNGs in one step: their results are over OpenAI's 50 MB of images a request "+
			"(the mock's stand-in text: OpenAI documents none); compaction.auto false in the config; a real run, no edit", openAIImagesTotalCount),
		Before: rejectedAs(before), Scan: codes(codesWithSeverity(fs)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: &firstRow{Scan: codes(codesWithSeverity(early)), Fix: wroteMutations(firstFix.Stdout + firstFix.Stderr), After: "accepted"},
	})
}

// repairOpenAIImages repairs the session with default flags (`fix
// --yes`), wants shrinkImage among the repairs and nothing above info
// left, and resumes: the mock must accept, and the accepted requests must
// still send every image, each one decoding, all of them within OpenAI's
// 50 MB. It returns fix's result.
func repairOpenAIImages(ctx context.Context, t *testing.T, e *opencodetest.Env, sid string) *sfResult {
	t.Helper()
	fix, after := fixAndResumeOpenAI(ctx, t, e, sid, "shrinkImage", "what do the pictures show?")
	sent := 0
	for _, r := range after {
		if !r.Chat || r.Parsed == nil || r.Parsed.Responses == nil {
			continue
		}
		ims := r.Parsed.Responses.Images()
		sent = max(sent, len(ims))
		if total := imagesBytes(ims); total > mockopenai.ImageTotalBytesMax {
			t.Errorf("a request after the fix sends %d bytes of images", total)
		}
		for _, im := range ims {
			raw, err := base64.StdEncoding.DecodeString(im.Data)
			if err != nil {
				t.Errorf("%s: not base64: %v", im.Path, err)
				continue
			}
			if _, _, err := image.DecodeConfig(bytes.NewReader(raw)); err != nil {
				t.Errorf("%s: not an image: %v", im.Path, err)
			}
		}
	}
	if sent < openAIImagesTotalCount {
		t.Errorf("the resume sends %d images, want all %d kept", sent, openAIImagesTotalCount)
	}
	return fix
}

// fixAndResumeOpenAI repairs the session with default flags (`fix
// --yes`, whose output must name mutation), wants nothing above info left
// after it, and resumes with prompt: the OpenAI mock must accept. It
// returns fix's result and the mock's requests of the resume.
func fixAndResumeOpenAI(ctx context.Context, t *testing.T, e *opencodetest.Env, sid, mutation, prompt string) (*sfResult, []mockopenai.Request) {
	t.Helper()
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 || !strings.Contains(fix.Stdout+fix.Stderr, mutation) {
		t.Fatalf("fix --yes\n%s", fix)
	}
	if fs, out := sessionFindings(t, e, sid); len(fs) > 0 {
		for _, f := range fs {
			if f.Severity != "info" {
				t.Errorf("after the fix: %s %s %s\n%s", f.Severity, f.Code, f.Message, out)
			}
		}
	}
	n := len(e.OpenAI.Requests())
	if rej := resumeVerdict(ctx, t, e, openAICalls, sid, prompt); rej != "" {
		t.Fatalf("after sessfix fix the resume is refused: %s\n%s", rej, fix)
	}
	return fix, e.OpenAI.Requests()[n:]
}

// imagesBytes is the bytes the images hold together.
func imagesBytes(ims []mockopenai.RequestImage) int {
	n := 0
	for _, im := range ims {
		n += mockopenai.DecodedLen(im.Data)
	}
	return n
}

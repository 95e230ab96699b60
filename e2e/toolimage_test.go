//go:build acceptance

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
)

// markerRead makes the mock call the read tool on the test's images.
const markerRead = "[[read-images]]"

// readScript answers the first agent request whose prompt carries
// markerRead with thinking and one read call per path, in parallel; every
// other request as DefaultScript does.
func readScript(paths []string) mockanthropic.Script {
	return func(r *mockanthropic.Request) mockanthropic.Turn {
		req := r.Parsed
		if len(req.Tools) == 0 || len(req.PendingToolResults()) > 0 || !strings.Contains(req.LastUserText(), markerRead) {
			return mockanthropic.DefaultScript(r)
		}
		blocks := []mockanthropic.BlockSpec{{Type: "thinking", Text: "I will read the pictures."}}
		for _, p := range paths {
			blocks = append(blocks, mockanthropic.BlockSpec{Type: "tool_use", ToolName: "read", ToolInput: map[string]any{"filePath": p}})
		}
		return mockanthropic.Turn{Blocks: blocks}
	}
}

// toolImageCase is a turn in which the read tool returns images on
// OpenCode 1.1.65, which keeps them whole in the tool part (OBSERVED.md):
// one noisy PNG of w×h px, then others small ones, all read at once, which
// puts the request that sends them back over one of Anthropic's limits.
type toolImageCase struct {
	name, test, what string
	w, h, others     int
	// code, errorType and fix are the preflight's finding, the stored
	// error's class and the repair; limitText is a piece of the mock's
	// rejection.
	code, errorType, fix, limitText string
	// kept is how many images the resume after the fix still sends.
	kept int
	// cut, when positive, is how many bytes of the first image's file
	// are kept: a file cut short.
	cut int
}

var toolImageCases = []toolImageCase{
	{
		name: "read-tool-image-over-5mb", test: "TestToolImage", w: 1300, h: 1200,
		code: "SF170", errorType: "image_too_large", fix: "shrinkImage", kept: 1,
		what:      "the read tool on a 4.7 MB PNG: 1.1.65 keeps it whole (6.2 MB of base64) in the tool result; a real run, no edit",
		limitText: ".tool_result.content.1.image.source.base64: image exceeds 5 MB maximum: ",
	},
	{
		name: "read-tool-image-over-8000px", test: "TestToolImage", w: 9000, h: 60,
		code: "SF171", errorType: "image_dimensions", fix: "shrinkImage", kept: 1,
		what:      "the read tool on a 9000×60 px PNG (2.2 MB of base64): 1.1.65 keeps it whole in the tool result; a real run, no edit",
		limitText: ".tool_result.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels",
	},
	{
		name: "read-tool-image-over-2000px-among-22", test: "TestToolImage", w: 2400, h: 60, others: 21,
		code: "SF171", errorType: "image_dimensions", fix: "shrinkImage", kept: 22,
		what: "the read tool on a 2400×60 px PNG and 21 small ones at once: 1.1.65 keeps them whole, and the request that sends " +
			"them back holds 22 images, over 20, where each side may be 2000 px at most; a real run, no edit",
		limitText: ".tool_result.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels",
	},
	{
		name: "read-tool-image-header-cut-short", test: "TestToolImage", w: 64, h: 48, cut: 20,
		code: "SF173", errorType: "invalid_image", fix: "replaceMedia", kept: 0,
		what: "the read tool on a PNG file cut short inside its header (its first 20 bytes: the signature and part of the size): " +
			"1.1.65 keeps the bytes whole in the tool result, the provider cannot read them as an image; a real run, no edit",
		limitText: mockanthropic.TextInvalidImage,
	},
}

// TestToolImage: OpenCode 1.1.65's read tool keeps an image whole
// (OBSERVED.md) in the tool part's attachments and sends it inside the
// tool result, which the strict mock rejects when it is over 5 MB of
// base64 or 8000 px on a side, or 2000 px in a request of more than 20
// images, with the API's text for an image in a tool result, and when its
// file was cut short inside its header, with the API's text for data that
// is no image (SF173, replaceMedia). A real run,
// no edit: the turn that read the image fails, the session is bricked,
// every resume sends the image again. runToolImageCase repairs it in both
// timings.
func TestToolImage(t *testing.T) {
	parallel(t)
	for _, c := range toolImageCases {
		t.Run(c.name, func(t *testing.T) { runToolImageCase(t, c) })
	}
}

// TestToolImagesOverTheCount: the read tool on 101 small PNGs at once
// (OpenCode 1.1.65, a real run, no edit): the request that sends them back
// holds 101 images, over the API's 100, and the strict mock rejects it, as
// it does every resume. scan says so (SF172, a warning: sessfix cannot
// tell whether the model takes 100 or 600, the stored error can);
// `sessfix fix --yes`, default flags, prunes the tool results the way
// OpenCode does (markToolCompacted) until the request is within the stored
// limit, and the next resume is accepted with 100 images; in both timings
// (runToolImageCase).
func TestToolImagesOverTheCount(t *testing.T) {
	parallel(t)
	runToolImageCase(t, toolImageCase{
		name: "read-tool-images-over-the-count", test: "TestToolImagesOverTheCount", w: 16, h: 16, others: 100,
		code: "SF172", errorType: "too_many_images", fix: "markToolCompacted", kept: 100,
		what:      "the read tool on 101 small PNGs at once: the request that sends them back holds 101 images, over the API's 100; a real run, no edit",
		limitText: "too many images and documents: 101 + 0 > 100",
	})
}

// runToolImageCase records the case with a real run and repairs it, with
// default flags, in both timings:
//   - right after a failed resume: the resume is rejected again for the
//     images; scan predicts the error (the case's code on the tool part)
//     and maps the stored one (SF302); `sessfix fix --yes` repairs, and the
//     next resume is accepted with the images still sent in the tool
//     results, within the limits;
//   - before any resume, on a copy of the store as the run left it (the
//     run's own request after the read was the first to fail: the images
//     enter the history and brick it in the same turn): scan predicts the
//     text the mock answered, `fix --yes` repairs, undo restores the store
//     exactly, and the first resume after the fix is accepted.
func runToolImageCase(t *testing.T, c toolImageCase) {
	acquire(t)
	ctx := testCtx(t, 15*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_1, Timeout: 6 * time.Minute})
	var paths []string
	for i := range 1 + c.others {
		w, h, seed := c.w, c.h, uint64(11)
		if i > 0 {
			w, h, seed = 16, 16, 5
		}
		paths = append(paths, writeNoisyPNG(t, e.ProjectDir, fmt.Sprintf("shot%03d.png", i), seed, w, h))
	}
	if c.cut > 0 {
		if err := os.Truncate(paths[0], int64(c.cut)); err != nil {
			t.Fatal(err)
		}
	}
	e.Mock.SetScript(readScript(paths))
	res, err := e.Prompt(ctx, "What is in these pictures? "+markerRead)
	if err != nil {
		t.Fatal(err)
	}
	session := res.SessionID
	if session == "" {
		session = onlySession(t, e)
	}
	first := ""
	for _, call := range anthropicCalls(e) {
		if call.rejected && first == "" {
			first = call.err
		}
	}
	if !strings.Contains(first, c.limitText) {
		t.Fatalf("the request after the read was not rejected for the images: %q\n%s", first, res)
	}
	saved := saveData(t, e)

	rejected := resumeVerdict(ctx, t, e, anthropicCalls, session, "Look again.")
	if !strings.Contains(rejected, c.limitText) {
		t.Fatalf("the resume was not rejected for the images: %q", rejected)
	}
	pre, found := imageFindings(t, e, session, c.code, c.errorType, c.fix)
	if rejected != pre.ProviderError {
		t.Errorf("mock rejected with\n  %q\n%s predicted\n  %q", rejected, c.code, pre.ProviderError)
	}
	want := sentImages{min: c.kept, tool: true}
	fix := repairImages(ctx, t, e, session, want)

	firstRow := beforeAnyResume(ctx, t, e, saved, session, want, func(fs []finding) {
		pre := withCode(fs, c.code)
		if len(pre) != 1 || pre[0].Fix != c.fix || !strings.HasSuffix(first, strings.TrimPrefix(pre[0].ProviderError, pre[0].Index)) {
			t.Errorf("before any resume, scan does not predict the run's rejection\n  %q\nwith %s (%s)\n%v", first, c.code, c.fix, fs)
		}
	})
	recordWedged(t, wedgedRow{
		Case: c.name, Test: c.test, OpenCode: opencodetest.V1_1, Model: e.Model, Break: c.what,
		Before: rejectedAs(rejected), Scan: codes(codesWithSeverity(found)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: firstRow,
	})
}

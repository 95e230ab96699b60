//go:build acceptance

package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// markerReadBig makes the mock call the read tool on the test's image.
const markerReadBig = "[[read-big]]"

// readScript answers the first agent request whose prompt carries
// markerReadBig with thinking and a read call of path; every other request
// as DefaultScript does.
func readScript(path string) mockanthropic.Script {
	return func(r *mockanthropic.Request) mockanthropic.Turn {
		req := r.Parsed
		if len(req.Tools) == 0 || len(req.PendingToolResults()) > 0 || !strings.Contains(req.LastUserText(), markerReadBig) {
			return mockanthropic.DefaultScript(r)
		}
		return mockanthropic.Turn{Blocks: []mockanthropic.BlockSpec{
			{Type: "thinking", Text: "I will read the picture."},
			{Type: "tool_use", ToolName: "read", ToolInput: map[string]any{"filePath": path}},
		}}
	}
}

// toolImageCase is an image the read tool returns on OpenCode 1.1.65,
// which keeps it whole in the tool part (OBSERVED.md), over one of
// Anthropic's limits.
type toolImageCase struct {
	name, what string
	// w, h are the noisy PNG's size; code, errorType and limitText are the
	// preflight's finding, the stored error's class and a piece of the
	// mock's rejection.
	w, h                       int
	code, errorType, limitText string
}

var toolImageCases = []toolImageCase{
	{
		name: "read-tool-image-over-5mb", w: 1300, h: 1200, code: "SF170", errorType: "image_too_large",
		what:      "the read tool on a 4.7 MB PNG: 1.1.65 keeps it whole (6.2 MB of base64) in the tool result; a real run, no edit",
		limitText: ".tool_result.content.1.image.source.base64: image exceeds 5 MB maximum: ",
	},
	{
		name: "read-tool-image-over-8000px", w: 9000, h: 60, code: "SF171", errorType: "image_dimensions",
		what:      "the read tool on a 9000×60 px PNG (2.2 MB of base64): 1.1.65 keeps it whole in the tool result; a real run, no edit",
		limitText: ".tool_result.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels",
	},
}

// TestToolImage: OpenCode 1.1.65's read tool keeps an image whole
// (OBSERVED.md) in the tool part's attachments and sends it inside the
// tool result, which the strict mock rejects when it is over 5 MB of
// base64 or 8000 px on a side, with the API's text for an image in a tool
// result. A real run, no edit: the session is bricked, every resume sends
// the image again. scan predicts the error (SF170 or SF171 on the tool
// part) and maps the stored one (SF302); `sessfix fix --yes`, default
// flags, right after the failure, shrinks the attachment, and the next
// resume is accepted with the image still sent in the tool result, within
// the limits.
func TestToolImage(t *testing.T) {
	for _, c := range toolImageCases {
		t.Run(c.name, func(t *testing.T) { runToolImageCase(t, c) })
	}
}

func runToolImageCase(t *testing.T, c toolImageCase) {
	acquire(t)
	ctx := testCtx(t, 10*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_1, Timeout: 4 * time.Minute})
	png, err := base64.StdEncoding.DecodeString(storetest.NoisyPNG(t, 11, c.w, c.h))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.ProjectDir, "big.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	e.Mock.SetScript(readScript(path))
	res, err := e.Prompt(ctx, "What is in big.png? "+markerReadBig)
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
		t.Fatalf("the request after the read was not rejected for the image: %q\n%s", first, res)
	}
	rejected := resumeVerdict(ctx, t, e, anthropicCalls, session, "Look again.")
	if !strings.Contains(rejected, c.limitText) {
		t.Fatalf("the resume was not rejected for the image: %q", rejected)
	}
	pre, found := imageFindings(t, e, session, c.code, c.errorType)
	if rejected != pre.ProviderError {
		t.Errorf("mock rejected with\n  %q\n%s predicted\n  %q", rejected, c.code, pre.ProviderError)
	}
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 {
		t.Fatalf("fix\n%s", fix)
	}
	before := len(e.Mock.Requests())
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, session, "And now?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is rejected: %s\n%s", rej, fix)
	}
	// The picture is still sent in the tool result, within the limits
	// (the strict mock checks both).
	sent := false
	for _, call := range e.Mock.Requests()[before:] {
		if call.Parsed == nil {
			continue
		}
		for _, m := range call.Parsed.Messages {
			for _, b := range m.Content {
				sent = sent || (b.Type == "tool_result" && strings.Contains(string(b.Content), `"type":"image"`))
			}
		}
	}
	if !sent {
		t.Error("the resume's tool result holds no image any more")
	}
	recordWedged(t, wedgedRow{
		Case: c.name, Test: "TestToolImage", OpenCode: opencodetest.V1_1, Model: e.Model, Break: c.what,
		Before: rejectedAs(rejected), Scan: codes(codesWithSeverity(found)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
	})
}

// markerReadMany makes the mock call the read tool on every test image at
// once.
const markerReadMany = "[[read-many]]"

// readManyScript answers the first agent request whose prompt carries
// markerReadMany with thinking and one read call per path, in parallel;
// every other request as DefaultScript does.
func readManyScript(paths []string) mockanthropic.Script {
	return func(r *mockanthropic.Request) mockanthropic.Turn {
		req := r.Parsed
		if len(req.Tools) == 0 || len(req.PendingToolResults()) > 0 || !strings.Contains(req.LastUserText(), markerReadMany) {
			return mockanthropic.DefaultScript(r)
		}
		blocks := []mockanthropic.BlockSpec{{Type: "thinking", Text: "I will read every picture."}}
		for _, p := range paths {
			blocks = append(blocks, mockanthropic.BlockSpec{Type: "tool_use", ToolName: "read", ToolInput: map[string]any{"filePath": p}})
		}
		return mockanthropic.Turn{Blocks: blocks}
	}
}

// TestToolImagesOverTheCount: the read tool on 101 small PNGs at once
// (OpenCode 1.1.65, a real run, no edit): the request that sends them back
// holds 101 images, over the API's 100, and the strict mock rejects it, as
// it does every resume. scan says so (SF172, a warning: sessfix cannot
// tell whether the model takes 100 or 600, the stored error can);
// `sessfix fix --yes`, default flags, right after the failure, prunes the
// tool results the way OpenCode does (markToolCompacted) until the request
// is within the stored limit, and the next resume is accepted.
func TestToolImagesOverTheCount(t *testing.T) {
	acquire(t)
	ctx := testCtx(t, 10*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_1, Timeout: 6 * time.Minute})
	png, err := base64.StdEncoding.DecodeString(storetest.NoisyPNG(t, 5, 16, 16))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range 101 {
		p := filepath.Join(e.ProjectDir, fmt.Sprintf("shot%03d.png", i))
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	e.Mock.SetScript(readManyScript(paths))
	res, err := e.Prompt(ctx, "What is in these shots? "+markerReadMany)
	if err != nil {
		t.Fatal(err)
	}
	session := res.SessionID
	if session == "" {
		session = onlySession(t, e)
	}
	const limitText = "request contains 101 images, exceeding the maximum of 100 allowed per request"
	rejected := resumeVerdict(ctx, t, e, anthropicCalls, session, "Look again.")
	if rejected != limitText {
		t.Fatalf("the resume was not rejected for the image count: %q\n%s", rejected, res)
	}
	found, scan := scanStore(t, e, session)
	var stored *finding
	for i := range found {
		if found[i].Code == "SF302" {
			stored = &found[i]
		}
	}
	if stored == nil || stored.Fix != "markToolCompacted" || stored.ErrorType != "too_many_images" {
		t.Fatalf("scan does not map the stored error (SF302) to markToolCompacted\n%s", scan)
	}
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 {
		t.Fatalf("fix\n%s", fix)
	}
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, session, "And now?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is rejected: %s\n%s", rej, fix)
	}
	recordWedged(t, wedgedRow{
		Case: "read-tool-images-over-the-count", Test: "TestToolImagesOverTheCount", OpenCode: opencodetest.V1_1, Model: e.Model,
		Break:  "the read tool on 101 small PNGs at once: the request that sends them back holds 101 images, over the API's 100; a real run, no edit",
		Before: rejectedAs(rejected), Scan: codes(codesWithSeverity(found)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
	})
}

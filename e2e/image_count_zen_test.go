//go:build acceptance

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
)

// consoleImagesMax is OpenCode Console's images per request (users'
// reports, docs/preflight.md), the limit sessfix knows for the provider
// `opencode` and the mock enforces.
const consoleImagesMax = 50

// TestImageCountZen: a GPT model of OpenCode Zen (`opencode/gpt-5.2`, the
// Responses API through OpenCode Console), which takes at most 50 images a
// request. On OpenCode 1.18.33 the read tool opens one PNG, then 50 more
// in one step: the next request holds 51 in its function call outputs and
// the mock refuses it with Console's text, `request contains 51 images,
// exceeding the maximum of 50 allowed per request` (compaction.auto false,
// as for the other count cases). A real run, no edit.
//
// Both timings, default flags: scan reports SF172 as an error with
// Console's text for the next request, repaired by markToolCompacted;
// `fix --yes` marks the oldest tool result compacted, undo restores the
// store exactly, and after the fix made again the resume is accepted,
// sending the 50 images of the later step.
func TestImageCountZen(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 14*time.Minute)
	opts := opencodetest.Options{Version: opencodetest.V1_18, Model: opencodetest.ZenOpenAIModel, Timeout: 4 * time.Minute,
		Config: map[string]any{"compaction": map[string]any{"auto": false}}}
	e := opencodetest.NewT(t, opts)
	e.OpenAI.SetMaxConsoleImages(consoleImagesMax)
	var paths []string
	for i := range consoleImagesMax + 1 {
		paths = append(paths, writeNoisyPNG(t, e.ProjectDir, fmt.Sprintf("shot%02d.png", i), uint64(300+i), 40, 30))
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
		if r.Parsed == nil || r.Parsed.Responses == nil {
			continue
		}
		ims, inTool := r.Parsed.Responses.Images(), 0
		for _, im := range ims {
			if im.Tool {
				inTool++
			}
		}
		t.Logf("agent request: %d images (%d in function call outputs); %v %s", len(ims), inTool, r.Verdict, r.Error)
		if r.Verdict == mockopenai.Rejected && refused == "" {
			refused = r.Error
		}
	}
	if msgs := (dataDir{t, e.DataDir()}).session(sid); len(msgs) > 0 {
		t.Logf("stored on the failed turn: %v", msgs[len(msgs)-1].Data["error"])
	}
	want := mockopenai.MsgTooManyImagesConsole(consoleImagesMax+1, consoleImagesMax)
	if refused != want {
		t.Fatalf("the turn's request with %d images: refused with %q, want Console's count text\n%s", consoleImagesMax+1, refused, first)
	}
	saved := saveData(t, e)
	if before := resumeVerdict(ctx, t, e, openAICalls, sid, "go on"); before != refused {
		t.Fatalf("the resume: %q, want %q", before, refused)
	}
	fs := imageCountFound(t, e, sid, refused)
	fixUndone(t, e, "after the failed resume")
	fix := pruneAndResumeImages(ctx, t, e, sid, responsesImages, consoleImagesMax)

	// Right after the failed turn, on a copy of the store as it left it.
	c := opencodetest.NewT(t, opts)
	c.OpenAI.SetMaxConsoleImages(consoleImagesMax)
	if err := c.LoadData(saved); err != nil {
		t.Fatal(err)
	}
	c.ProjectDir = e.ProjectDir
	early := imageCountFound(t, c, sid, refused)
	fixUndone(t, c, "right after the failed turn")
	firstFix := pruneAndResumeImages(ctx, t, c, sid, responsesImages, consoleImagesMax)
	recordWedged(t, wedgedRow{
		Case: "image-count-zen", Test: "TestImageCountZen", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: fmt.Sprintf("OpenCode Zen's GPT model through OpenCode Console, which takes %d images a request; the read tool on one PNG, "+
			"then on %d more in one step; compaction.auto false in the config; a real run, no edit (the refusal's body and status are "+
			"OpenAI's, a stand-in: users quote Console's text only)", consoleImagesMax, consoleImagesMax),
		Before: rejectedAs(refused), Scan: codes(codesWithSeverity(fs)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: &firstRow{Scan: codes(codesWithSeverity(early)), Fix: wroteMutations(firstFix.Stdout + firstFix.Stderr), After: "accepted"},
	})
}

//go:build acceptance

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
	"github.com/sessfix/sessfix/pkg/scan"
)

// vllmImagesMax is the mock vLLM server's images per request.
const vllmImagesMax = 3

// TestImageCountVLLM: a vision model served by vLLM, added by the user as
// an OpenAI-compatible provider (npm @ai-sdk/openai-compatible), whose
// server takes at most 3 images a request. On OpenCode 1.18.33 the read
// tool opens one PNG, then three more in one step: the next request holds
// four (1.18.33 sends a tool result's images in a user message after the
// tool messages, "Attached media from tool result:") and the mock refuses
// it with vLLM's text, `At most 3 image(s) may be provided in one
// request.` (compaction.auto false, as for the other count cases). A real
// run, no edit. sessfix knows no count for such a server: only the stored
// refusal says the limit.
//
// Both timings, default flags: scan reports SF172 at the stored limit
// (markToolCompacted, the stored text as its provider error); `fix --yes`
// marks the oldest tool result compacted, undo restores the store
// exactly, and after the fix made again the resume is accepted, sending
// the three images of the later step.
func TestImageCountVLLM(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 12*time.Minute)
	opts := opencodetest.Options{Version: opencodetest.V1_18, Model: opencodetest.VLLMModel, Timeout: 3 * time.Minute,
		Config: map[string]any{"compaction": map[string]any{"auto": false}}}
	e := opencodetest.NewT(t, opts)
	e.OpenAI.SetMaxChatImages(vllmImagesMax)
	var paths []string
	for i := range vllmImagesMax + 1 {
		paths = append(paths, writeNoisyPNG(t, e.ProjectDir, fmt.Sprintf("shot%02d.png", i), uint64(200+i), 40, 30))
	}
	e.OpenAI.SetScript(vllmReadScript(paths))
	first, err := e.Prompt(ctx, "please look at the pictures "+markerReadFiles)
	if err != nil {
		t.Fatal(err)
	}
	sid := first.SessionID
	refused := ""
	for _, c := range openAICalls(e) {
		if c.rejected && refused == "" {
			refused = c.err
		}
	}
	if refused != mockopenai.MsgTooManyImagesVLLM(vllmImagesMax) {
		t.Fatalf("the turn's request with four images: refused with %q, want vLLM's count text\n%s", refused, first)
	}
	saved := saveData(t, e)
	if before := resumeVerdict(ctx, t, e, openAICalls, sid, "go on"); before != refused {
		t.Fatalf("the resume: %q, want %q", before, refused)
	}
	fs := imageCountFound(t, e, sid, refused)
	fixUndone(t, e, "after the failed resume")
	fix := pruneAndResumeImages(ctx, t, e, sid, completionsImages, vllmImagesMax)

	// Right after the failed turn, on a copy of the store as it left it.
	c := opencodetest.NewT(t, opencodetest.Options{Version: e.Version, Model: e.Model, Timeout: e.Timeout, Config: opts.Config})
	c.OpenAI.SetMaxChatImages(vllmImagesMax)
	if err := c.LoadData(saved); err != nil {
		t.Fatal(err)
	}
	c.ProjectDir = e.ProjectDir
	early := imageCountFound(t, c, sid, refused)
	fixUndone(t, c, "right after the failed turn")
	firstFix := pruneAndResumeImages(ctx, t, c, sid, completionsImages, vllmImagesMax)
	recordWedged(t, wedgedRow{
		Case: "image-count-vllm", Test: "TestImageCountVLLM", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: fmt.Sprintf("a vLLM vision model added as an OpenAI-compatible provider, its server taking %d images a request; "+
			"the read tool on one PNG, then on %d more in one step; compaction.auto false in the config; a real run, no edit", vllmImagesMax, vllmImagesMax),
		Before: rejectedAs(refused), Scan: codes(codesWithSeverity(fs)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: &firstRow{Scan: codes(codesWithSeverity(early)), Fix: wroteMutations(firstFix.Stdout + firstFix.Stderr), After: "accepted"},
	})
}

// vllmReadScript answers the agent's requests of the first turn: with
// none of its tool results yet, a read of paths[0]; with that one, reads
// of the others in one step; after them, the default answer. (The prompt
// is not the last user message here: 1.18.33 adds one after the tool
// results for their images.)
func vllmReadScript(paths []string) mockopenai.Script {
	return func(r *mockopenai.Request) mockopenai.Turn {
		if !r.Chat || r.Parsed == nil || r.Parsed.Completions == nil {
			return mockopenai.DefaultScript(r)
		}
		tools := 0
		for _, m := range r.Parsed.Completions.Messages {
			if m.Role == "tool" {
				tools++
			}
		}
		read := func(p string) mockopenai.Block {
			return mockopenai.Block{Type: mockopenai.BlockToolCall, ToolName: "read", ToolInput: map[string]any{"filePath": p}}
		}
		switch {
		case tools == 0 && strings.Contains(r.Parsed.Conversation().Prompt, markerReadFiles):
			return mockopenai.Turn{Blocks: []mockopenai.Block{read(paths[0])}}
		case tools == 1:
			var blocks []mockopenai.Block
			for _, p := range paths[1:] {
				blocks = append(blocks, read(p))
			}
			return mockopenai.Turn{Blocks: blocks}
		}
		return mockopenai.DefaultScript(r)
	}
}

// imageCountFound scans the session and wants SF172 at the limit: an
// error repaired by markToolCompacted whose provider error is the
// refusal's text (the stored one, or the preflight's in the same words).
func imageCountFound(t *testing.T, e *opencodetest.Env, sid, refused string) []finding {
	t.Helper()
	fs, out := sessionFindings(t, e, sid)
	count := withCode(fs, scan.SF172)
	if len(count) != 1 || count[0].Severity != "error" || count[0].Fix != "markToolCompacted" || count[0].ProviderError != refused {
		t.Fatalf("scan does not report SF172 with the refusal's text\n%s", out)
	}
	return fs
}

// pruneAndResumeImages repairs with default flags and resumes: the OpenAI
// mock must accept, and the resume's requests hold at most want images
// (images counts a request's), the later step's, none more.
func pruneAndResumeImages(ctx context.Context, t *testing.T, e *opencodetest.Env, sid string, images func(*mockopenai.Parsed) int, want int) *sfResult {
	t.Helper()
	fix, after := fixAndResumeOpenAI(ctx, t, e, sid, "markToolCompacted", "what do the pictures show?")
	most := 0
	for _, r := range after {
		if r.Parsed != nil {
			most = max(most, images(r.Parsed))
		}
	}
	if most != want {
		t.Errorf("the resume's requests hold at most %d images, want %d (the later step's)", most, want)
	}
	return fix
}

// completionsImages counts a Chat Completions request's images.
func completionsImages(p *mockopenai.Parsed) int { return p.Completions.Images() }

// responsesImages counts a Responses request's images.
func responsesImages(p *mockopenai.Parsed) int { return len(p.Responses.Images()) }

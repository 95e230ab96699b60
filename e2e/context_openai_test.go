//go:build acceptance

package e2e

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
	"github.com/sessfix/sessfix/pkg/scan"
)

// openAIReadFilesScript is readFilesScript for the OpenAI mock: agent
// requests whose prompt carries markerReadFiles get read calls of the
// test's files (the first file, then the others at once); every other
// request is DefaultScript's.
type openAIReadFilesScript struct {
	paths []string
	next  atomic.Int32
}

func (s *openAIReadFilesScript) answer(r *mockopenai.Request) mockopenai.Turn {
	c := r.Parsed.Conversation()
	if !r.Chat || !strings.Contains(c.Prompt, markerReadFiles) {
		return mockopenai.DefaultScript(r)
	}
	var blocks []mockopenai.Block
	if c.Reasoning {
		blocks = append(blocks, mockopenai.Block{Type: mockopenai.BlockReasoning, Text: "The user wants the notes read."})
	}
	read := func(p string) mockopenai.Block {
		return mockopenai.Block{Type: mockopenai.BlockToolCall, ToolName: "read", ToolInput: map[string]any{"filePath": p}}
	}
	switch {
	case s.next.CompareAndSwap(0, 1):
		return mockopenai.Turn{Blocks: append(blocks, read(s.paths[0]))}
	case s.next.CompareAndSwap(1, 2):
		for _, p := range s.paths[1:] {
			blocks = append(blocks, read(p))
		}
		return mockopenai.Turn{Blocks: blocks}
	}
	return mockopenai.DefaultScript(r)
}

// TestContextWindowOpenAI: TestContextWindow on the OpenAI family (the
// `openai` provider, the Responses API). A model with a 40,000-token window
// (limit.context in the config; the strict mock refuses a longer request
// with the Responses API's stream error `context_length_exceeded` "Your
// input exceeds the context window of this model…", which prints no
// window), `compaction.auto: false`, and a turn whose read results put the
// request over it: OpenCode 1.18.33 stores the provider's error and every
// prompt is refused. In both timings (right after a refused resume, and
// before any resume: contextFirst) scan reports SF174 (error, the window
// from the config), `sessfix fix --yes` marks old tool results compacted,
// undo restores the store exactly, and the resume is accepted within the
// window.
func TestContextWindowOpenAI(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 14*time.Minute)
	opts := opencodetest.Options{Version: opencodetest.V1_18, Model: opencodetest.OpenAIModel, Timeout: 3 * time.Minute,
		ModelLimits: map[string]map[string]int{opencodetest.OpenAIModel: {"context": contextWindow, "output": 4000}},
		Config:      map[string]any{"compaction": map[string]any{"auto": false}}}
	e := opencodetest.NewT(t, opts)
	e.OpenAI.SetMaxPromptTokens(contextWindow)
	script := &openAIReadFilesScript{paths: writeTextFiles(t, e.ProjectDir, 4, 500)}
	e.OpenAI.SetScript(script.answer)
	first, err := e.Prompt(ctx, "please read the notes "+markerReadFiles)
	if err != nil {
		t.Fatal(err)
	}
	sid := first.SessionID
	refused := ""
	for _, r := range e.OpenAI.AgentRequests() {
		t.Logf("agent request: %d tokens, %v %s", mockopenai.PromptTokens(r.Body), r.Verdict, r.Error)
		if r.Verdict == mockopenai.Rejected {
			refused = r.Error
		}
	}
	if refused != mockopenai.TextContextWindow {
		t.Fatalf("the turn's request over the window: refused with %q, want the Responses API's context error", refused)
	}
	d := dataDir{t, e.DataDir()}
	msgs := d.session(sid)
	stored := msgs[len(msgs)-1]
	t.Logf("stored: %v", stored.Data["error"])
	saved := saveData(t, e)
	before := resumeVerdict(ctx, t, e, openAICalls, sid, "go on")
	if before != mockopenai.TextContextWindow {
		t.Fatalf("the resume of the overflowed session: %q, want the Responses API's context error", before)
	}

	fs, out := sessionFindings(t, e, sid)
	if !hasCode(fs, scan.SF174, "error") || !hasCode(fs, scan.SF302, "error") || out.ExitCode != 1 {
		t.Fatalf("scan does not report the history over the window\n%s", out)
	}
	for _, f := range fs {
		if f.Severity == "error" && !f.Fixable {
			t.Fatalf("an error sessfix cannot repair: %+v\n%s", f, out)
		}
	}
	fixUndone(t, e, "after the refused resume")
	fix := pruneAndResume(ctx, t, e, sid, openAIContext)
	firstFix := contextFirst(ctx, t, e, opts, saved, sid, openAIContext)
	recordWedged(t, wedgedRow{
		Case: "context-window-exceeded-openai", Test: "TestContextWindowOpenAI", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: fmt.Sprintf("a %d-token window (limit.context in the config) and a turn whose read results put the request over it, with "+
			"compaction.auto false in the config; a real run, no edit: OpenCode stores the provider's context_length_exceeded and "+
			"every prompt is refused", contextWindow),
		Before: rejectedAs(before), Scan: codes(codesWithSeverity(fs)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted", First: firstFix,
	})
}

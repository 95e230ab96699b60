//go:build acceptance

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockgemini"
	"github.com/sessfix/sessfix/pkg/scan"
)

// geminiReadFilesScript is readFilesScript for the Gemini mock.
type geminiReadFilesScript struct {
	paths []string
	next  atomic.Int32
}

func (s *geminiReadFilesScript) answer(r *mockgemini.Request) mockgemini.Turn {
	if !r.Parsed.HasFunctions() || !strings.Contains(r.Parsed.LastUserText(), markerReadFiles) {
		return mockgemini.DefaultScript(r)
	}
	read := func(p string) mockgemini.Call {
		return mockgemini.Call{Name: "read", Args: map[string]any{"filePath": p}}
	}
	switch {
	case s.next.CompareAndSwap(0, 1):
		return mockgemini.Turn{Thought: "The user wants the notes read.", Calls: []mockgemini.Call{read(s.paths[0])}}
	case s.next.CompareAndSwap(1, 2):
		var calls []mockgemini.Call
		for _, p := range s.paths[1:] {
			calls = append(calls, read(p))
		}
		return mockgemini.Turn{Thought: "And the others.", Calls: calls}
	}
	return mockgemini.DefaultScript(r)
}

func geminiCalls(e *opencodetest.Env) []mockCall { return agentCalls(e.Gemini.Requests()) }

// TestContextWindowGemini: TestContextWindowOpenAI on Gemini
// (`google/gemini-3-flash-preview`): the strict mock refuses a request over
// the 40,000-token window with Gemini's 400 INVALID_ARGUMENT "The input
// token count (N) exceeds the maximum number of tokens allowed (M).", which
// prints the window. With `compaction.auto: false` OpenCode 1.18.33 stores
// it and every prompt is refused; in both timings (right after a refused
// resume, and before any resume: contextFirst) scan reports SF174,
// `sessfix fix --yes` repairs, undo is exact, and the resume is accepted
// within the window.
func TestContextWindowGemini(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 14*time.Minute)
	opts := opencodetest.Options{Version: opencodetest.V1_18, Model: opencodetest.GoogleModel, Timeout: 3 * time.Minute,
		ModelLimits: map[string]map[string]int{opencodetest.GoogleModel: {"context": contextWindow, "output": 4000}},
		Config:      map[string]any{"compaction": map[string]any{"auto": false}}}
	e := opencodetest.NewT(t, opts)
	e.Gemini.SetMaxPromptTokens(contextWindow)
	script := &geminiReadFilesScript{paths: writeTextFiles(t, e.ProjectDir, 4, 500)}
	e.Gemini.SetScript(script.answer)
	first, err := e.Prompt(ctx, "please read the notes "+markerReadFiles)
	if err != nil {
		t.Fatal(err)
	}
	sid := first.SessionID
	refused := ""
	for _, r := range e.Gemini.Requests() {
		if r.Chat {
			t.Logf("agent request: %d tokens, %v %s", mockgemini.PromptTokens(r.Body), r.Verdict, r.Error)
		}
		if r.Chat && r.Error != "" {
			refused = r.Error
		}
	}
	if !strings.HasPrefix(refused, "The input token count (") || !strings.HasSuffix(refused, fmt.Sprintf("allowed (%d).", contextWindow)) {
		t.Fatalf("the turn's request over the window: refused with %q, want Gemini's input token count error", refused)
	}
	saved := saveData(t, e)
	before := resumeVerdict(ctx, t, e, geminiCalls, sid, "go on")
	if !strings.HasPrefix(before, "The input token count (") {
		t.Fatalf("the resume of the overflowed session: %q, want Gemini's input token count error", before)
	}
	fs, out := sessionFindings(t, e, sid)
	if !hasCode(fs, scan.SF174, "error") || !hasCode(fs, scan.SF302, "error") || out.ExitCode != 1 {
		t.Fatalf("scan does not report the history over the window\n%s", out)
	}
	fix := pruneAndResume(ctx, t, e, sid, geminiContext)
	firstFix := contextFirst(ctx, t, e, opts, saved, sid, geminiContext)
	recordWedged(t, wedgedRow{
		Case: "context-window-exceeded-gemini", Test: "TestContextWindowGemini", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: fmt.Sprintf("a %d-token window (limit.context in the config) and a turn whose read results put the request over it, with "+
			"compaction.auto false in the config; a real run, no edit: OpenCode stores Gemini's input token count error and "+
			"every prompt is refused", contextWindow),
		Before: rejectedAs(countRe.ReplaceAllString(before, "The input token count (N)")), Scan: codes(codesWithSeverity(fs)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted", First: firstFix,
	})
}

var countRe = regexp.MustCompile(`^The input token count \(\d+\)`)

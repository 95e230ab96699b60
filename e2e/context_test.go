//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/mockgemini"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
	"github.com/sessfix/sessfix/internal/opencodetest/mockstream"
	"github.com/sessfix/sessfix/pkg/scan"
)

// markerReadFiles makes the mock read the test's text files: the first in
// one step, every other one at once in the next.
const markerReadFiles = "[[read-files]]"

// readFilesScript answers agent requests whose prompt carries
// markerReadFiles with read calls of the test's files (the first file,
// then the others in parallel); every other request is DefaultScript's.
type readFilesScript struct {
	paths []string
	next  atomic.Int32
}

func (s *readFilesScript) answer(r *mockanthropic.Request) mockanthropic.Turn {
	if !r.Chat || !strings.Contains(r.Parsed.LastUserText(), markerReadFiles) {
		return mockanthropic.DefaultScript(r)
	}
	var blocks []mockanthropic.BlockSpec
	if r.Parsed.ThinkingEnabled() {
		blocks = append(blocks, mockanthropic.BlockSpec{Type: "thinking", Text: "The user wants the notes read."})
	}
	read := func(p string) mockanthropic.BlockSpec {
		return mockanthropic.BlockSpec{Type: "tool_use", ToolName: "read", ToolInput: map[string]any{"filePath": p}}
	}
	switch {
	case s.next.CompareAndSwap(0, 1):
		return mockanthropic.Turn{Blocks: append(blocks, mockanthropic.BlockSpec{Type: "text", Text: "I will read the first file."}, read(s.paths[0]))}
	case s.next.CompareAndSwap(1, 2):
		blocks = append(blocks, mockanthropic.BlockSpec{Type: "text", Text: "I will read the other files."})
		for _, p := range s.paths[1:] {
			blocks = append(blocks, read(p))
		}
		return mockanthropic.Turn{Blocks: blocks}
	}
	return mockanthropic.DefaultScript(r)
}

// writeTextFiles writes n text files of lines lines each (about 43 kB for
// 500 lines) into dir.
func writeTextFiles(t *testing.T, dir string, n, lines int) []string {
	t.Helper()
	var paths []string
	for i := range n {
		var b strings.Builder
		for l := range lines {
			fmt.Fprintf(&b, "file %d line %04d: the quick brown fox jumps over the lazy dog, again and again.\n", i+1, l+1)
		}
		p := filepath.Join(dir, fmt.Sprintf("notes-%d.txt", i+1))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// contextWindow is the small model's window: the config's limit.context
// and the mock's MaxPromptTokens. OpenCode's system prompt and tools are
// about 7,600 of the mock's tokens, each file about 10,850: one read fits,
// four do not.
const contextWindow = 40000

var tokensRe = regexp.MustCompile(`\d+ tokens >`)

// sessionFindings scans the data dir and returns the findings on session.
func sessionFindings(t *testing.T, e *opencodetest.Env, session string) ([]finding, *sfResult) {
	t.Helper()
	res := sessfix(t, e, "scan", "--format", "json", e.DataDir())
	var doc scanDoc
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("scan JSON: %v\n%s", err, res)
	}
	var out []finding
	for _, f := range doc.Findings {
		if f.Session == session {
			out = append(out, f)
		}
	}
	return out, res
}

func hasCode(fs []finding, code, severity string) bool {
	for _, f := range fs {
		if f.Code == code && (severity == "" || f.Severity == severity) {
			return true
		}
	}
	return false
}

// TestContextWindow: a model with a 40,000-token window (limit.context in
// the config; the strict mock refuses a longer prompt with Anthropic's
// "prompt is too long: N tokens > M maximum"), and a turn whose read tool
// results put the request over it. Real OpenCode 1.18.33 by default
// compacts the session by itself (its compaction request sends tool
// results shortened) and answers: not dead, and sessfix reports nothing.
// With `compaction.auto: false` in the config it stores the provider's
// error as a ContextOverflowError and every prompt is refused: the session
// is dead. scan reports SF174 (error) and SF302 repaired through it;
// `sessfix fix --yes` with default flags marks old tool results compacted
// (OpenCode's own prune), undo restores the store exactly, and after the
// fix the resume is accepted within the window. Both timings: right after
// a refused resume, and before any resume on a copy of the store saved
// right after the overflowing turn (contextFirst).
func TestContextWindow(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 14*time.Minute)
	opts := opencodetest.Options{Version: opencodetest.V1_18, Timeout: 3 * time.Minute, ThinkingBudget: 1024,
		ModelLimits: map[string]map[string]int{opencodetest.DefaultModel: {"context": contextWindow, "output": 4000}}}
	e := opencodetest.NewT(t, opts)
	e.Mock.SetMaxPromptTokens(contextWindow)
	paths := writeTextFiles(t, e.ProjectDir, 4, 500)

	// OpenCode's default: the overflow makes it compact, and it goes on.
	script := &readFilesScript{paths: paths}
	e.Mock.SetScript(script.answer)
	res, err := e.Prompt(ctx, "please read the notes "+markerReadFiles)
	if err != nil {
		t.Fatal(err)
	}
	overflowed, compactions, lastChat := false, 0, mockanthropic.Rejected
	for _, r := range e.Mock.Requests() {
		overflowed = overflowed || r.Chat && strings.HasPrefix(r.Error, "prompt is too long:")
		if isCompactionRequest(&r) && r.Verdict == mockanthropic.Accepted {
			compactions++
		}
		if r.Chat {
			lastChat = r.Verdict
		}
	}
	if !overflowed || compactions == 0 || lastChat != mockanthropic.Accepted {
		t.Fatalf("with auto compaction: overflow %v, %d compactions accepted, last chat request %v; want OpenCode to compact and answer", overflowed, compactions, lastChat)
	}
	if fs, out := sessionFindings(t, e, res.SessionID); hasCode(fs, scan.SF174, "") || hasCode(fs, scan.SF302, "error") {
		t.Fatalf("a session OpenCode compacted by itself is reported\n%s", out)
	}

	// compaction.auto: false: the overflow is stored and the session is dead.
	if err := e.Configure(func(o *opencodetest.Options) { o.Config = map[string]any{"compaction": map[string]any{"auto": false}} }); err != nil {
		t.Fatal(err)
	}
	e.Mock.Reset()
	script = &readFilesScript{paths: paths}
	e.Mock.SetScript(script.answer)
	first, err := e.Prompt(ctx, "please read the notes again "+markerReadFiles)
	if err != nil {
		t.Fatal(err)
	}
	sid := first.SessionID
	saved := saveData(t, e)
	before := resumeVerdict(ctx, t, e, anthropicCalls, sid, "go on")
	if !strings.HasPrefix(before, "prompt is too long:") || !strings.HasSuffix(before, fmt.Sprintf("> %d maximum", contextWindow)) {
		t.Fatalf("the resume of the overflowed session: %q, want prompt is too long", before)
	}
	for _, r := range e.Mock.Requests() {
		if isCompactionRequest(&r) {
			t.Fatal("OpenCode compacted with compaction.auto false")
		}
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
	fix := pruneAndResume(ctx, t, e, sid, anthropicContext)
	opts.Config = map[string]any{"compaction": map[string]any{"auto": false}}
	firstFix := contextFirst(ctx, t, e, opts, saved, sid, anthropicContext)
	recordWedged(t, wedgedRow{
		Case: "context-window-exceeded", Test: "TestContextWindow", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: fmt.Sprintf("a %d-token window (limit.context in the config) and a turn whose read results put the request over it, with "+
			"compaction.auto false in the config; a real run, no edit: OpenCode stores the overflow and every prompt is refused "+
			"(with auto compaction it compacts and goes on by itself)", contextWindow),
		Before: rejectedAs(tokensRe.ReplaceAllString(before, "N tokens >")), Scan: codes(codesWithSeverity(fs)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted", First: firstFix,
	})
}

// refusedCompactions answers OpenCode's compaction requests with an error
// OpenCode does not take for an overflow (standing for any such refusal:
// SF304); every other request is next's.
func refusedCompactions(next mockanthropic.Script) mockanthropic.Script {
	return func(r *mockanthropic.Request) mockanthropic.Turn {
		if isCompactionRequest(r) {
			return mockanthropic.Turn{Error: &mockanthropic.APIError{Status: 400, Type: "invalid_request_error", Message: "the test's provider refuses compaction requests"}}
		}
		return next(r)
	}
}

// TestContextWindowFailedCompaction: the same turn on the 40,000-token
// model with OpenCode's default config, but the provider refuses the
// compaction the overflow starts. OpenCode 1.18.33 is then stuck in its
// compaction (SF304). The compaction part keeps the tail OpenCode chose,
// and once the compaction is given up the next request sends that tail,
// not the turns before it: within the window. scan reports SF304 and not
// SF174 (the window from the config's limit.context, the request as
// pkg/sent builds it); `sessfix fix --yes` gives the compaction up and
// prunes nothing, undo is exact, and the resume is accepted without the
// read results and without a compaction run.
func TestContextWindowFailedCompaction(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 12*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 3 * time.Minute, ThinkingBudget: 1024,
		ModelLimits: map[string]map[string]int{opencodetest.DefaultModel: {"context": contextWindow, "output": 4000}}})
	e.Mock.SetMaxPromptTokens(contextWindow)
	script := &readFilesScript{paths: writeTextFiles(t, e.ProjectDir, 4, 500)}
	e.Mock.SetScript(refusedCompactions(script.answer))
	first, err := e.Prompt(ctx, "please read the notes "+markerReadFiles)
	if err != nil {
		t.Fatal(err)
	}
	sid := first.SessionID
	d := dataDir{t, e.DataDir()}
	if !compacted(d.session(sid), false) {
		t.Fatal("the refused compaction left no failed summary message")
	}
	n := len(e.Mock.Requests())
	if _, err := e.Resume(ctx, sid, "go on"); err != nil {
		t.Fatal(err)
	}
	chats, refused, refusal := 0, 0, ""
	for _, r := range e.Mock.Requests()[n:] {
		if r.Chat {
			chats++
		}
		if isCompactionRequest(&r) && r.Verdict != mockanthropic.Accepted {
			refused++
			refusal = r.Error
		}
	}
	if chats != 0 || refused == 0 {
		t.Fatalf("the resume sent %d chat requests and %d refused compactions; want the compaction run again and no chat", chats, refused)
	}

	fs, out := sessionFindings(t, e, sid)
	if !hasCode(fs, scan.SF304, "error") || hasCode(fs, scan.SF174, "") || out.ExitCode != 1 {
		t.Fatalf("scan: want the stuck compaction (SF304) and no history over the window (SF174)\n%s", out)
	}
	state := storeState(t, d)
	if fix := sessfix(t, e, "fix", "--yes", e.DataDir()); fix.ExitCode != 0 {
		t.Fatalf("fix --yes\n%s", fix)
	}
	if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 || storeState(t, d) != state {
		t.Fatalf("undo did not restore the store exactly\n%s", res)
	}
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 || strings.Contains(fix.Stdout+fix.Stderr, "markToolCompacted") || !strings.Contains(fix.Stdout+fix.Stderr, "finishFailedCompaction") {
		t.Fatalf("fix --yes after undo\n%s", fix)
	}
	n = len(e.Mock.Requests())
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, sid, "what do the notes say?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is refused: %s", rej)
	}
	for _, r := range e.Mock.Requests()[n:] {
		if isCompactionRequest(&r) {
			t.Error("after the fix the resume ran a compaction")
		}
		if tok := mockanthropic.PromptTokens(r.Body); r.Chat && tok > contextWindow*9/10 {
			t.Errorf("a request after the fix holds %d tokens, over the margin", tok)
		}
		// The turns before the compaction's kept tail are not sent.
		if r.Chat && strings.Contains(string(r.Body), "file 1 line 0001") {
			t.Error("a request after the fix sends the read results from before the compaction's tail")
		}
	}
	recordWedged(t, wedgedRow{
		Case: "context-window-refused-compaction", Test: "TestContextWindowFailedCompaction", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: fmt.Sprintf("a %d-token window (limit.context in the config), a turn whose read results put the request over it, and a "+
			"provider that refuses the compaction OpenCode then runs; a real run, no edit: OpenCode runs the compaction again before "+
			"every prompt; once it is given up, the next request sends the tail the compaction kept, within the window", contextWindow),
		Before: "stuck: only the compaction request is sent, " + rejectedAs(refusal), Scan: codes(codesWithSeverity(fs)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
	})
}

// TestContextWindow11: TestContextWindow on OpenCode 1.1.65 (JSON
// storage) with its default config. 1.1.65 does not compact on a refused
// overflow (OBSERVED.md, "Compaction"): it stores the provider's error as
// a ContextOverflowError and the next prompt is sent, and refused, the
// same way: dead. It sends a tool result whose state.time.compacted is set
// as `[Old tool result content cleared]` (read from its binary), so the
// same repair applies, in both timings (right after a refused resume, and
// before any resume: contextFirst): scan reports SF174, `sessfix fix
// --yes` marks old results compacted, undo is exact, and the resume is
// accepted within the window.
func TestContextWindow11(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 14*time.Minute)
	opts := opencodetest.Options{Version: opencodetest.V1_1, Timeout: 3 * time.Minute, ThinkingBudget: 1024,
		ModelLimits: map[string]map[string]int{opencodetest.DefaultModel: {"context": contextWindow, "output": 4000}}}
	e := opencodetest.NewT(t, opts)
	e.Mock.SetMaxPromptTokens(contextWindow)
	script := &readFilesScript{paths: writeTextFiles(t, e.ProjectDir, 4, 500)}
	e.Mock.SetScript(script.answer)
	first, err := e.Prompt(ctx, "please read the notes "+markerReadFiles)
	if err != nil {
		t.Fatal(err)
	}
	sid := first.SessionID
	overflowed := false
	for _, r := range e.Mock.Requests() {
		overflowed = overflowed || r.Chat && strings.HasPrefix(r.Error, "prompt is too long:")
		if isCompactionRequest(&r) {
			t.Fatal("OpenCode 1.1.65 compacted on the overflow")
		}
	}
	if !overflowed {
		t.Fatal("no request over the window was refused")
	}
	saved := saveData(t, e)
	before := resumeVerdict(ctx, t, e, anthropicCalls, sid, "go on")
	if !strings.HasPrefix(before, "prompt is too long:") || !strings.HasSuffix(before, fmt.Sprintf("> %d maximum", contextWindow)) {
		t.Fatalf("the resume of the overflowed session: %q, want prompt is too long", before)
	}
	fs, out := sessionFindings(t, e, sid)
	if !hasCode(fs, scan.SF174, "error") || !hasCode(fs, scan.SF302, "error") || out.ExitCode != 1 {
		t.Fatalf("scan does not report the history over the window\n%s", out)
	}
	fix := pruneAndResume(ctx, t, e, sid, anthropicContext)
	firstFix := contextFirst(ctx, t, e, opts, saved, sid, anthropicContext)
	recordWedged(t, wedgedRow{
		Case: "context-window-exceeded-1.1", Test: "TestContextWindow11", OpenCode: opencodetest.V1_1, Model: e.Model,
		Break: fmt.Sprintf("a %d-token window (limit.context in the config) and a turn whose read results put the request over it, "+
			"default config; a real run, no edit: 1.1.65 stores the overflow, does not compact, and every prompt is refused", contextWindow),
		Before: rejectedAs(tokensRe.ReplaceAllString(before, "N tokens >")), Scan: codes(codesWithSeverity(fs)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted", First: firstFix,
	})
}

// contextMock is what the context-window tests read of the Env's mock:
// its agent calls, the bodies of its chat requests in order, and its
// token count of a body.
type contextMock struct {
	calls  func(*opencodetest.Env) []mockCall
	bodies func(*opencodetest.Env) [][]byte
	tokens func([]byte) int
	// window makes the Env's mock refuse a request over n tokens.
	window func(e *opencodetest.Env, n int)
}

var (
	anthropicContext = contextMock{anthropicCalls, func(e *opencodetest.Env) [][]byte { return chatBodies(e.Mock.Requests()) }, mockanthropic.PromptTokens,
		func(e *opencodetest.Env, n int) { e.Mock.SetMaxPromptTokens(n) }}
	openAIContext = contextMock{openAICalls, func(e *opencodetest.Env) [][]byte { return chatBodies(e.OpenAI.Requests()) }, mockopenai.PromptTokens,
		func(e *opencodetest.Env, n int) { e.OpenAI.SetMaxPromptTokens(n) }}
	geminiContext = contextMock{geminiCalls, func(e *opencodetest.Env) [][]byte { return chatBodies(e.Gemini.Requests()) }, mockgemini.PromptTokens,
		func(e *opencodetest.Env, n int) { e.Gemini.SetMaxPromptTokens(n) }}
)

// contextFirst is the repair before any resume: a fresh OpenCode home of
// opts (the test's version, model, limits and config) gets a copy of the
// data dir saved right after the overflowing turn (in e's project
// directory, where OpenCode resumes it), and its mock the same window.
// scan must report SF174 as an error, `fix --yes` must change the store
// and `undo --last` restore it exactly, and pruneAndResume repairs again
// and wants the first resume accepted within the window. It returns the
// timing's cell of the case's row.
func contextFirst(ctx context.Context, t *testing.T, e *opencodetest.Env, opts opencodetest.Options, saved, sid string, m contextMock) *firstRow {
	t.Helper()
	b := opencodetest.NewT(t, opts)
	if err := b.LoadData(saved); err != nil {
		t.Fatal(err)
	}
	b.ProjectDir = e.ProjectDir
	m.window(b, contextWindow)
	fs, out := sessionFindings(t, b, sid)
	if !hasCode(fs, scan.SF174, "error") {
		t.Fatalf("before any resume, scan does not report the history over the window\n%s", out)
	}
	fixUndone(t, b, "before any resume")
	fix := pruneAndResume(ctx, t, b, sid, m)
	return &firstRow{Scan: codes(codesWithSeverity(fs)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted"}
}

// chatBodies are the bodies of a mock's chat requests, in order.
func chatBodies[P, A any](rs []mockstream.Call[P, A]) [][]byte {
	var out [][]byte
	for _, r := range rs {
		if r.Chat {
			out = append(out, r.Body)
		}
	}
	return out
}

// fixUndone runs `fix --yes` on the Env's data dir (when names the
// timing in failures), wants it to change the store, and `undo --last` to
// restore it exactly.
func fixUndone(t *testing.T, e *opencodetest.Env, when string) {
	t.Helper()
	d := dataDir{t, e.DataDir()}
	state := storeState(t, d)
	if fix := sessfix(t, e, "fix", "--yes", e.DataDir()); fix.ExitCode != 0 || storeState(t, d) == state {
		t.Fatalf("fix --yes %s\n%s", when, fix)
	}
	if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 || storeState(t, d) != state {
		t.Fatalf("undo did not restore the store exactly\n%s", res)
	}
}

// pruneAndResume repairs an overflowed session with default flags (`fix
// --yes`, which must prune with markToolCompacted), wants neither SF174
// nor SF302 above info after it, and resumes: the mock must accept, and
// every chat request after the fix must be within the margin of the
// window and carry the pruned results as OpenCode's placeholder (the
// history is sent whole). It returns fix's result.
func pruneAndResume(ctx context.Context, t *testing.T, e *opencodetest.Env, sid string, m contextMock) *sfResult {
	t.Helper()
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 || !strings.Contains(fix.Stdout+fix.Stderr, "markToolCompacted") {
		t.Fatalf("fix --yes\n%s", fix)
	}
	if fs, out := sessionFindings(t, e, sid); hasCode(fs, scan.SF174, "") || hasCode(fs, scan.SF302, "error") || hasCode(fs, scan.SF302, "warning") {
		t.Fatalf("after the fix\n%s", out)
	}
	n := len(m.bodies(e))
	if rej := resumeVerdict(ctx, t, e, m.calls, sid, "what do the notes say?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is refused: %s", rej)
	}
	for _, b := range m.bodies(e)[n:] {
		if tok := m.tokens(b); tok > contextWindow*9/10 {
			t.Errorf("a request after the fix holds %d tokens, over the margin", tok)
		}
		if !bytes.Contains(b, []byte("[Old tool result content cleared]")) {
			t.Error("a request after the fix does not carry the pruned tool results as OpenCode's placeholder")
		}
	}
	return fix
}
